package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "bench", mixinStandardHelpOptions = true, description = "Measures prompt processing and generation speed.")
final class BenchCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("bench is not implemented yet");
    }
}
