package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "devices", mixinStandardHelpOptions = true, description = "Lists OpenCL platforms and devices.")
final class DevicesCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("devices is not implemented yet");
    }
}
