package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "detokenize", mixinStandardHelpOptions = true, description = "Prints the text of token ids.")
final class DetokenizeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("detokenize is not implemented yet");
    }
}
