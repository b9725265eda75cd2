package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "verify", mixinStandardHelpOptions = true, description = "Compares the OpenCL backend with the CPU, op by op.")
final class VerifyCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("verify is not implemented yet");
    }
}
