package fs.tokenizer;

import fs.FsException;
import fs.Quoted;
import fs.gguf.GgufArray;
import fs.gguf.GgufFile;
import fs.gguf.GgufMetadata;
import fs.gguf.GgufValueType;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Builds a {@link Tokenizer} from a GGUF file's tokenizer.ggml.* metadata, as llama.cpp's converter writes it from a
 * Hugging Face tokenizer.json: one token per id (tokens, token_type) and the merges. Only byte-level BPE (model gpt2)
 * with Qwen2's pre-tokenizer (pre qwen2, which Qwen3 uses) is accepted, because the file names these rather than
 * spelling them out: "qwen2" stands for tokenizer.json's NFC normalizer and Split regex, which are restored here, so
 * that the ids are those of the tokenizer.json the file was made from. Any other model or pre-tokenizer is refused
 * by name.
 */
public final class GgufTokenizer {
    static final String MODEL = "tokenizer.ggml.model";
    static final String PRE = "tokenizer.ggml.pre";
    static final String TOKENS = "tokenizer.ggml.tokens";
    static final String TOKEN_TYPE = "tokenizer.ggml.token_type";
    static final String MERGES = "tokenizer.ggml.merges";
    private static final List<String> SPECIAL_IDS = List.of(
            "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.padding_token_id");

    // llama.cpp's token types (llama_token_type).
    private static final int NORMAL = 1;
    private static final int CONTROL = 3;
    private static final int USER_DEFINED = 4;
    private static final int UNUSED = 5;
    private static final List<String> TYPE_NAMES =
            List.of("UNDEFINED", "NORMAL", "UNKNOWN", "CONTROL", "USER_DEFINED", "UNUSED", "BYTE");

    private final GgufMetadata metadata;

    private GgufTokenizer(GgufMetadata metadata) {
        this.metadata = metadata;
    }

    /** The tokenizer the metadata describes; every problem is one FsException naming the file and the key. */
    public static Tokenizer read(GgufMetadata metadata) {
        return new Tokenizer(new GgufTokenizer(metadata).data());
    }

    /**
     * The tokenizer of {@code file}'s metadata, through the user's tokenizer cache ({@link TokenizerCache#forUser}):
     * the first load of a file builds its tables, later ones read them back.
     */
    public static Tokenizer read(GgufFile file) {
        return read(file, TokenizerCache.forUser());
    }

    static Tokenizer read(GgufFile file, TokenizerCache cache) {
        GgufTokenizer tokenizer = new GgufTokenizer(file.metadata());
        // A file replaced since it was mapped has other attributes than the metadata read here: not cached under them.
        if (file.changedSinceOpen()) return new Tokenizer(tokenizer.data());
        return new Tokenizer(cache.read(file.path(), tokenizer::data));
    }

    /**
     * The ids of the special (CONTROL) tokens spelled {@code texts}, in id order, without building the tokenizer;
     * empty when the file has no token list.
     */
    public static List<Integer> specialIds(GgufMetadata metadata, List<String> texts) {
        List<Integer> ids = new ArrayList<>();
        if (!metadata.has(TOKENS) || !metadata.has(TOKEN_TYPE)) return ids;
        GgufArray tokens = metadata.array(TOKENS, GgufValueType.STRING);
        long[] types = metadata.array(TOKEN_TYPE, GgufValueType.INT32).longs();
        for (int id = 0; id < Math.min(tokens.length(), types.length); id++) {
            if (types[id] == CONTROL && texts.contains(tokens.string(id))) ids.add(id); // the few control tokens decoded
        }
        return ids;
    }

