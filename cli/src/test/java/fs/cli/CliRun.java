package fs.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One run of the fs command line in this JVM, with what it printed. */
record CliRun(int exitCode, String out, String err) {

    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new CliRun(exit, out.toString(), err.toString());
    }

    static String ids(int[] ids) {
        StringBuilder s = new StringBuilder();
        for (int id : ids) s.append(s.isEmpty() ? "" : ",").append(id);
        return s.toString();
    }
}
