package fs.grammar;

import fs.FsException;

/**
 * A grammar or JSON schema that cannot be used, with one line saying what and where: line:col in a GBNF text, the
 * JSON pointer and keyword in a schema.
 */
public final class GrammarException extends FsException {
    public GrammarException(String message) {
        super(message);
    }
}
