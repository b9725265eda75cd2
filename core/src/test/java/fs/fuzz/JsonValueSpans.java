package fs.fuzz;

import java.util.ArrayList;
import java.util.List;

/**
 * Where the JSON values and object keys of a byte string lie, found by a forgiving scan rather than a parser: a
 * mutated input is often no longer valid JSON, yet its surviving values are still the best places to mutate.
 */
record JsonValueSpans(List<int[]> values, List<int[]> keys) {

    /** Spans as [start, end) byte offsets; an unterminated string or container ends where the input does. */
    static JsonValueSpans of(byte[] json) {
        List<int[]> values = new ArrayList<>();
        List<int[]> keys = new ArrayList<>();
        int[] openedAt = new int[64];
        int depth = 0;
        int i = 0;
        while (i < json.length) {
            byte b = json[i];
            if (b == '"') {
                int end = endOfString(json, i);
                int after = skipSpace(json, end);
                (after < json.length && json[after] == ':' ? keys : values).add(new int[] {i, end});
                i = end;
            } else if (b == '{' || b == '[') {
                if (depth == openedAt.length) openedAt = java.util.Arrays.copyOf(openedAt, depth * 2);
                openedAt[depth++] = i++;
            } else if (b == '}' || b == ']') {
                if (depth > 0) values.add(new int[] {openedAt[--depth], i + 1});
                i++;
            } else if (b == '-' || (b >= '0' && b <= '9') || b == 't' || b == 'f' || b == 'n') {
                int end = i;
                while (end < json.length && !isDelimiter(json[end])) end++;
                values.add(new int[] {i, end});
                i = end;
            } else {
                i++;
            }
        }
        return new JsonValueSpans(values, keys);
    }

    private static int endOfString(byte[] json, int quote) {
        int i = quote + 1;
        while (i < json.length && json[i] != '"') i += json[i] == '\\' ? 2 : 1;
        return Math.min(i + 1, json.length);
    }

    private static int skipSpace(byte[] json, int i) {
        while (i < json.length && (json[i] == ' ' || json[i] == '\n' || json[i] == '\r' || json[i] == '\t')) i++;
        return i;
    }

    private static boolean isDelimiter(byte b) {
        return b == ',' || b == '}' || b == ']' || b == ':' || b == ' ' || b == '\n' || b == '\r' || b == '\t' || b == '"';
    }
}
