package fs.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.HumanSize;
import fs.Quoted;
import fs.json.JsonFields;
import fs.json.JsonMessages;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Reads a Hugging Face tokenizer.json into {@link TokenizerData}. The vocabulary and merges (most of the 11 MB) are
 * streamed straight into their tables; the small sections are read as trees, their fields through {@link JsonFields}.
 * Anything the tokenizer would have to guess at (another model type, a normalizer or pre-tokenizer it does not
 * implement) is refused.
 */
final class TokenizerFile {
    /** GPT-2's split, which a ByteLevel pre-tokenizer applies when its use_regex is true. */
    private static final String GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

    /** Read whole onto the heap, with tables several times its size: a bound that keeps that well within reach. */
    private static final long MAX_FILE_BYTES = 256L << 20;
    /** Qwen3's tables hold ~150k tokens and merges; a smaller file gets tables sized for it. */
    private static final int LARGEST_EXPECTED = 200_000;
    /** The fewest bytes a vocabulary entry takes ("a":0,): no id in a file can reach its length over this. */
    private static final int SMALLEST_ENTRY_BYTES = 6;

    /**
     * Streams the file, reading its small sections as trees. Interning 150k distinct vocabulary strings would be wasted
     * work. (Turning canonicalization off as well makes Jackson fall back to its slower char-based parser.)
     */
    private static final JsonMapper MAPPER = JsonMapper.builder(
            JsonFactory.builder().disable(JsonFactory.Feature.INTERN_FIELD_NAMES).build()).build();

    private final Path file;
    /**
     * A bound on ids from the file's length, checked as each is read, before the tables grow to hold it: the file
     * cannot define more tokens than this, and {@link TokenizerData#idBound} allows that many unused ones besides.
     */
    private final long idBound;
    private final TokenIds vocab;
    private int vocabSize;
    private final MergeTable merges;
    private int mergeCount;
    /** Merges met before the vocabulary (not the order Hugging Face writes), resolved once it is read. */
    private final List<String[]> unresolvedMerges = new ArrayList<>();
    /** The small sections of the file; under "model", the model's keys other than vocab and merges. */
    private final ObjectNode sections = MAPPER.createObjectNode();
    private final ObjectNode modelSettings = sections.putObject("model");
    private final JsonFields fields = JsonFields.of(sections, this::error);
    private boolean sawModel;

    private TokenizerFile(Path file, int fileBytes) {
        this.file = file;
        this.idBound = fileBytes / SMALLEST_ENTRY_BYTES + 1 + TokenizerData.MAX_UNUSED_IDS;
        int expected = Math.min(LARGEST_EXPECTED, fileBytes / SMALLEST_ENTRY_BYTES + 1);
        this.vocab = new TokenIds(expected);
        this.merges = new MergeTable(expected);
    }

