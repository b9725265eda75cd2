package fs.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.Quoted;
import fs.gguf.GgufFile;
import fs.quantize.ImportanceMatrix;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What {@code fs inspect} shows of an importance matrix (fs imatrix's or llama-imatrix's GGUF file) rather than a
 * model: what the file is for, its entries, the chunks and texts it was computed over, and each matrix's entry.
 */
final class ImportanceMatrixReport {
    private ImportanceMatrixReport() {}

    static void printText(PrintWriter out, String model, GgufFile file, ImportanceMatrix matrix) {
        String[][] summary = {
            {"model", model},
            {"format", "GGUF v" + file.version() + ", alignment " + file.alignment() + ", "
                    + file.metadata().values().size() + " metadata keys"},
            {"type", "importance matrix (general.type 'imatrix'), for fs quantize --imatrix or llama-quantize "
                    + "--imatrix"},
            {"entries", matrix.tensors().size() + " matrices (a NAME.in_sum2 and a NAME.counts tensor each"
                    + (matrix.tensors().values().stream().anyMatch(sums -> sums.matrices() > 1)
                            ? "; an expert stack's per expert)" : ")")},
            {"chunks", matrix.chunkCount() + " of " + matrix.chunkSize() + " tokens"},
            {"datasets", matrix.datasets().isEmpty() ? "none recorded"
                    : matrix.datasets().stream().map(Quoted::quote).collect(Collectors.joining(", "))}};
        for (String[] line : summary) out.printf("%-14s %s%n", line[0], line[1]);
        out.println();
        GgufMetadataSummary.lines(file.metadata().values()).forEach(out::println);
        out.println();
        int width = matrix.tensors().keySet().stream().mapToInt(String::length).max().orElse(0);
        width = Math.max(width, "MATRIX".length());
        boolean experts = matrix.tensors().values().stream().anyMatch(sums -> sums.matrices() > 1);
        if (!experts) {
            String format = "%-" + width + "s  %7s  %10s%n";
            out.printf(Locale.ROOT, format, "MATRIX", "COLUMNS", "TOKENS");
            for (Map.Entry<String, ImportanceMatrix.Sums> entry : matrix.tensors().entrySet()) {
                ImportanceMatrix.Sums sums = entry.getValue();
                out.printf(Locale.ROOT, format, entry.getKey(), sums.columns(), sums.count());
            }
            return;
        }
        // a mixture of experts: an expert stack's rows are per expert, each the tokens that chose it
        String format = "%-" + width + "s  %7s  %7s  %10s  %s%n";
        out.printf(Locale.ROOT, format, "MATRIX", "COLUMNS", "EXPERTS", "ROWS", "ROWS PER EXPERT");
        for (Map.Entry<String, ImportanceMatrix.Sums> entry : matrix.tensors().entrySet()) {
            ImportanceMatrix.Sums sums = entry.getValue();
            out.printf(Locale.ROOT, format, entry.getKey(), sums.columns(), sums.matrices() > 1 ? sums.matrices() : "-",
                    sums.count(), sums.matrices() > 1 ? perExpert(sums.counts()) : "");
        }
    }

    /** "449 322 0 …": each expert's rows; an expert that saw none is one llama-quantize weighs uniformly. */
    private static String perExpert(long[] counts) {
        return java.util.Arrays.stream(counts).mapToObj(String::valueOf).collect(Collectors.joining(" "));
    }

    static ObjectNode json(String model, GgufFile file, ImportanceMatrix matrix) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("model", model);
        root.put("format", "gguf");
        root.put("type", "imatrix");
        ObjectNode header = root.putObject("gguf");
        header.put("version", file.version());
        header.put("alignment", file.alignment());
        header.set("metadata", GgufMetadataSummary.json(file.metadata().values()));
        ObjectNode imatrix = root.putObject("imatrix");
        imatrix.put("entries", matrix.tensors().size());
        imatrix.put("chunk_count", matrix.chunkCount());
        imatrix.put("chunk_size", matrix.chunkSize());
        ArrayNode datasets = imatrix.putArray("datasets");
        matrix.datasets().forEach(datasets::add);
        ArrayNode matrices = imatrix.putArray("matrices");
        for (Map.Entry<String, ImportanceMatrix.Sums> entry : matrix.tensors().entrySet()) {
            ObjectNode node = matrices.addObject();
            node.put("name", entry.getKey());
            ImportanceMatrix.Sums sums = entry.getValue();
            node.put("columns", sums.columns());
            node.put("count", sums.count());
            if (sums.matrices() > 1) { // an expert stack: llama-imatrix's count per expert
                node.put("experts", sums.matrices());
                ArrayNode counts = node.putArray("expert_counts");
                for (long count : sums.counts()) counts.add(count);
            }
        }
        return root;
    }
}
