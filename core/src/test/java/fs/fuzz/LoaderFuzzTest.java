package fs.fuzz;

import fs.chat.ChatTemplate;
import fs.model.GenerationConfig;
import fs.model.ModelConfig;
import fs.safetensors.SafetensorsFile;
import fs.safetensors.SafetensorsWriter;
import fs.tensor.DType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fuzz target for each model-file loader outside the tokenizer (that one is {@code fs.tokenizer.TokenizerFuzzTest}):
 * mutated copies of real files must load or be refused with one plain FsException line. See docs/RELIABILITY.md.
 */
class LoaderFuzzTest {
    /** Per target in CI: a few seconds each on a busy machine; the long campaign sets fs.fuzz.tries instead. */
    private static final int CI_TRIES = 1_500;


    @TempDir
    Path dir;

    @Test
    void configJson() {
        Path file = dir.resolve("config.json");
        FuzzCampaign.runAndCheck(new FuzzCampaign.Target("config.json", "config.json",
                new Mutator(List.of(seed("config.json"), seed("config-untied.json"))), input -> {
                    Files.write(file, input);
                    ModelConfig.read(file);
                }), CI_TRIES);
    }

    @Test
    void generationConfigJson() {
        Path file = dir.resolve("generation_config.json");
        FuzzCampaign.runAndCheck(new FuzzCampaign.Target("generation_config.json", "generation_config.json",
                new Mutator(List.of(seed("generation_config.json"))), input -> {
                    Files.write(file, input);
                    GenerationConfig.read(dir, 151_936); // Qwen3's vocabulary: the seed's ids are inside it
                }), CI_TRIES);
    }

    @Test
    void tokenizerConfigJson() {
        Path file = dir.resolve("tokenizer_config.json");
        FuzzCampaign.runAndCheck(new FuzzCampaign.Target("tokenizer_config.json", "tokenizer_config.json",
                new Mutator(List.of(seed("tokenizer_config.json"))), input -> {
                    Files.write(file, input);
                    ChatTemplate.load(dir);
                }), CI_TRIES);
    }

    @Test
    void safetensorsHeader() {
        Path file = dir.resolve("model.safetensors");
        FuzzCampaign.runAndCheck(new FuzzCampaign.Target("safetensors", "model.safetensors", safetensorsInputs(), input -> {
            Files.write(file, input);
            SafetensorsFile.open(file).close();
        }), CI_TRIES);
    }

    /**
     * Mostly a mutated header behind a size field that matches it (else nearly every input would stop at the size
     * check), sometimes with the data cut short; now and then the whole file mutated blind, size field included.
     */
    private FuzzCampaign.Inputs safetensorsInputs() {
        List<byte[]> files = new ArrayList<>();
        files.add(safetensors(new SafetensorsWriter()
                .f32("model.embed_tokens.weight", new long[] {4, 2}, 1, 2, 3, 4, 5, 6, 7, 8)
                .bf16("model.norm.weight", new long[] {2}, 1, -1)
                .f16("lm_head.weight", new long[] {2, 2}, 0.5f, 0.25f, 2, 4)));
        files.add(safetensors(new SafetensorsWriter().metadata("format", "pt").zeros("a", DType.I32, 3, 1).zeros("b", DType.F32)));
        files.add(safetensors(new SafetensorsWriter().zeros("scalar", DType.BF16).zeros("empty", DType.F32, 0, 5)));
        List<byte[]> headers = new ArrayList<>();
        List<byte[]> data = new ArrayList<>();
        for (byte[] file : files) {
            int headerSize = (int) ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN).getLong();
            headers.add(Arrays.copyOfRange(file, 8, 8 + headerSize));
            data.add(Arrays.copyOfRange(file, 8 + headerSize, file.length));
        }
        Mutator headerMutator = new Mutator(headers);
        Mutator fileMutator = new Mutator(files);
        return (SplittableRandom random) -> {
            if (random.nextInt(8) == 0) return fileMutator.next(random);
            byte[] header = headerMutator.next(random);
            byte[] body = data.get(random.nextInt(data.size()));
            if (random.nextInt(4) == 0) body = Arrays.copyOf(body, random.nextInt(body.length + 1));
            return ByteBuffer.allocate(8 + header.length + body.length).order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(header.length).put(header).put(body).array();
        };
    }

    private byte[] safetensors(SafetensorsWriter writer) {
        try {
            Path file = Files.createTempFile(dir, "seed", ".safetensors");
            writer.write(file);
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A seed file from test resources: copies of the committed models' files (see fuzz/README.md there). */
    static byte[] seed(String name) {
        try (InputStream in = LoaderFuzzTest.class.getResourceAsStream("/fuzz/" + name)) {
            if (in == null) throw new IllegalStateException("no seed /fuzz/" + name);
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
