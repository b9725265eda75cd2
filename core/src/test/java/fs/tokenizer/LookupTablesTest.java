package fs.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The vocabulary and merge tables, grown from a tiny start so that rehashing is exercised. */
class LookupTablesTest {
    @Test
    void vocabularyFindsTokensByStringAndByCharacterRanges() {
        TokenIds ids = new TokenIds(2);
        int n = 50_000;
        for (int i = 0; i < n; i++) ids.put("t" + i + "\u0120", i);
        ids.put("t7\u0120", 70_000); // a token listed twice keeps its later id
        String longToken = "x".repeat(70_000); // longer than one char can count
        ids.put(longToken, 123_456);
        for (int i = 0; i < n; i += 7) {
            int expected = i == 7 ? 70_000 : i;
            assertEquals(expected, ids.id("t" + i + "\u0120"));
            char[] left = ("t" + i).toCharArray();
            char[] right = "\u0120".toCharArray();
            int hash = TokenIds.hashOfConcat(TokenIds.hash(left, 0, left.length), TokenIds.hash(right, 0, 1), 1);
            assertEquals(("t" + i + "\u0120").hashCode(), hash);
            assertEquals(expected, ids.id(hash, left, 0, left.length, right, 0, 1));
        }
        assertEquals(123_456, ids.id(longToken));
        assertEquals(-1, ids.id("t" + n + "\u0120"));
        assertEquals(-1, ids.id("t1"));
    }

    @Test
    void mergeTableKeepsTheLaterRankOfARepeatedPair() {
        MergeTable merges = new MergeTable(1);
        for (int i = 0; i < 20_000; i++) merges.put(i, i + 1, i, 100_000 + i);
        merges.put(6, 7, 30_000, 7);
        for (int i = 0; i < 20_000; i += 3) {
            int slot = merges.find(i, i + 1);
            assertEquals(i == 6 ? 30_000 : i, merges.rank(slot));
            assertEquals(i == 6 ? 7 : 100_000 + i, merges.mergedId(slot));
        }
        assertEquals(-1, merges.find(1, 0));
    }
}
