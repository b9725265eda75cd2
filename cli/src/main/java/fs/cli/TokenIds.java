package fs.cli;

import fs.FsException;
import fs.model.ModelConfig;
import java.util.Arrays;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Token ids as the command line writes and reads them: printed separated by spaces (fs tokenize, --print-ids), read
 * separated by spaces, commas or both, optionally in brackets, so that what one command prints another takes as it is
 * ({@code "1 2 3"}, {@code 1,2,3}, {@code "1, 2, 3"}, {@code [1, 2, 3]} as Python and JSON print a list).
 */
record TokenIds(int[] ids) {
    private static final Pattern SEPARATORS = Pattern.compile("[\\s,]+");

    /** The ids in {@code text}; throws {@link TypeConversionException} for anything else, naming the first misfit. */
    static TokenIds parse(String text) {
        String list = text.strip();
        if (list.startsWith("[") && list.endsWith("]")) list = list.substring(1, list.length() - 1).strip();
        String[] words = Arrays.stream(SEPARATORS.split(list)).filter(word -> !word.isEmpty()).toArray(String[]::new);
        if (words.length == 0) throw new TypeConversionException("no token ids");
        int[] ids = new int[words.length];
        for (int i = 0; i < words.length; i++) ids[i] = id(words[i]);
        return new TokenIds(ids);
    }

    private static int id(String word) {
        try {
            int id = Integer.parseInt(word);
            if (id >= 0) return id;
        } catch (NumberFormatException e) {
            // not a number: refused as a negative one is
        }
        throw new TypeConversionException("'" + word + "' is not a token id (ids are integers from 0, separated by "
                + "spaces or commas)");
    }

    /** Throws the user-facing error for an id outside {@code config}'s vocabulary, naming the option it came from. */
    static void checkInVocabulary(ModelConfig config, int[] ids, String option) {
        int vocab = config.vocabSize();
        for (int id : ids) {
            if (id < 0 || id >= vocab) {
                throw new FsException(option + ": token id " + id + " is outside the vocabulary (0.." + (vocab - 1) + ")");
            }
        }
    }

    /** The ids of several arguments, in order, as one sequence. */
    static int[] concatenated(Iterable<TokenIds> parts) {
        int[] all = new int[0];
        for (TokenIds part : parts) {
            int start = all.length;
            all = Arrays.copyOf(all, start + part.ids.length);
            System.arraycopy(part.ids, 0, all, start, part.ids.length);
        }
        return all;
    }

    /** How fs prints ids: separated by single spaces, which {@link #parse} reads back. */
    static String spaced(int[] ids) {
        return joined(ids, " ");
    }

    static String joined(int[] ids, String separator) {
        StringBuilder s = new StringBuilder(ids.length * 7);
        for (int i = 0; i < ids.length; i++) {
            if (i > 0) s.append(separator);
            s.append(ids[i]);
        }
        return s.toString();
    }

    /** Lets picocli read an option or argument of ids, its errors reported as picocli's invalid values. */
    static final class Converter implements ITypeConverter<TokenIds> {
        @Override
        public TokenIds convert(String value) {
            return parse(value);
        }
    }
}
