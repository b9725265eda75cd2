package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "tokenize", mixinStandardHelpOptions = true, description = "Prints the token ids of a text.")
final class TokenizeCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("tokenize is not implemented yet");
    }
}
