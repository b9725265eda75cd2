package fs.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import fs.hub.ModelResolver;
import fs.source.ModelSource;
import fs.tokenizer.Tokenizer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "tokenize", mixinStandardHelpOptions = true,
        description = "Prints the token ids of a text, separated by spaces (as fs detokenize, fs run --tokens and fs "
                + "logits --tokens read them).")
final class TokenizeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MODEL", description = "A directory holding tokenizer.json, a .gguf file, a Hugging Face repo id or repo:QUANT.")
    String model;

    @Parameters(index = "1", arity = "0..1", paramLabel = "TEXT", description = "The text; without it, stdin is read to the end as UTF-8.")
    String text;

    @Option(names = "--jsonl", description = "Read stdin as JSON lines {\"text\": \"...\"} and print one {\"ids\": [...]} line for each.")
    boolean jsonl;

    @Override
    public Integer call() throws IOException {
        if (jsonl && text != null) {
            throw new ParameterException(spec.commandLine(),
                    "--jsonl reads its texts from stdin; give no TEXT with it");
        }
        Path path = modelPath(model, spec.commandLine().getErr());
        PrintWriter out = spec.commandLine().getOut();
        if (jsonl) {
            tokenizeJsonLines(ModelSource.readTokenizer(path), System.in, out);
        } else {
            String input = text != null ? text : readUtf8(System.in.readAllBytes(), "stdin");
            out.println(TokenIds.spaced(ModelSource.readTokenizer(path).encode(input)));
        }
        return 0;
    }

    /**
     * Where a MODEL argument leads: a local directory as it is (only the tokenizer files are needed, so no
     * config.json is required), anything else (a .gguf file among them) through the Hugging Face cache or hub.
     */
    static Path modelPath(String model, PrintWriter log) {
        Path dir = Path.of(model);
        return Files.isDirectory(dir) ? dir : ModelResolver.resolve(model, log);
    }

    private static void tokenizeJsonLines(Tokenizer tokenizer, InputStream in, PrintWriter out) throws IOException {
        ObjectMapper json = new ObjectMapper();
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, strictUtf8()));
        int number = 0;
        while (true) {
            String line;
            try {
                line = lines.readLine();
            } catch (CharacterCodingException e) {
                throw new FsException("stdin line " + (number + 1) + " is not valid UTF-8");
            }
            if (line == null) break;
            number++;
            JsonNode text;
            try {
                text = json.readTree(line).get("text");
            } catch (IOException | NullPointerException e) {
                text = null;
            }
            if (text == null || !text.isTextual()) {
                throw new FsException("stdin line " + number + " is not a JSON object with a \"text\" string");
            }
            int lone = loneSurrogate(text.textValue());
            if (lone >= 0) {
                // JSON's \\u escapes can spell half a character, which no UTF-8 text (nor the tokenizer) can hold.
                throw new FsException("stdin line " + number + ": \"text\" holds a lone surrogate \\u"
                        + Integer.toHexString(text.textValue().charAt(lone)) + " at character " + lone + ", which is not Unicode text");
            }
            out.println("{\"ids\":[" + TokenIds.joined(tokenizer.encode(text.textValue()), ",") + "]}");
            out.flush(); // one answer per line as it comes, for a caller that feeds lines one at a time
        }
    }

    /** The index of the first surrogate that is not half of a pair, or -1. */
    static int loneSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    /** Decodes UTF-8, refusing invalid bytes rather than replacing them. */
    static String readUtf8(byte[] bytes, String what) {
        CharsetDecoder decoder = strictUtf8();
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate((int) (bytes.length * (double) decoder.maxCharsPerByte()) + 1);
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) result = decoder.flush(out);
        if (result.isError()) throw new FsException(what + " is not valid UTF-8 (invalid byte at offset " + in.position() + ")");
        return out.flip().toString();
    }

    private static CharsetDecoder strictUtf8() {
        return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }
}
