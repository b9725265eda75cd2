package fs.cli;

import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "detokenize", mixinStandardHelpOptions = true, description = "Prints the text of token ids.")
final class DetokenizeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A directory holding tokenizer.json, a .gguf file, a Hugging Face repo id or repo:QUANT.")
    String model;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "ID", description = "Token ids.")
    int[] ids;

    @Option(names = "--skip-special", description = "Leave out special tokens such as <|im_end|>.")
    boolean skipSpecial;

    @Override
    public Integer call() {
        Tokenizer tokenizer = ModelSource.readTokenizer(TokenizeCommand.modelPath(model, spec.commandLine().getErr()));
        spec.commandLine().getOut().println(tokenizer.decode(ids, skipSpecial));
        return 0;
    }
}
