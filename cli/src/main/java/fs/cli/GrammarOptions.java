package fs.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import fs.FsException;
import fs.grammar.Grammar;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Holds the answer to a grammar, as llama-cli spells it: GBNF (--grammar TEXT, --grammar-file FILE) or a JSON schema
 * (-j/--json-schema JSON or FILE, -jf/--json-schema-file FILE). Read and compiled before the model loads, so that a
 * bad one is refused at once, in one line.
 */
final class GrammarOptions {
    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--grammar", paramLabel = "GBNF",
            description = "Constrain the answer to a GBNF grammar (llama.cpp's; start rule root), given as text (default: none).")
    String grammarText;

    @Option(names = "--grammar-file", paramLabel = "FILE", description = "Constrain the answer to the GBNF grammar in FILE (default: none).")
    Path grammarFile;

    @Option(names = {"-j", "--json-schema"}, paramLabel = "SCHEMA",
            description = "Constrain the answer to JSON valid for a JSON schema, given as JSON text or as a file (default: none).")
    String jsonSchema;

    @Option(names = {"-jf", "--json-schema-file"}, paramLabel = "FILE",
            description = "Constrain the answer to JSON valid for the JSON schema in FILE (default: none).")
    Path jsonSchemaFile;

    /** The grammar asked for, compiled; null when none. */
    Grammar grammar() {
        List<String> given = new ArrayList<>();
        if (grammarText != null) given.add("--grammar");
        if (grammarFile != null) given.add("--grammar-file");
        if (jsonSchema != null) given.add("--json-schema");
        if (jsonSchemaFile != null) given.add("--json-schema-file");
        if (given.isEmpty()) return null;
        if (given.size() > 1) throw refused(String.join(" and ", given) + " are exclusive: give one grammar");
        String flag = given.getFirst();
        try {
            return switch (flag) {
                case "--grammar" -> Grammar.parse(grammarText);
                case "--grammar-file" -> Grammar.parse(read(grammarFile, flag));
                case "--json-schema" -> Grammar.fromJsonSchema(schema(jsonSchema.strip().startsWith("{")
                        ? jsonSchema : read(Path.of(jsonSchema), flag), flag));
                default -> Grammar.fromJsonSchema(schema(read(jsonSchemaFile, flag), flag));
            };
        } catch (FsException e) {
            throw refused(flag + ": " + e.getMessage());
        }
    }

    private String read(Path file, String flag) {
        try {
            return TokenizeCommand.readUtf8(Files.readAllBytes(file), file.toString());
        } catch (NoSuchFileException e) {
            throw refused(flag + " " + file + ": no such file");
        } catch (IOException e) {
            throw refused(flag + " " + file + ": cannot read: " + e.getMessage());
        }
    }

    private JsonNode schema(String text, String flag) {
        try {
            return new ObjectMapper().readTree(text);
        } catch (JsonProcessingException e) {
            throw refused(flag + ": not JSON: " + e.getOriginalMessage());
        }
    }

    private ParameterException refused(String message) {
        return new ParameterException(command.commandLine(), message);
    }
}
