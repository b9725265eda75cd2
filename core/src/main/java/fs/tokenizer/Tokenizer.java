package fs.tokenizer;

import fs.FsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A byte-level BPE tokenizer read from a Hugging Face tokenizer.json (Qwen3's among others), encoding and decoding
 * exactly as Hugging Face's tokenizers library does with add_special_tokens=false. Immutable and safe to share across
 * threads.
 */
public final class Tokenizer {
    private final TokenIds vocab;
    /** One more than the highest id, added tokens included. */
    private final int idLimit;
    private final AddedToken[] addedById;
    /**
     * Each token's bytes for decoding, filled in as tokens are first decoded, by whichever thread decodes them first.
     * A plain array would not be safe to share: a thread could see another's array reference before that array's
     * contents (a data race publishes the reference, not the bytes). Each slot is written with release and read with
     * acquire semantics, so a reader that sees an array sees its bytes; the array is never written after it is
     * stored. Two threads filling one slot at once store equal arrays, and either one is right.
     */
    private final AtomicReferenceArray<byte[]> tokenBytes;
    private final java.util.Map<String, AddedToken> addedByContent = new java.util.HashMap<>();
    private final AddedTokenMatcher rawTokens;
    private final AddedTokenMatcher normalizedTokens;
    private final List<Normalizer.Form> normalizerForms;
    private final PreTokenizer preTokenizer;
    private final BytePairModel model;

    Tokenizer(TokenizerData data) {
        this.vocab = data.vocab();
        List<Normalizer.Form> normalizerForms = data.normalizerForms();
        this.idLimit = data.idLimit();
        this.addedById = new AddedToken[idLimit];
        this.tokenBytes = new AtomicReferenceArray<>(idLimit);
        List<AddedToken> raw = new ArrayList<>();
        List<AddedToken> normalized = new ArrayList<>();
        for (AddedToken token : data.added()) {
            addedById[token.id()] = token;
            addedByContent.put(token.content(), token);
            (token.normalized() && !normalizerForms.isEmpty() ? normalized : raw).add(token);
        }
        this.rawTokens = new AddedTokenMatcher(raw);
        this.normalizedTokens = new AddedTokenMatcher(normalized);
        this.normalizerForms = List.copyOf(normalizerForms);
        this.preTokenizer = new PreTokenizer(data.splitPatterns());
        this.model = new BytePairModel(data.byteIds(), data.merges(), data.ignoreMerges() ? vocab : null);
    }

    /**
     * Reads {@code modelDir/tokenizer.json}, through the user's tokenizer cache ({@link TokenizerCache#forUser}): the
     * first load of a file parses its JSON, later ones read the tables back in a fraction of the time.
     */
    public static Tokenizer load(Path modelDir) {
        return load(modelDir, TokenizerCache.forUser());
    }

    /**
     * Reads the tokenizer of a model with {@code modelVocabSize} embedding rows (config.json's vocab_size), refusing
     * one that has ids the model has no row for.
     */
    public static Tokenizer load(Path modelDir, int modelVocabSize) {
        return load(modelDir, TokenizerCache.forUser(), modelVocabSize);
    }

    static Tokenizer load(Path modelDir, TokenizerCache cache) {
        return new Tokenizer(read(modelDir, cache));
    }

    static Tokenizer load(Path modelDir, TokenizerCache cache, int modelVocabSize) {
        TokenizerData data = read(modelDir, cache);
        if (data.idLimit() > modelVocabSize) {
            throw new FsException(modelDir.resolve("tokenizer.json") + ": token id " + (data.idLimit() - 1)
                    + " is beyond config.json's vocab_size " + modelVocabSize + " (the model has no embedding row for it)");
        }
        return new Tokenizer(data);
    }

    private static TokenizerData read(Path modelDir, TokenizerCache cache) {
        if (!Files.isDirectory(modelDir)) throw new FsException("model directory not found: " + modelDir);
        return cache.read(modelDir.resolve("tokenizer.json"));
    }

    /** The ids of a text; like Hugging Face with add_special_tokens=false, nothing is added around it. */
    public int[] encode(String text) {
        IntList ids = new IntList(text.length() / 3 + 8);
        rawTokens.split(text, new AddedTokenMatcher.Sink() {
            @Override
            public void text(String segment) {
                encodeNormalized(normalize(segment), ids);
            }

            @Override
            public void token(AddedToken token) {
                ids.add(token.id());
            }
        });
        return ids.toArray();
    }

    private void encodeNormalized(String text, IntList ids) {
        if (normalizedTokens.isEmpty()) {
            preTokenizer.split(text, (t, start, end) -> ids.addAll(model.encode(t, start, end)));
            return;
        }
        normalizedTokens.split(text, new AddedTokenMatcher.Sink() {
            @Override
            public void text(String segment) {
                preTokenizer.split(segment, (t, start, end) -> ids.addAll(model.encode(t, start, end)));
            }

            @Override
            public void token(AddedToken token) {
                ids.add(token.id());
            }
        });
    }

    private String normalize(String text) {
        if (normalizerForms.isEmpty() || unaffectedByNormalization(text)) return text;
        for (Normalizer.Form form : normalizerForms) {
            if (!Normalizer.isNormalized(text, form)) text = Normalizer.normalize(text, form);
        }
        return text;
    }

    /**
     * Whether no Unicode normalization form can change the text: a quick test for the common case (ASCII and CJK
     * ideographs) that saves the normalizer's slower check. These characters are their own decompositions in every
     * form; one that could compose with them (a combining mark) is outside these ranges and sends the text to the
     * normalizer.
     */
    private static boolean unaffectedByNormalization(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0xA0 || (c >= 0x4E00 && c < 0xA000)) continue;
            return false;
        }
        return true;
    }

    /**
     * The text of ids: their bytes joined and read as UTF-8, each invalid or cut-short sequence becoming U+FFFD as in
     * Hugging Face's decode. With {@code skipSpecial}, special added tokens (such as &lt;|im_end|&gt;) are left out.
     */
    public String decode(int[] ids, boolean skipSpecial) {
        ByteSink bytes = new ByteSink(ids.length * 4);
        for (int id : ids) appendBytes(id, skipSpecial, bytes);
        return Utf8.decodeLossy(bytes.array(), bytes.length());
    }

    /** A decoder for generated ids that only ever returns whole characters. */
    public StreamingDecoder streamingDecoder() {
        return streamingDecoder(false);
    }

    public StreamingDecoder streamingDecoder(boolean skipSpecial) {
        return new StreamingDecoder(this, skipSpecial);
    }

    /**
     * The raw bytes one id decodes to (a special token's: its literal text in UTF-8); possibly part of a character.
     * A copy, the caller's to keep.
     */
    public byte[] tokenBytes(int id) {
        ByteSink bytes = new ByteSink(16);
        appendBytes(id, false, bytes);
        return Arrays.copyOf(bytes.array(), bytes.length());
    }

    void appendBytes(int id, boolean skipSpecial, ByteSink out) {
        if (id < 0 || id >= idLimit) throw unknownId(id);
        AddedToken added = addedById[id];
        if (added != null && added.special() && skipSpecial) return;
        byte[] bytes = tokenBytes.getAcquire(id);
        if (bytes == null) {
            String token = added != null ? added.content() : vocab.token(id);
            if (token == null) throw unknownId(id);
            bytes = ByteLevel.bytesOf(token);
            tokenBytes.setRelease(id, bytes); // the bytes are complete before they are published
        }
        out.add(bytes);
    }

    private FsException unknownId(int id) {
        return new FsException("unknown token id " + id + " (the vocabulary has ids 0.." + (idLimit - 1) + ")");
    }

    /** One more than the highest id, added tokens included (151,669 for Qwen3). */
    public int vocabSize() {
        return idLimit;
    }

    /** The id of a token as tokenizer.json spells it: an added token such as "&lt;|im_end|&gt;" or a vocabulary entry. */
    public OptionalInt tokenId(String token) {
        AddedToken added = addedByContent.get(token);
        if (added != null) return OptionalInt.of(added.id());
        int id = vocab.id(token);
        return id < 0 ? OptionalInt.empty() : OptionalInt.of(id);
    }

    /** Whether the id is a special added token (left out by a decode that skips specials). */
    public boolean isSpecial(int id) {
        return id >= 0 && id < addedById.length && addedById[id] != null && addedById[id].special();
    }

    /** The token of an id as tokenizer.json spells it (byte alphabet for vocabulary entries). */
    public String token(int id) {
        if (id >= 0 && id < idLimit) {
            if (addedById[id] != null) return addedById[id].content();
            String token = vocab.token(id);
            if (token != null) return token;
        }
        throw unknownId(id);
    }

    /** The pieces the pre-tokenizer cuts a text into, in the byte alphabet, as Hugging Face reports them. */
    List<String> preTokens(String text) {
        List<String> pieces = new ArrayList<>();
        rawTokens.split(text, new AddedTokenMatcher.Sink() {
            @Override
            public void text(String segment) {
                preTokenizer.split(normalize(segment), (t, start, end) -> {
                    byte[] utf8 = t.substring(start, end).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    pieces.add(ByteLevel.spell(utf8, 0, utf8.length));
                });
            }

            @Override
            public void token(AddedToken token) {
                pieces.add(token.content());
            }
        });
        return pieces;
    }

    private static final class IntList {
        private int[] items;
        private int size;

        IntList(int capacity) {
            items = new int[capacity];
        }

        void add(int value) {
            if (size == items.length) items = Arrays.copyOf(items, size * 2 + 1);
            items[size++] = value;
        }

        void addAll(int[] values) {
            if (size + values.length > items.length) items = Arrays.copyOf(items, Math.max(size * 2, size + values.length));
            System.arraycopy(values, 0, items, size, values.length);
            size += values.length;
        }

        int[] toArray() {
            return Arrays.copyOf(items, size);
        }
    }

    /** A growable byte buffer. */
    static final class ByteSink {
        private byte[] bytes;
        private int length;

        ByteSink(int capacity) {
            bytes = new byte[Math.max(16, capacity)];
        }

        void add(byte[] more) {
            if (length + more.length > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + more.length));
            System.arraycopy(more, 0, bytes, length, more.length);
            length += more.length;
        }

        byte[] array() {
            return bytes;
        }

        int length() {
            return length;
        }

        /** Drops the first {@code count} bytes. */
        void consume(int count) {
            System.arraycopy(bytes, count, bytes, 0, length - count);
            length -= count;
        }
    }
}
