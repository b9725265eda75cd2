package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "inspect", mixinStandardHelpOptions = true, description = "Shows a checkpoint's config and tensors.")
final class InspectCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("inspect is not implemented yet");
    }
}
