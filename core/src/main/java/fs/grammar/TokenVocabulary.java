package fs.grammar;

import fs.FsException;
import fs.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The bytes of every token of a vocabulary, and a trie of them: tokens sorted by their bytes, each node a byte, so
 * that masking walks a shared prefix once for all the tokens that begin with it. Special tokens (such as
 * &lt;|im_end|&gt;) have no text here: a grammar never allows them, only a constraint's end tokens. Immutable; one
 * per tokenizer.
 */
public final class TokenVocabulary {
    private static final Map<Tokenizer, TokenVocabulary> BY_TOKENIZER = Collections.synchronizedMap(new WeakHashMap<>());

    private final byte[][] bytes; // by token id; null: no text
    /** The trie in depth-first order: node k's byte, its depth (1 for a first byte), the node after its subtree. */
    final byte[] nodeByte;
    final int[] nodeDepth;
    final int[] subtreeEnd;
    /** The first token whose bytes end at node k (-1: none); further ones with the same bytes follow in sameBytes. */
    final int[] nodeToken;
    final int[] sameBytes;
    final int maxDepth;

    private TokenVocabulary(byte[][] bytes) {
        this.bytes = bytes;
        List<Integer> ids = new ArrayList<>();
        for (int id = 0; id < bytes.length; id++) if (bytes[id] != null && bytes[id].length > 0) ids.add(id);
        ids.sort((a, b) -> Arrays.compareUnsigned(bytes[a], bytes[b]));
        int longest = 0;
        for (int id : ids) longest = Math.max(longest, bytes[id].length);
        maxDepth = longest;
        int capacity = 0;
        for (int id : ids) capacity += bytes[id].length;
        byte[] nb = new byte[capacity];
        int[] nd = new int[capacity];
        int[] end = new int[capacity];
        int[] tok = new int[capacity];
        sameBytes = new int[bytes.length];
        Arrays.fill(sameBytes, -1);
        int[] path = new int[longest + 1]; // path[d]: the node at depth d on the current token's path
        int count = 0;
        byte[] previous = new byte[0];
        for (int id : ids) {
            byte[] b = bytes[id];
            int common = 0;
            while (common < previous.length && common < b.length && previous[common] == b[common]) common++;
            for (int d = previous.length; d > common; d--) end[path[d]] = count;
            for (int d = common + 1; d <= b.length; d++) {
                nb[count] = b[d - 1];
                nd[count] = d;
                tok[count] = -1;
                path[d] = count++;
            }
            int node = path[b.length];
            if (tok[node] < 0) {
                tok[node] = id;
            } else {
                int last = tok[node];
                while (sameBytes[last] >= 0) last = sameBytes[last];
                sameBytes[last] = id;
            }
            previous = b;
        }
        for (int d = previous.length; d > 0; d--) end[path[d]] = count;
        nodeByte = Arrays.copyOf(nb, count);
        nodeDepth = Arrays.copyOf(nd, count);
        subtreeEnd = Arrays.copyOf(end, count);
        nodeToken = Arrays.copyOf(tok, count);
    }

    /** The vocabulary of a tokenizer, built once per tokenizer and then shared. */
    public static TokenVocabulary of(Tokenizer tokenizer) {
        synchronized (BY_TOKENIZER) {
            return BY_TOKENIZER.computeIfAbsent(tokenizer, TokenVocabulary::build);
        }
    }

    private static TokenVocabulary build(Tokenizer tokenizer) {
        byte[][] bytes = new byte[tokenizer.vocabSize()][];
        for (int id = 0; id < bytes.length; id++) {
            if (tokenizer.isSpecial(id)) continue;
            try {
                bytes[id] = tokenizer.tokenBytes(id);
            } catch (FsException unusedId) {
                // A hole in the ids: no token has it, so it has no text.
            }
        }
        return new TokenVocabulary(bytes);
    }

    /** One more than the highest id that has text or is special. */
    public int size() {
        return bytes.length;
    }

    /** The bytes of a token, null when it has none (a special token, an id beyond the vocabulary); not a copy. */
    byte[] bytes(int id) {
        return id >= 0 && id < bytes.length ? bytes[id] : null;
    }
}