    private TokenizerData data() {
        requireName(MODEL, "gpt2", "byte-level BPE");
        requireName(PRE, "qwen2", "Qwen2 and Qwen3's pre-tokenizer");
        String[] tokens = metadata.array(TOKENS, GgufValueType.STRING).strings();
        long[] types = metadata.array(TOKEN_TYPE, GgufValueType.INT32).longs();
        if (types.length != tokens.length) {
            throw metadata.error(TOKEN_TYPE, "lists " + types.length + " types for " + tokens.length + " tokens");
        }
        TokenIds vocab = new TokenIds(tokens.length);
        List<AddedToken> added = new ArrayList<>();
        Set<String> addedContents = new HashSet<>();
        for (int id = 0; id < tokens.length; id++) {
            String token = tokens[id];
            switch ((int) types[id]) {
                case NORMAL -> {
                    if (vocab.id(token) >= 0) throw duplicate(id, token);
                    vocab.put(token, id);
                }
                // Hugging Face's special added tokens become CONTROL, its other added tokens USER_DEFINED; neither
                // kind is normalized in the tokenizers llama.cpp converts as gpt2.
                case CONTROL, USER_DEFINED -> {
                    if (!addedContents.add(token)) throw duplicate(id, token);
                    added.add(new AddedToken(id, token, types[id] == CONTROL, false));
                }
                case UNUSED -> { } // the placeholders that pad the list to the embedding's rows: no token has them
                default -> throw metadata.error(TOKEN_TYPE, "gives token " + id + " " + Quoted.quote(token)
                        + " the type " + typeName(types[id]) + ", which a gpt2 tokenizer does not use");
            }
        }
        for (String key : SPECIAL_IDS) {
            if (!metadata.has(key)) continue;
            int id = metadata.nonNegativeInt(key);
            if (id >= tokens.length || types[id] == UNUSED) {
                throw metadata.error(key, "is " + id + ", which is not a token of " + TOKENS);
            }
        }
        int[] byteIds = new int[256];
        for (int b = 0; b < 256; b++) byteIds[b] = vocab.id(String.valueOf(ByteLevel.charOf(b)));
        return new TokenizerData(vocab, merges(vocab), byteIds, false, added, List.of(Normalizer.Form.NFC),
                List.of(PreTokenizer.compile(QwenSplitPattern.REGEX)));
    }

    private void requireName(String key, String expected, String what) {
        String name = metadata.string(key);
        if (!name.equals(expected)) {
            throw metadata.error(key, "is " + Quoted.quote(name) + ": only '" + expected + "' (" + what
                    + ") is supported");
        }
    }

    /** Each merge "a b" of tokens a and b, ranked by its place in the list, as Hugging Face ranks them. */
    private MergeTable merges(TokenIds vocab) {
        String[] merges = metadata.array(MERGES, GgufValueType.STRING).strings();
        MergeTable table = new MergeTable(merges.length);
        for (int rank = 0; rank < merges.length; rank++) {
            char[] merge = merges[rank].toCharArray();
            int space = merges[rank].indexOf(' ');
            if (space < 0 || merges[rank].indexOf(' ', space + 1) >= 0) {
                throw metadata.error(MERGES, "entry " + rank + " " + Quoted.quote(merges[rank])
                        + " is not two tokens separated by a space");
            }
            int rightFrom = space + 1;
            int rightLength = merge.length - rightFrom;
            int leftHash = TokenIds.hash(merge, 0, space);
            int rightHash = TokenIds.hash(merge, rightFrom, rightLength);
            int left = vocab.id(leftHash, merge, 0, space, merge, rightFrom, 0);
            int right = vocab.id(rightHash, merge, rightFrom, rightLength, merge, 0, 0);
            int merged = vocab.id(TokenIds.hashOfConcat(leftHash, rightHash, rightLength), merge, 0, space, merge,
                    rightFrom, rightLength);
            if (left < 0 || right < 0 || merged < 0) {
                throw metadata.error(MERGES, "entry " + rank + " " + Quoted.quote(merges[rank])
                        + " uses a token that is not a normal token of " + TOKENS);
            }
            table.put(left, right, rank, merged);
        }
        return table;
    }

    private FsException duplicate(int id, String token) {
        return metadata.error(TOKENS, "lists " + Quoted.quote(token) + " twice (again as token " + id + ")");
    }

    private static String typeName(long type) {
        return type >= 0 && type < TYPE_NAMES.size() ? TYPE_NAMES.get((int) type) : String.valueOf(type);
    }
}
