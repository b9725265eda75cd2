package fs.cli;

import fs.FsException;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

@Command(name = "detokenize", mixinStandardHelpOptions = true, description = "Prints the text of token ids.")
final class DetokenizeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A directory holding tokenizer.json, a .gguf file, a Hugging Face repo id or repo:QUANT.")
    String model;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "ID",
            description = "Token ids, separated by spaces or commas (1 2 3, 1,2,3 or \"1, 2, 3\"), as fs tokenize "
                    + "prints them; without them, stdin is read to the end (fs tokenize MODEL TEXT | fs detokenize "
                    + "MODEL).")
    List<String> ids;

    @Option(names = "--skip-special", description = "Leave out special tokens such as <|im_end|>.")
    boolean skipSpecial;

    @Override
    public Integer call() throws IOException {
        int[] input = ids != null ? idArguments() : idsOnStdin();
        Tokenizer tokenizer = ModelSource.readTokenizer(TokenizeCommand.modelPath(model, spec.commandLine().getErr()));
        spec.commandLine().getOut().println(tokenizer.decode(input, skipSpecial));
        return 0;
    }

    private int[] idArguments() {
        List<TokenIds> parts = new ArrayList<>();
        for (String argument : ids) {
            try {
                parts.add(TokenIds.parse(argument));
            } catch (TypeConversionException e) {
                throw new ParameterException(spec.commandLine(), "invalid value for ID: " + e.getMessage());
            }
        }
        return TokenIds.concatenated(parts);
    }

    private int[] idsOnStdin() throws IOException {
        String text = TokenizeCommand.readUtf8(System.in.readAllBytes(), "stdin");
        if (text.isBlank()) {
            throw new ParameterException(spec.commandLine(), "no token ids, neither after MODEL nor on stdin");
        }
        try {
            return TokenIds.parse(text).ids();
        } catch (TypeConversionException e) {
            throw new FsException("stdin: " + e.getMessage());
        }
    }
}
