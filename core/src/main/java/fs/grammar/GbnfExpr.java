package fs.grammar;

import java.util.List;

/** The parsed form of a GBNF rule body, before it is compiled into the matcher's automaton. */
sealed interface GbnfExpr {
    /** One of several alternatives. */
    record Choice(List<GbnfExpr> alternatives) implements GbnfExpr {}

    /** The items one after another; empty: the empty string. */
    record Sequence(List<GbnfExpr> items) implements GbnfExpr {}

    /** One code point of a set. */
    record Chars(CodePointSet set) implements GbnfExpr {}

    /** A use of rule {@code name}, written at line:col. */
    record RuleRef(String name, int line, int column) implements GbnfExpr {}

    /** {@code item} between {@code min} and {@code max} times; max -1: no bound. */
    record Repeat(GbnfExpr item, int min, int max) implements GbnfExpr {}
}
