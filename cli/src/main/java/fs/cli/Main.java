package fs.cli;

import fs.FsException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/** The {@code fs} command line: results on stdout, logs and errors on stderr, one line per error. */
@Command(
        name = "fs",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Runs Qwen3 models from Hugging Face checkpoints on the CPU (Vector API) or OpenCL.",
        footer = "%nSee 'fs COMMAND --help' for a command's options, e.g. fs run --help.")
public final class Main implements Callable<Integer> {
    /**
     * The commands, in the order {@code fs --help} lists them. They are not in the annotation: picocli reads every
     * option of every command it is given (310 ms of CPU time before a first token, interpreted: picocli's classes
     * are too old for the AOT cache), where reading one command takes 215 ms (see {@link #commandLine(String...)}).
     */
    static final List<Class<?>> COMMANDS = List.of(
            InspectCommand.class,
            TokenizeCommand.class,
            DetokenizeCommand.class,
            RunCommand.class,
            ChatCommand.class,
            LogitsCommand.class,
            BenchCommand.class,
            PerplexityCommand.class,
            DevicesCommand.class,
            VerifyCommand.class,
            ServeCommand.class,
            PullCommand.class,
            ListCommand.class,
            RmCommand.class,
            QuantizeCommand.class,
            ImatrixCommand.class,
            EmbedCommand.class,
            RerankCommand.class,
            CommandLine.HelpCommand.class);

    /**
     * The exit status of a command whose reader went away (`fs run … | head`): what a Unix tool killed by SIGPIPE
     * reports (128 + 13), so that a script with pipefail can tell it from a finished run.
     */
    static final int BROKEN_PIPE_EXIT = 141;

