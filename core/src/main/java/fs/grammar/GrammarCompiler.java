package fs.grammar;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns parsed GBNF rules into the matcher's automaton: one NFA per rule (Thompson's construction, then its empty
 * moves folded in), whose moves read a code point of a set or call another rule. What can never reach the end of its
 * rule is cut away, so that every state the matcher can be in has a way forward; left recursion, which would send the
 * matcher into an endless descent, is refused.
 */
final class GrammarCompiler {
    private static final int MAX_STATES = 4_000_000;

    private final Map<String, GbnfParser.Rule> rules;
    private final Map<String, Integer> ruleIndex = new HashMap<>();
    // The NFA as built, with empty moves.
    private final List<int[]> empty = new ArrayList<>();      // per state: targets of empty moves
    private final List<List<Object[]>> reads = new ArrayList<>(); // per state: {CodePointSet, target}
    private final List<int[]> calls = new ArrayList<>();      // per state: rule, return state, rule, return state...
    private int[] ruleStart;
    private int[] ruleFinal;

    private GrammarCompiler(Map<String, GbnfParser.Rule> rules) {
        this.rules = rules;
    }

    static Grammar compile(Map<String, GbnfParser.Rule> rules) {
        return new GrammarCompiler(rules).build();
    }

    private Grammar build() {
        if (rules.isEmpty()) throw new GrammarException("grammar 1:1: empty grammar (no rule)");
        if (!rules.containsKey("root")) throw new GrammarException("grammar 1:1: no rule 'root' (the start rule)");
        int n = 0;
        for (String name : rules.keySet()) ruleIndex.put(name, n++);
        String[] names = rules.keySet().toArray(String[]::new);
        ruleStart = new int[n];
        ruleFinal = new int[n];
        for (int r = 0; r < n; r++) {
            ruleStart[r] = newState();
            ruleFinal[r] = build(rules.get(names[r]).body(), ruleStart[r]);
        }
        int states = empty.size();
        int[] stateRule = new int[states];
        Arrays.fill(stateRule, -1);
        // Closures: the reads, calls and finality of each state with its empty moves followed.
        boolean[] fin = new boolean[states];
        List<List<Object[]>> closedReads = new ArrayList<>(states);
        List<int[]> closedCalls = new ArrayList<>(states);
        int[] finalOf = new int[states];
        Arrays.fill(finalOf, -1);
        for (int r = 0; r < n; r++) finalOf[ruleFinal[r]] = r;
        int[] seenBy = new int[states]; // the state whose closure last reached each state, plus one
        ArrayDeque<Integer> work = new ArrayDeque<>();
        for (int q = 0; q < states; q++) {
            work.push(q);
            seenBy[q] = q + 1;
            List<Object[]> qReads = new ArrayList<>();
            List<Integer> qCalls = new ArrayList<>();
            boolean qFinal = false;
            while (!work.isEmpty()) {
                int s = work.pop();
                if (finalOf[s] >= 0) qFinal = true;
                for (Object[] read : reads.get(s)) if (!((CodePointSet) read[0]).isEmpty()) qReads.add(read);
                for (int c : calls.get(s)) qCalls.add(c);
                for (int t : empty.get(s)) if (seenBy[t] != q + 1) {
                    seenBy[t] = q + 1;
                    work.push(t);
                }
            }
            fin[q] = qFinal;
            closedReads.add(qReads);
            closedCalls.add(qCalls.stream().mapToInt(Integer::intValue).toArray());
        }
        // Which rule each state belongs to, following the moves from the rules' starts.
        for (int r = 0; r < n; r++) {
            work.push(ruleStart[r]);
            stateRule[ruleStart[r]] = r;
            while (!work.isEmpty()) {
                int s = work.pop();
                for (Object[] read : closedReads.get(s)) mark((int) read[1], r, stateRule, work);
                int[] c = closedCalls.get(s);
                for (int i = 0; i < c.length; i += 2) mark(c[i + 1], r, stateRule, work);
            }
        }
        boolean[] productive = productiveRules(n, fin, closedReads, closedCalls);
        int root = ruleIndex.get("root");
        if (!productive[root]) throw new GrammarException("grammar " + where("root") + ": rule 'root' matches nothing");
        // States that can still reach their rule's end, by reads and by calls of rules that match something.
        List<List<Integer>> back = new ArrayList<>(states);
        for (int q = 0; q < states; q++) back.add(new ArrayList<>());
        for (int q = 0; q < states; q++) {
            if (stateRule[q] < 0) continue;
            for (Object[] read : closedReads.get(q)) back.get((int) read[1]).add(q);
            int[] c = closedCalls.get(q);
            for (int i = 0; i < c.length; i += 2) if (productive[c[i]]) back.get(c[i + 1]).add(q);
        }
        boolean[] alive = new boolean[states];
        for (int q = 0; q < states; q++) if (stateRule[q] >= 0 && fin[q]) {
            alive[q] = true;
            work.push(q);
        }
        while (!work.isEmpty()) {
            int s = work.pop();
            for (int p : back.get(s)) if (!alive[p]) {
                alive[p] = true;
                work.push(p);
            }
        }
        // The trimmed automaton.
        List<CodePointSet> edgeSets = new ArrayList<>();
        List<Integer> edgeTargets = new ArrayList<>();
        int[][] stateEdges = new int[states][];
        int[][] stateCalls = new int[states][];
        for (int q = 0; q < states; q++) {
            List<Integer> edges = new ArrayList<>();
            List<Integer> qCalls = new ArrayList<>();
            if (stateRule[q] >= 0 && alive[q]) {
                for (Object[] read : closedReads.get(q)) {
                    if (!alive[(int) read[1]]) continue;
                    edges.add(edgeSets.size());
                    edgeSets.add((CodePointSet) read[0]);
                    edgeTargets.add((int) read[1]);
                }
                int[] c = closedCalls.get(q);
                for (int i = 0; i < c.length; i += 2) {
                    if (!productive[c[i]] || !alive[c[i + 1]]) continue;
                    qCalls.add(c[i]);
                    qCalls.add(c[i + 1]);
                }
            }
            stateEdges[q] = edges.stream().mapToInt(Integer::intValue).toArray();
            stateCalls[q] = qCalls.stream().mapToInt(Integer::intValue).toArray();
        }
        refuseLeftRecursion(n, names, fin, stateEdges, stateCalls);
        return new Grammar(names, ruleStart.clone(), root, fin, stateEdges, stateCalls,
                edgeSets.toArray(CodePointSet[]::new), edgeTargets.stream().mapToInt(Integer::intValue).toArray());
    }

