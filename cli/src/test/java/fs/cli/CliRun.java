package fs.cli;

import fs.ProcessOutput;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** One run of the fs command line in this JVM, with what it printed. */
record CliRun(int exitCode, String out, String err) {

    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new CliRun(exit, out.toString(), err.toString());
    }

    /**
     * One run in a JVM of its own whose HF_* variables are {@code hub}'s alone: commands take the hub and its cache
     * from the environment, which a process cannot change for itself. The JVM's incubator warning is left out of err.
     */
    static CliRun inChildJvm(Map<String, String> hub, String... args) throws IOException, InterruptedException {
        return inChildJvm(Path.of("").toAbsolutePath(), hub, args);
    }

    /** {@link #inChildJvm(Map, String...)} started in {@code workingDirectory}, for relative paths. */
    static CliRun inChildJvm(Path workingDirectory, Map<String, String> hub, String... args)
            throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElseThrow();
        List<String> command = new ArrayList<>(List.of(java, "--add-modules", "jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), "fs.cli.Main"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(workingDirectory.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("HF_"));
        builder.environment().putAll(hub);
        Process fs = builder.start();
        fs.getOutputStream().close(); // nothing on stdin
        CompletableFuture<String> out = ProcessOutput.text(fs.getInputStream());
        CompletableFuture<String> err = ProcessOutput.text(fs.getErrorStream());
        if (!fs.waitFor(60, TimeUnit.SECONDS)) {
            fs.destroyForcibly();
            throw new AssertionError("fs " + String.join(" ", args) + " did not finish in 60 s");
        }
        return new CliRun(fs.exitValue(), out.join(),
                err.join().replaceFirst("WARNING: Using incubator modules: jdk.incubator.vector\\R", ""));
    }

    static String ids(int[] ids) {
        StringBuilder s = new StringBuilder();
        for (int id : ids) s.append(s.isEmpty() ? "" : ",").append(id);
        return s.toString();
    }
}
