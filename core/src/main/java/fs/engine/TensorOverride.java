package fs.engine;

import fs.FsException;
import fs.model.FeedForward;
import fs.model.ModelConfig;
import fs.model.TensorNaming;
import fs.model.TensorRole;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The subset of llama.cpp's {@code -ot/--override-tensor PATTERN=DEVICE} fs takes: DEVICE is CPU, and PATTERN (a
 * regular expression, found anywhere in a name, as llama.cpp's) names GGUF tensors of the layers' feed-forward blocks
 * ({@code blk.N.ffn_*}: ffn_norm, ffn_gate/up/down, ffn_gate_inp, ffn_gate/up/down_exps), whatever format the model is
 * stored in. fs places whole blocks, so a layer any of whose feed-forward tensors the pattern finds runs its whole
 * feed-forward block on the CPU; {@code -ot exps=CPU} is {@code --cpu-moe}.
 */
public record TensorOverride(Pattern pattern) {
    private static final Set<TensorRole> ATTENTION = EnumSet.of(TensorRole.ATTN_NORM, TensorRole.Q, TensorRole.K,
            TensorRole.V, TensorRole.O, TensorRole.Q_NORM, TensorRole.K_NORM);
    private static final List<TensorRole> DENSE = List.of(TensorRole.FFN_NORM, TensorRole.GATE, TensorRole.UP,
            TensorRole.DOWN);
    private static final List<TensorRole> EXPERTS = List.of(TensorRole.FFN_NORM, TensorRole.ROUTER,
            TensorRole.EXPERT_GATE, TensorRole.EXPERT_UP, TensorRole.EXPERT_DOWN);

    /** -ot's value: PATTERN=CPU, several separated by commas as llama.cpp's; anything else an FsException. */
    public static List<TensorOverride> parse(String value) {
        List<TensorOverride> overrides = new ArrayList<>();
        for (String item : value.split(",")) {
            int equals = item.lastIndexOf('=');
            if (equals <= 0) throw new FsException("-ot " + item + ": give PATTERN=CPU, e.g. -ot exps=CPU");
            String device = item.substring(equals + 1);
            if (!device.toUpperCase(Locale.ROOT).equals("CPU")) {
                throw new FsException("-ot " + item + ": fs moves tensors to the CPU only (PATTERN=CPU), not to "
                        + device);
            }
            try {
                overrides.add(new TensorOverride(Pattern.compile(item.substring(0, equals))));
            } catch (PatternSyntaxException e) {
                throw new FsException("-ot " + item + ": not a regular expression: " + e.getDescription());
            }
        }
        return List.copyOf(overrides);
    }

    /**
     * The layers whose feed-forward block this pattern moves to the CPU. A pattern that finds no tensor of the model,
     * or finds one outside the feed-forward blocks (attention, the embedding, the output), is an FsException.
     */
    public Set<Integer> feedForwardLayers(ModelConfig config) {
        TensorNaming gguf = TensorNaming.GGUF;
        for (String other : List.of(gguf.embedding(), gguf.norm(), gguf.output())) refuseOutsideFeedForward(other);
        Set<Integer> layers = new TreeSet<>();
        for (int l = 0; l < config.numHiddenLayers(); l++) {
            for (TensorRole role : ATTENTION) refuseOutsideFeedForward(gguf.layer(l, role));
            List<TensorRole> roles = config.feedForward(l) instanceof FeedForward.Experts ? EXPERTS : DENSE;
            for (TensorRole role : roles) if (pattern.matcher(gguf.layer(l, role)).find()) layers.add(l);
        }
        if (layers.isEmpty()) {
            throw new FsException("-ot " + pattern + "=CPU matches no tensor of this model (GGUF names, e.g. "
                    + gguf.layer(0, TensorRole.GATE) + ", " + gguf.layer(0, TensorRole.EXPERT_GATE) + ")");
        }
        return layers;
    }

    private void refuseOutsideFeedForward(String name) {
        if (pattern.matcher(name).find()) {
            throw new FsException("-ot " + pattern + "=CPU matches " + name + ": fs moves only the layers' feed-forward "
                    + "tensors (blk.N.ffn_*) to the CPU, a layer's whole feed-forward block at once");
        }
    }
}