    private static void mark(int state, int rule, int[] stateRule, ArrayDeque<Integer> work) {
        if (stateRule[state] >= 0) return;
        stateRule[state] = rule;
        work.push(state);
    }

    /** Rules that match at least one string: their start reaches their end by reads and calls of such rules. */
    private boolean[] productiveRules(int n, boolean[] fin, List<List<Object[]>> closedReads, List<int[]> closedCalls) {
        boolean[] productive = new boolean[n];
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int r = 0; r < n; r++) {
                if (productive[r]) continue;
                if (reachesEnd(ruleStart[r], fin, closedReads, closedCalls, productive)) {
                    productive[r] = true;
                    changed = true;
                }
            }
        }
        return productive;
    }

    private static boolean reachesEnd(int start, boolean[] fin, List<List<Object[]>> closedReads, List<int[]> closedCalls,
                                      boolean[] productive) {
        BitSet seen = new BitSet();
        ArrayDeque<Integer> work = new ArrayDeque<>();
        work.push(start);
        seen.set(start);
        while (!work.isEmpty()) {
            int s = work.pop();
            if (fin[s]) return true;
            for (Object[] read : closedReads.get(s)) {
                int t = (int) read[1];
                if (!seen.get(t)) {
                    seen.set(t);
                    work.push(t);
                }
            }
            int[] c = closedCalls.get(s);
            for (int i = 0; i < c.length; i += 2) {
                if (productive[c[i]] && !seen.get(c[i + 1])) {
                    seen.set(c[i + 1]);
                    work.push(c[i + 1]);
                }
            }
        }
        return false;
    }

    /**
     * Refuses a rule that can call itself before reading anything (directly or through rules that may match the
     * empty string): expanding it would never end.
     */
    private void refuseLeftRecursion(int n, String[] names, boolean[] fin, int[][] stateEdges, int[][] stateCalls) {
        boolean[] nullable = new boolean[n];
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int r = 0; r < n; r++) {
                if (nullable[r]) continue;
                boolean reaches = false;
                for (int s : emptyReach(ruleStart[r], stateCalls, nullable)) reaches |= fin[s];
                if (reaches) {
                    nullable[r] = true;
                    changed = true;
                }
            }
        }
        List<List<Integer>> leftCalls = new ArrayList<>(n);
        for (int r = 0; r < n; r++) {
            List<Integer> callees = new ArrayList<>();
            for (int s : emptyReach(ruleStart[r], stateCalls, nullable)) {
                int[] c = stateCalls[s];
                for (int i = 0; i < c.length; i += 2) if (!callees.contains(c[i])) callees.add(c[i]);
            }
            leftCalls.add(callees);
        }
        int[] color = new int[n]; // 0 unseen, 1 on the path, 2 done
        for (int r = 0; r < n; r++) {
            List<Integer> path = new ArrayList<>();
            List<Integer> cycle = findCycle(r, leftCalls, color, path);
            if (cycle != null) {
                StringBuilder chain = new StringBuilder();
                for (int rule : cycle) chain.append(chain.isEmpty() ? "" : " -> ").append(names[rule]);
                String first = names[cycle.getFirst()];
                throw new GrammarException("grammar " + where(first) + ": rule '" + first + "' is left-recursive ("
                        + chain + ")");
            }
        }
    }

    /** States reachable from {@code start} without reading: through calls of rules that may match nothing. */
    private static List<Integer> emptyReach(int start, int[][] stateCalls, boolean[] nullable) {
        List<Integer> reached = new ArrayList<>();
        reached.add(start);
        for (int i = 0; i < reached.size(); i++) {
            int[] c = stateCalls[reached.get(i)];
            for (int j = 0; j < c.length; j += 2) {
                if (nullable[c[j]] && !reached.contains(c[j + 1])) reached.add(c[j + 1]);
            }
        }
        return reached;
    }

    private static List<Integer> findCycle(int r, List<List<Integer>> edges, int[] color, List<Integer> path) {
        if (color[r] == 2) return null;
        if (color[r] == 1) {
            List<Integer> cycle = new ArrayList<>(path.subList(path.indexOf(r), path.size()));
            cycle.add(r);
            return cycle;
        }
        color[r] = 1;
        path.add(r);
        for (int next : edges.get(r)) {
            List<Integer> cycle = findCycle(next, edges, color, path);
            if (cycle != null) return cycle;
        }
        path.removeLast();
        color[r] = 2;
        return null;
    }

    private String where(String rule) {
        GbnfParser.Rule r = rules.get(rule);
        return r.line() + ":" + r.column();
    }

    private int newState() {
        if (empty.size() >= MAX_STATES) throw new GrammarException("grammar 1:1: too large (over " + MAX_STATES + " states)");
        empty.add(new int[0]);
        reads.add(new ArrayList<>());
        calls.add(new int[0]);
        return empty.size() - 1;
    }

    private void emptyMove(int from, int to) {
        int[] e = empty.get(from);
        int[] grown = Arrays.copyOf(e, e.length + 1);
        grown[e.length] = to;
        empty.set(from, grown);
    }

    /** Adds {@code expr}'s moves leaving {@code from}; returns the state where it ends. */
    private int build(GbnfExpr expr, int from) {
        return switch (expr) {
            case GbnfExpr.Chars chars -> {
                int to = newState();
                reads.get(from).add(new Object[] {chars.set(), to});
                yield to;
            }
            case GbnfExpr.Sequence sequence -> {
                int at = from;
                for (GbnfExpr item : sequence.items()) at = build(item, at);
                yield at;
            }
            case GbnfExpr.Choice choice -> {
                int end = newState();
                for (GbnfExpr alternative : choice.alternatives()) {
                    int entry = newState();
                    emptyMove(from, entry);
                    emptyMove(build(alternative, entry), end);
                }
                yield end;
            }
            case GbnfExpr.RuleRef ref -> {
                Integer rule = ruleIndex.get(ref.name());
                if (rule == null) {
                    throw new GrammarException("grammar " + ref.line() + ":" + ref.column() + ": undefined rule '" + ref.name() + "'");
                }
                int to = newState();
                int[] c = calls.get(from);
                int[] grown = Arrays.copyOf(c, c.length + 2);
                grown[c.length] = rule;
                grown[c.length + 1] = to;
                calls.set(from, grown);
                yield to;
            }
            case GbnfExpr.Repeat repeat -> {
                int at = from;
                for (int i = 0; i < repeat.min(); i++) at = build(repeat.item(), at);
                if (repeat.max() < 0) {
                    int loop = newState();
                    emptyMove(at, loop);
                    emptyMove(build(repeat.item(), loop), loop);
                    yield loop;
                }
                int end = newState();
                emptyMove(at, end);
                for (int i = repeat.min(); i < repeat.max(); i++) {
                    at = build(repeat.item(), at);
                    emptyMove(at, end);
                }
                yield end;
            }
        };
    }
}
