package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The JDK's own reading of the modules' packages agrees with {@link ModuleLayeringTest}: jdeps's package graph of
 * fs-core, fs-server, fs-langchain4j, fs-spring-ai and fs-cli has no cycle.
 */
class JdepsPackageCyclesTest {
    /** One arrow of {@code jdeps -verbose:package}: "   fs.api   -> fs.chat   fs-core.jar". */
    private static final Pattern ARROW = Pattern.compile("^\\s+(\\S+)\\s+->\\s+(\\S+)\\s+\\S.*$");

    @Test
    void thePackageGraphHasNoCycle() {
        Map<String, Set<String>> graph = packageGraph(ModuleClasses.paths());
        assertTrue(graph.keySet().containsAll(List.of("fs", "fs.api", "fs.server", "fs.langchain4j", "fs.springai",
                "fs.cli")),
                graph.keySet().toString());
        assertTrue(graph.get("fs.cli").contains("fs.server"), "jdeps sees the arrows between modules");
        assertEquals(Optional.empty(), cycle(graph));
    }

    @Test
    void aCycleIsFound() {
        Map<String, Set<String>> graph = new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a", "d"),
                "d", Set.of()));
        assertEquals(Optional.of(List.of("a", "b", "c", "a")), cycle(graph));
        graph.put("c", Set.of("d"));
        assertEquals(Optional.empty(), cycle(graph));
    }

    /** Package → the packages of these classes it uses (other packages, the JDK's and the libraries', left out). */
    private static Map<String, Set<String>> packageGraph(List<Path> classes) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("no jdeps"));
        List<String> args = new ArrayList<>(List.of("-verbose:package"));
        classes.forEach(path -> args.add(path.toString()));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = jdeps.run(new PrintWriter(out, true), new PrintWriter(err, true), args.toArray(String[]::new));
        assertEquals(0, exit, err.toString());
        Map<String, Set<String>> arrows = new TreeMap<>();
        for (String line : out.toString().lines().toList()) {
            Matcher arrow = ARROW.matcher(line);
            if (arrow.matches()) arrows.computeIfAbsent(arrow.group(1), p -> new TreeSet<>()).add(arrow.group(2));
        }
        arrows.values().forEach(targets -> targets.retainAll(arrows.keySet()));
        return arrows;
    }

    /** The first cycle a depth-first walk meets, from its first package back to it; empty when there is none. */
    static Optional<List<String>> cycle(Map<String, Set<String>> graph) {
        Set<String> done = new HashSet<>();
        for (String start : graph.keySet()) {
            Optional<List<String>> found = cycleFrom(start, graph, new ArrayList<>(), done);
            if (found.isPresent()) return found;
        }
        return Optional.empty();
    }

    private static Optional<List<String>> cycleFrom(String node, Map<String, Set<String>> graph, List<String> path,
            Set<String> done) {
        int seen = path.indexOf(node);
        if (seen >= 0) {
            List<String> cycle = new ArrayList<>(path.subList(seen, path.size()));
            cycle.add(node);
            return Optional.of(cycle);
        }
        if (done.contains(node)) return Optional.empty();
        path.add(node);
        for (String next : graph.getOrDefault(node, Set.of())) {
            Optional<List<String>> found = cycleFrom(next, graph, path, done);
            if (found.isPresent()) return found;
        }
        path.removeLast();
        done.add(node);
        return Optional.empty();
    }
}
