package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "logits", mixinStandardHelpOptions = true, description = "Prints the top logits at every position.")
final class LogitsCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("logits is not implemented yet");
    }
}