    public static void main(String[] args) {
        LauncherStderr.restore();
        int exit = execute(strictOutput(new FileOutputStream(FileDescriptor.out)),
                new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true), args);
        System.exit(exit);
    }

    /**
     * The writer for results: UTF-8 whatever the locale (generated text is Unicode, and '?' would lose it), and a
     * failed write throws {@link StrictOutputStream.WriteFailedException} rather than being forgotten.
     */
    static PrintWriter strictOutput(OutputStream stdout) {
        return new PrintWriter(new OutputStreamWriter(new StrictOutputStream(stdout), StandardCharsets.UTF_8), true);
    }

    /** Runs one command line with the given streams and returns its exit code; never throws. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = commandLine(args);
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> failed(e, parseResult, err));
        cli.setExecutionStrategy(parsed -> {
            try {
                return new CommandLine.RunLast().execute(parsed);
            } catch (StrictOutputStream.WriteFailedException e) {
                return failed(e, parsed, err); // printing --help or --version, which picocli does outside the command
            }
        });
        cli.setParameterExceptionHandler((e, args1) -> {
            CommandLine command = e.getCommandLine();
            command.getErr().println(usageErrorLine(UsageErrors.describe(e), command.getCommandSpec().qualifiedName()));
            command.getErr().flush();
            return 2;
        });
        int exit;
        try {
            exit = cli.execute(args);
            try {
                out.flush(); // the last text, if it did not end a line, is written only now, and may fail only now
            } catch (StrictOutputStream.WriteFailedException e) {
                if (exit == 0) exit = failed(e, null, err); // else the command's failure was reported already
            }
        } catch (RuntimeException | Error e) {
            // Errors (a fault in mapped memory, out of memory, a stack overflow) pass picocli's handler by.
            exit = failed(e, cli.getParseResult(), err);
        }
        err.flush();
        return exit;
    }

    /** Every command, read as fs reads a command line. */
    static CommandLine commandLine() {
        return commandLine(new String[0]);
    }

    /**
     * The commands for {@code args}, read as fs reads a command line: the one command the first argument names alone
     * (its options are all that such a line can use), every command otherwise ({@code fs --help}, {@code fs help
     * run}, a misspelt command, which picocli answers with the commands it knows).
     */
    static CommandLine commandLine(String... args) {
        CommandLine cli = new CommandLine(new Main());
        Class<?> named = args.length == 0 ? null : commandNamed(args[0]);
        for (Class<?> command : named == null ? COMMANDS : List.of(named)) cli.addSubcommand(command);
        // llama.cpp's flags are words after one dash (-hf, -ngl, -cnv, -fa): read as clusters of one-letter options
        // they would silently mean something else (-hf as -h -f prints the help), so no argument is a cluster here.
        cli.setPosixClusteredShortOptionsAllowed(false);
        return cli;
    }

    /** The command (other than help, which needs the others) that {@code name} names, or null. */
    private static Class<?> commandNamed(String name) {
        for (Class<?> command : COMMANDS) {
            if (command == CommandLine.HelpCommand.class) continue;
            Command annotation = command.getAnnotation(Command.class);
            if (annotation.name().equals(name) || List.of(annotation.aliases()).contains(name)) return command;
        }
        return null;
    }

    /** {@code fs: <what is wrong> (see 'fs run --help')}, the pointer after a semicolon where a parenthesis ends it. */
    static String usageErrorLine(String wrong, String command) {
        String help = "see '" + command + " --help'";
        return "fs: " + wrong + (wrong.endsWith(")") ? "; " + help : " (" + help + ")");
    }

    /** Reports a failed command in at most one line on {@code err} and returns its exit code. */
    private static int failed(Throwable e, ParseResult parsed, PrintWriter err) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof StrictOutputStream.WriteFailedException write) {
                if (write.brokenPipe()) return BROKEN_PIPE_EXIT; // the reader has what it wanted: nothing to say
                err.println("fs: cannot write the output: " + write.reason());
                err.flush();
                return 1;
            }
        }
        // A weights file that changed under the mapping explains whatever followed: a fault, NaNs, a bad token.
        Optional<Path> changed = changedModelFile(parsed);
        Throwable shown = changed.isPresent() && !(e instanceof ModelFileChangedException)
                ? new ModelFileChangedException(changed.get(), e) : e;
        err.println("fs: " + describe(shown));
        if (System.getenv("FS_DEBUG") != null) e.printStackTrace(err);
        err.flush();
        return 1;
    }

    /** The first weights file the executed command mapped and that changed since, if any. */
    private static Optional<Path> changedModelFile(ParseResult parsed) {
        for (ParseResult p = parsed; p != null; p = p.subcommand()) {
            for (CommandSpec mixin : p.commandSpec().mixins().values()) {
                if (mixin.userObject() instanceof ModelOptions options) {
                    Optional<Path> changed = options.changedFile();
                    if (changed.isPresent()) return changed;
                }
            }
        }
        return Optional.empty();
    }

    /** One line that tells the user what happened, without a stack trace. */
    static String describe(Throwable e) {
        if (e instanceof FsException || e instanceof ModelFileChangedException) return e.getMessage();
        if (e instanceof OutOfMemoryError) {
            return "out of memory (" + e.getMessage() + "); try a smaller --ctx or give the JVM more heap with FS_JAVA_OPTS=-Xmx…";
        }
        if (e instanceof StackOverflowError) {
            return "internal error: the stack overflowed (set FS_DEBUG=1 for the stack trace; FS_JAVA_OPTS=-Xss… "
                    + "gives threads more)";
        }
        String message = e.getMessage();
        return "internal error: " + e.getClass().getSimpleName() + (message == null ? "" : ": " + message)
                + " (set FS_DEBUG=1 for the stack trace)";
    }

    @Spec
    CommandSpec spec;

    /**
     * {@code fs} alone: the commands, as {@code fs --help} lists them, on stderr (no command ran, so nothing is a
     * result), and the exit status of a usage error.
     */
    @Override
    public Integer call() {
        CommandLine fs = spec.commandLine();
        fs.usage(fs.getErr());
        fs.getErr().println("fs: a command is required");
        return 2;
    }

    /** The project version and the commit it was built from, as Maven wrote them into the jar. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws IOException {
            Properties build = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("/fs/build.properties")) {
                if (in != null) build.load(in);
            }
            String version = build.getProperty("version", "dev");
            String commit = build.getProperty("commit", "");
            return new String[] {"fs " + version + " (" + (commit.isBlank() ? "unknown commit" : "commit " + commit)
                    + ", Java " + Runtime.version() + ")"};
        }
    }
}