    static TokenizerData read(Path file) {
        byte[] json;
        try {
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                throw new FsException("tokenizer " + file + ": " + HumanSize.of(size) + ", more than any "
                        + "tokenizer.json needs (the limit is " + HumanSize.of(MAX_FILE_BYTES)
                        + "; Qwen3's is 10.9 MiB)");
            }
            json = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new FsException("no tokenizer.json at " + file);
        } catch (IOException e) {
            throw new FsException("cannot read " + file + ": " + e.getMessage());
        }
        TokenizerFile reader = new TokenizerFile(file, json.length);
        try (JsonParser parser = MAPPER.createParser(json)) {
            reader.readTop(parser);
            return reader.build();
        } catch (JsonProcessingException e) {
            throw reader.error(JsonMessages.describe(e));
        } catch (IOException e) {
            throw new FsException("cannot read " + file + ": " + e.getMessage());
        }
    }

    private void readTop(JsonParser p) throws IOException {
        expect(p.nextToken(), JsonToken.START_OBJECT, "the file");
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "added_tokens", "normalizer", "pre_tokenizer", "decoder" -> sections.set(name, readValue(p));
                case "model" -> readModel(p);
                default -> p.skipChildren(); // post_processor only adds tokens when asked to add special tokens
            }
        }
        if (p.nextToken() != null) throw error("trailing content after the top-level object");
    }

    private void readModel(JsonParser p) throws IOException {
        expect(p.currentToken(), JsonToken.START_OBJECT, "model");
        sawModel = true;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "vocab" -> readVocab(p);
                case "merges" -> readMerges(p);
                default -> modelSettings.set(name, readValue(p));
            }
        }
    }

    private void readVocab(JsonParser p) throws IOException {
        expect(p.currentToken(), JsonToken.START_OBJECT, "model.vocab");
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String token = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_NUMBER_INT) throw error("model.vocab[" + Quoted.quote(token) + "] is not an integer id");
            // Checked before the tables grow to hold the id: an id of 10^9 would otherwise ask for gigabytes.
            if (p.getNumberType() != JsonParser.NumberType.INT || p.getIntValue() >= idBound) {
                String id = p.getText().length() > 24 ? p.getText().substring(0, 24) + "…" : p.getText(); // up to 1,000 digits
                throw error("model.vocab[" + Quoted.quote(token) + "] has id " + id
                        + ", beyond the vocabulary (a file this size cannot define that many tokens)");
            }
            int id = p.getIntValue();
            if (id < 0) throw error("model.vocab[" + Quoted.quote(token) + "] has negative id " + id);
            vocab.put(token, id);
            vocabSize++;
        }
    }

    private void readMerges(JsonParser p) throws IOException {
        expect(p.currentToken(), JsonToken.START_ARRAY, "model.merges");
        boolean vocabFirst = vocabSize > 0; // then each merge is resolved as it is read, without making strings
        char[] left = new char[64];
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            int rank = mergeCount++;
            if (t == JsonToken.VALUE_STRING) {
                char[] text = p.getTextCharacters();
                int from = p.getTextOffset();
                int length = p.getTextLength();
                int space = indexOf(text, from, length, ' ');
                if (space < 0 || indexOf(text, space + 1, from + length - space - 1, ' ') >= 0) {
                    throw error("merge " + rank + " " + Quoted.quote(p.getText()) + " is not two tokens separated by a space");
                }
                addMerge(rank, vocabFirst, text, from, space - from, text, space + 1, from + length - space - 1);
            } else if (t == JsonToken.START_ARRAY) {
                if (p.nextToken() != JsonToken.VALUE_STRING) throw error("merge " + rank + " is not an array of two strings");
                int leftLength = p.getTextLength();
                if (leftLength > left.length) left = new char[leftLength * 2];
                System.arraycopy(p.getTextCharacters(), p.getTextOffset(), left, 0, leftLength);
                if (p.nextToken() != JsonToken.VALUE_STRING) throw error("merge " + rank + " is not an array of two strings");
                addMerge(rank, vocabFirst, left, 0, leftLength, p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
                if (p.nextToken() != JsonToken.END_ARRAY) throw error("merge " + rank + " is not an array of two strings");
            } else {
                throw error("merge " + rank + " is neither \"a b\" nor [\"a\", \"b\"]");
            }
        }
    }

    private void addMerge(int rank, boolean resolveNow, char[] a, int aFrom, int aLength, char[] b, int bFrom, int bLength) {
        if (resolveNow) {
            int leftHash = TokenIds.hash(a, aFrom, aLength);
            int rightHash = TokenIds.hash(b, bFrom, bLength);
            int leftId = vocab.id(leftHash, a, aFrom, aLength, b, bFrom, 0);
            int rightId = vocab.id(rightHash, b, bFrom, bLength, a, aFrom, 0);
            int mergedId = vocab.id(TokenIds.hashOfConcat(leftHash, rightHash, bLength), a, aFrom, aLength, b, bFrom, bLength);
            if (leftId < 0 || rightId < 0 || mergedId < 0) {
                throw error("merge " + rank + " (" + Quoted.quote(new String(a, aFrom, aLength)) + ", "
                        + Quoted.quote(new String(b, bFrom, bLength)) + ") uses a token missing from model.vocab");
            }
            merges.put(leftId, rightId, rank, mergedId);
        } else {
            unresolvedMerges.add(new String[] {new String(a, aFrom, aLength), new String(b, bFrom, bLength)});
        }
    }

    private static int indexOf(char[] chars, int from, int length, char c) {
        for (int i = from; i < from + length; i++) if (chars[i] == c) return i;
        return -1;
    }

    /** A small section, as a tree. */
    private static JsonNode readValue(JsonParser p) throws IOException {
        return p.readValueAsTree();
    }

    private TokenizerData build() {
        if (!sawModel) throw error("no \"model\" section");
        checkModel();
        List<AddedToken> added = addedTokens();
        int[] byteIds = new int[256];
        for (int b = 0; b < 256; b++) byteIds[b] = vocab.id(String.valueOf(ByteLevel.charOf(b)));
        for (int rank = 0; rank < unresolvedMerges.size(); rank++) {
            String[] pair = unresolvedMerges.get(rank);
            addMerge(rank, true, pair[0].toCharArray(), 0, pair[0].length(), pair[1].toCharArray(), 0, pair[1].length());
        }
        boolean ignoreMerges = fields.object("model").bool("ignore_merges", false);
        TokenizerData data = new TokenizerData(vocab, merges, byteIds, ignoreMerges, added, normalizerForms(), splitPatterns());
        checkIdsWithinVocabulary(data);
        return data;
    }

    private void checkModel() {
        JsonFields model = fields.object("model");
        if (model.has("type") && !"BPE".equals(model.get("type").textValue())) {
            throw error("model type " + shownType(model) + " is not supported (only BPE)");
        }
        if (model.has("dropout")) throw error("BPE dropout is not supported");
        if (model.bool("byte_fallback", false)) throw error("BPE byte_fallback is not supported");
        for (String affix : List.of("continuing_subword_prefix", "end_of_word_suffix")) {
            if (model.has(affix) && !"".equals(model.get(affix).textValue())) throw error("BPE " + affix + " is not supported");
        }
        if (!fields.has("decoder") || !"ByteLevel".equals(type(fields.object("decoder")))) {
            throw error("decoder is not ByteLevel; only byte-level BPE tokenizers are supported");
        }
    }

    private List<AddedToken> addedTokens() {
        List<AddedToken> result = new ArrayList<>();
        if (!fields.has("added_tokens")) return result;
        for (int i = 0; i < fields.array("added_tokens").size(); i++) {
            JsonFields token = fields.element("added_tokens", i);
            JsonNode content = token.get("content"), id = token.get("id");
            if (content == null || !content.isTextual()) throw error("added_tokens[" + i + "] has no string \"content\"");
            String text = content.textValue();
            if (id == null || !id.isIntegralNumber()) throw error("added token " + Quoted.quote(text) + " has no integer \"id\"");
            if (id.bigIntegerValue().signum() < 0) throw error("added token " + Quoted.quote(text) + " has negative id " + id);
            if (!id.canConvertToInt()) {
                throw error("added token " + Quoted.quote(text) + " has id " + JsonFields.shown(id) + ", beyond the vocabulary");
            }
            for (String flag : List.of("lstrip", "rstrip", "single_word")) {
                if (token.bool(flag, false)) {
                    throw error("added token " + Quoted.quote(text) + " sets " + flag + ", which is not supported");
                }
            }
            result.add(new AddedToken(id.intValue(), text, token.bool("special", false), token.bool("normalized", true)));
        }
        return result;
    }

    private List<Normalizer.Form> normalizerForms() {
        List<Normalizer.Form> forms = new ArrayList<>();
        if (fields.has("normalizer")) addNormalizer(fields.object("normalizer"), forms);
        return forms;
    }

    private void addNormalizer(JsonFields spec, List<Normalizer.Form> forms) {
        switch (type(spec)) {
            case "NFC" -> forms.add(Normalizer.Form.NFC);
            case "NFD" -> forms.add(Normalizer.Form.NFD);
            case "NFKC" -> forms.add(Normalizer.Form.NFKC);
            case "NFKD" -> forms.add(Normalizer.Form.NFKD);
            case "Sequence" -> {
                for (int i = 0; i < spec.array("normalizers").size(); i++) addNormalizer(spec.element("normalizers", i), forms);
            }
            default -> throw error("normalizer " + shownType(spec) + " is not supported (only NFC, NFD, NFKC, NFKD)");
        }
    }

    private List<Pattern> splitPatterns() {
        List<Pattern> patterns = new ArrayList<>();
        if (!fields.has("pre_tokenizer") || !addPreTokenizer(fields.object("pre_tokenizer"), patterns)) {
            throw error("pre_tokenizer has no ByteLevel step; only byte-level BPE tokenizers are supported");
        }
        return patterns;
    }

    /** Adds the step's patterns and says whether it contained the ByteLevel step. */
    private boolean addPreTokenizer(JsonFields spec, List<Pattern> patterns) {
        switch (type(spec)) {
            case "Sequence" -> {
                boolean byteLevel = false;
                for (int i = 0; i < spec.array("pretokenizers").size(); i++) {
                    byteLevel |= addPreTokenizer(spec.element("pretokenizers", i), patterns);
                }
                return byteLevel;
            }
            case "Split" -> {
                JsonNode behavior = spec.get("behavior");
                if (behavior == null || !"Isolated".equals(behavior.textValue()) || spec.bool("invert", false)) {
                    throw error("Split pre-tokenizer with behavior " + (behavior == null ? "missing" : JsonFields.shown(behavior))
                            + ", invert " + spec.bool("invert", false) + " is not supported (only Isolated, not inverted)");
                }
                JsonFields pattern = spec.object("pattern");
                for (String kind : List.of("Regex", "String")) {
                    if (pattern.has(kind) && pattern.text(kind).length() > PreTokenizer.MAX_PATTERN_CHARS) {
                        throw error("Split pre-tokenizer pattern is " + pattern.text(kind).length() + " characters long, more than"
                                + " any pre-tokenizer needs (the limit is " + PreTokenizer.MAX_PATTERN_CHARS + ")");
                    }
                }
                try {
                    if (pattern.has("Regex")) patterns.add(PreTokenizer.compile(pattern.text("Regex")));
                    else if (pattern.has("String")) patterns.add(Pattern.compile(Pattern.quote(pattern.text("String"))));
                    else throw error("Split pre-tokenizer pattern is neither a Regex nor a String");
                } catch (PatternSyntaxException e) {
                    // The description quotes the regex's own characters, which may be line breaks.
                    throw error("Split pre-tokenizer regex does not compile: " + Quoted.quote(e.getDescription()) + " at index " + e.getIndex());
                }
                return false;
            }
            case "ByteLevel" -> {
                if (spec.bool("add_prefix_space", false)) throw error("ByteLevel pre-tokenizer with add_prefix_space is not supported");
                if (spec.bool("use_regex", true)) patterns.add(PreTokenizer.compile(GPT2_PATTERN));
                return true;
            }
            default -> throw error("pre-tokenizer " + shownType(spec) + " is not supported (only Sequence, Split, ByteLevel)");
        }
    }

    /** A step's type, "" when it has none or it is not a string. */
    private static String type(JsonFields spec) {
        JsonNode type = spec.get("type");
        return type != null && type.isTextual() ? type.textValue() : "";
    }

    /** A step's type as the message shows it: quoted when a string. */
    private static String shownType(JsonFields spec) {
        JsonNode type = spec.get("type");
        if (type == null || type.isNull()) return "without a type";
        return type.isTextual() ? Quoted.quote(type.textValue()) : JsonFields.describe(type);
    }

    private void expect(JsonToken actual, JsonToken expected, String what) {
        if (actual != expected) throw error(what + " should be " + JsonMessages.words(expected) + ", not " + JsonMessages.words(actual));
    }

    /** Every id, the vocabulary's and the added tokens', below {@link TokenizerData#idBound}. */
    private void checkIdsWithinVocabulary(TokenizerData data) {
        long bound = data.idBound();
        String vocabulary = "beyond the vocabulary (the file defines " + data.tokenCount() + " tokens; ids up to "
                + (bound - 1) + " are accepted)";
        if (vocab.idLimit() > bound) throw error("model.vocab has id " + (vocab.idLimit() - 1) + ", " + vocabulary);
        for (AddedToken token : data.added()) {
            if (token.id() >= bound) throw error("added token " + Quoted.quote(token.content()) + " has id " + token.id() + ", " + vocabulary);
        }
    }

    private FsException error(String problem) {
        return new FsException("tokenizer " + file + ": " + problem);
    }
}
