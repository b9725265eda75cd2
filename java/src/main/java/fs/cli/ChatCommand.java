package fs.cli;

import fs.FsException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

@Command(name = "chat", mixinStandardHelpOptions = true, description = "Chats with a model, turn by turn.")
final class ChatCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new FsException("chat is not implemented yet");
    }
}
