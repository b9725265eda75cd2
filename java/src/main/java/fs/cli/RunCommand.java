package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "run", mixinStandardHelpOptions = true, description = "Generates text from a prompt.")
final class RunCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("run is not implemented yet");
    }
}
