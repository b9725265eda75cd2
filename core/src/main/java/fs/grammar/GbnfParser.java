package fs.grammar;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads llama.cpp's GBNF: {@code name ::= body} rules, one per line (a body goes on over lines inside parentheses and
 * after {@code |}); literals, character classes, {@code .}, groups, {@code * + ? {m} {m,} {m,n}} and {@code #}
 * comments. Every error names the line and column where it was found.
 */
final class GbnfParser {
    /** The largest repetition bound taken: beyond it the automaton would not fit in memory. */
    static final int MAX_REPETITION = 100_000;

    record Rule(String name, GbnfExpr body, int line, int column) {}

    private final String text;
    private int pos;

    private GbnfParser(String text) {
        this.text = text;
    }

    /** The rules of a GBNF text in the order they are defined. */
    static Map<String, Rule> parse(String text) {
        return new GbnfParser(text).rules();
    }

    private Map<String, Rule> rules() {
        Map<String, Rule> rules = new LinkedHashMap<>();
        skipSpace(true);
        while (pos < text.length()) {
            int start = pos;
            String name = name("a rule name");
            skipSpace(false);
            if (!text.startsWith("::=", pos)) throw error(pos, "expected '::=' after rule name '" + name + "'");
            pos += 3;
            skipSpace(true);
            GbnfExpr body = alternatives(false);
            if (pos < text.length() && text.charAt(pos) != '\n' && text.charAt(pos) != '\r') {
                throw error(pos, "unexpected " + describe(pos) + " in rule '" + name + "'");
            }
            Rule previous = rules.get(name);
            if (previous != null) {
                throw error(start, "rule '" + name + "' is defined twice (first at " + previous.line + ":" + previous.column + ")");
            }
            int[] lc = lineColumn(start);
            rules.put(name, new Rule(name, body, lc[0], lc[1]));
            skipSpace(true);
        }
        return rules;
    }

    private GbnfExpr alternatives(boolean nested) {
        List<GbnfExpr> alternatives = new ArrayList<>();
        alternatives.add(sequence(nested));
        while (pos < text.length() && text.charAt(pos) == '|') {
            pos++;
            skipSpace(true);
            alternatives.add(sequence(nested));
        }
        return alternatives.size() == 1 ? alternatives.getFirst() : new GbnfExpr.Choice(alternatives);
    }

    private GbnfExpr sequence(boolean nested) {
        List<GbnfExpr> items = new ArrayList<>();
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '"') {
                items.add(literal());
            } else if (c == '[') {
                items.add(charClass());
            } else if (c == '.') {
                pos++;
                items.add(new GbnfExpr.Chars(CodePointSet.any()));
            } else if (c == '(') {
                int open = pos++;
                skipSpace(true);
                GbnfExpr inner = alternatives(true);
                if (pos >= text.length() || text.charAt(pos) != ')') throw error(open, "unclosed '('");
                pos++;
                items.add(inner);
            } else if (isNameChar(c)) {
                int start = pos;
                String name = name("a rule name");
                int[] lc = lineColumn(start);
                items.add(new GbnfExpr.RuleRef(name, lc[0], lc[1]));
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (items.isEmpty()) throw error(pos, "'" + c + "' repeats nothing");
                items.set(items.size() - 1, repetition(items.getLast()));
            } else {
                break;
            }
            skipSpace(nested);
        }
        return items.size() == 1 ? items.getFirst() : new GbnfExpr.Sequence(items);
    }

    private GbnfExpr repetition(GbnfExpr item) {
        char c = text.charAt(pos++);
        if (c == '*') return new GbnfExpr.Repeat(item, 0, -1);
        if (c == '+') return new GbnfExpr.Repeat(item, 1, -1);
        if (c == '?') return new GbnfExpr.Repeat(item, 0, 1);
        int open = pos - 1;
        skipSpace(true);
        int min = integer();
        skipSpace(true);
        int max = min;
        if (pos < text.length() && text.charAt(pos) == ',') {
            pos++;
            skipSpace(true);
            max = pos < text.length() && Character.isDigit(text.charAt(pos)) ? integer() : -1;
            skipSpace(true);
        }
        if (pos >= text.length() || text.charAt(pos) != '}') throw error(pos, "expected '}' to close the repetition at " + at(open));
        pos++;
        if (max != -1 && max < min) throw error(open, "repetition {" + min + "," + max + "} has its maximum below its minimum");
        return new GbnfExpr.Repeat(item, min, max);
    }

    private int integer() {
        int start = pos;
        while (pos < text.length() && Character.isDigit(text.charAt(pos))) pos++;
        if (start == pos) throw error(pos, "expected a number");
        if (pos - start > 6 || Integer.parseInt(text, start, pos, 10) > MAX_REPETITION) {
            throw error(start, "repetition bound over " + MAX_REPETITION);
        }
        return Integer.parseInt(text, start, pos, 10);
    }

    private GbnfExpr literal() {
        int open = pos++;
        List<GbnfExpr> chars = new ArrayList<>();
        while (true) {
            if (pos >= text.length() || text.charAt(pos) == '\n') throw error(open, "unterminated string literal");
            if (text.charAt(pos) == '"') break;
            chars.add(new GbnfExpr.Chars(CodePointSet.of(character())));
        }
        pos++;
        return chars.size() == 1 ? chars.getFirst() : new GbnfExpr.Sequence(chars);
    }

    private GbnfExpr charClass() {
        int open = pos++;
        boolean negated = pos < text.length() && text.charAt(pos) == '^';
        if (negated) pos++;
        List<Integer> pairs = new ArrayList<>();
        while (true) {
            if (pos >= text.length() || text.charAt(pos) == '\n') throw error(open, "unterminated character class");
            if (text.charAt(pos) == ']') break;
            int lo = character();
            int hi = lo;
            if (pos + 1 < text.length() && text.charAt(pos) == '-' && text.charAt(pos + 1) != ']') {
                int dash = pos++;
                hi = character();
                if (hi < lo) throw error(dash, "range end below its start in character class");
            }
            pairs.add(lo);
            pairs.add(hi);
        }
        pos++;
        int[] flat = pairs.stream().mapToInt(Integer::intValue).toArray();
        return new GbnfExpr.Chars(CodePointSet.ofRanges(flat, negated));
    }

    /** One character of a literal or class, escapes read. */
    private int character() {
        int start = pos;
        int c = text.codePointAt(pos);
        pos += Character.charCount(c);
        if (c != '\\') return c;
        if (pos >= text.length()) throw error(start, "escape at end of text");
        char e = text.charAt(pos++);
        return switch (e) {
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '\\', '"', '[', ']', '-', '^', '/', '\'' -> e;
            case 'x' -> hex(start, 2);
            case 'u' -> hex(start, 4);
            case 'U' -> hex(start, 8);
            default -> throw error(start, "unknown escape '\\" + e + "'");
        };
    }

    private int hex(int start, int digits) {
        if (pos + digits > text.length()) throw error(start, "escape needs " + digits + " hex digits");
        int value = 0;
        for (int i = 0; i < digits; i++) {
            int d = Character.digit(text.charAt(pos + i), 16);
            if (d < 0) throw error(start, "escape needs " + digits + " hex digits");
            value = value * 16 + d;
        }
        pos += digits;
        if (value > CodePointSet.MAX) throw error(start, "escape beyond U+10FFFF");
        return value;
    }

    private String name(String what) {
        int start = pos;
        while (pos < text.length() && isNameChar(text.charAt(pos))) pos++;
        if (start == pos) throw error(pos, "expected " + what + ", found " + describe(pos));
        return text.substring(start, pos);
    }

    private static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    }

    /** Skips blanks and comments; line ends too when {@code newlines} (inside groups, after '|' and '::='). */
    private void skipSpace(boolean newlines) {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
                pos++;
            } else if (c == '#') {
                while (pos < text.length() && text.charAt(pos) != '\n' && text.charAt(pos) != '\r') pos++;
            } else {
                return;
            }
        }
    }

    private String describe(int at) {
        if (at >= text.length()) return "end of text";
        int c = text.codePointAt(at);
        return c < 32 ? String.format("character U+%04X", c) : "'" + Character.toString(c) + "'";
    }

    private int[] lineColumn(int at) {
        int line = 1, column = 1;
        for (int i = 0; i < at && i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                line++;
                column = 1;
            } else {
                column++;
            }
        }
        return new int[] {line, column};
    }

    private String at(int offset) {
        int[] lc = lineColumn(offset);
        return lc[0] + ":" + lc[1];
    }

    private GrammarException error(int offset, String message) {
        return new GrammarException("grammar " + at(offset) + ": " + message);
    }
}
