package fs.cli;

import fs.FsException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code fs} command line: results on stdout, logs and errors on stderr, one line per error. */
@Command(
        name = "fs",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Runs Qwen3 models from Hugging Face checkpoints on the CPU (Vector API) or OpenCL.",
        subcommands = {
            InspectCommand.class,
            TokenizeCommand.class,
            DetokenizeCommand.class,
            RunCommand.class,
            ChatCommand.class,
            LogitsCommand.class,
            BenchCommand.class,
            DevicesCommand.class,
            VerifyCommand.class,
        })
public final class Main implements Runnable {

    public static void main(String[] args) {
        // UTF-8 whatever the locale: generated text and token pieces are Unicode, and '?' would lose them.
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
        int exit = execute(out, err, args);
        System.exit(exit);
    }

    /** Runs one command line with the given streams and returns its exit code; never throws. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new Main());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("fs: " + describe(e));
            if (System.getenv("FS_DEBUG") != null) e.printStackTrace(commandLine.getErr());
            commandLine.getErr().flush();
            return 1;
        });
        cli.setParameterExceptionHandler((e, args1) -> {
            CommandLine command = e.getCommandLine();
            command.getErr().println("fs: " + e.getMessage() + " (see '" + command.getCommandSpec().qualifiedName()
                    + " --help')");
            command.getErr().flush();
            return 2;
        });
        try {
            return cli.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** One line that tells the user what happened, without a stack trace. */
    static String describe(Throwable e) {
        if (e instanceof FsException) return e.getMessage();
        if (e instanceof OutOfMemoryError) {
            return "out of memory (" + e.getMessage() + "); try a smaller --ctx or give the JVM more heap with FS_JAVA_OPTS=-Xmx…";
        }
        String message = e.getMessage();
        return "internal error: " + e.getClass().getSimpleName() + (message == null ? "" : ": " + message)
                + " (set FS_DEBUG=1 for the stack trace)";
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(new CommandLine(this), "a command is required");
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = Main.class.getPackage().getImplementationVersion();
            return new String[] {"fs " + (version == null ? "dev" : version) + " (Java " + Runtime.version() + ")"};
        }
    }
}
