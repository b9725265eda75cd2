package fs.engine;

import fs.HumanSize;
import fs.backend.Backend;
import fs.model.FeedForward;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Placement;
import fs.tensor.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where an {@link Offload} puts each part of one model, and what that costs each side: {@code gpuLayers} resolved to
 * 0..layers + 1 (layers + 1: the output too, as llama.cpp counts it), {@code cpuFeedForwards} the layers whose
 * feed-forward block runs on the CPU (--cpu-moe, --n-cpu-moe and -ot resolved against the config), and the bytes
 * of weights and KV cache (one sequence at the context length) on the device and on the CPU. The CPU's weights stay
 * mapped from the file, so its bytes are what the CPU reads, not a copy. A model wholly on the device also embeds
 * there (as without -ngl); otherwise the embedding runs on the CPU, as llama.cpp's does.
 */
public record OffloadPlan(int layers, int gpuLayers, Set<Integer> cpuFeedForwards, long deviceWeightBytes,
                          long deviceCacheBytes, long hostWeightBytes, long hostCacheBytes) {
    /**
     * The plan of {@code offload} for a model of {@code weights}, each layer's KV cache {@code layerCacheBytes}, on a
     * device of {@code deviceMemory} bytes (CL_DEVICE_GLOBAL_MEM_SIZE): -ngl auto takes the most layers, from the
     * output end, whose weights and caches fit in {@code deviceMemory} less its {@link Offload#fitTarget}, then the output if
     * every layer fits.
     */
    public static OffloadPlan of(Offload offload, ModelConfig config, ModelWeights weights, long layerCacheBytes,
            long deviceMemory) {
        int layers = weights.layers().size();
        Set<Integer> cpuFeedForwards = cpuFeedForwards(offload, config);
        int gpuLayers = offload.gpuLayers() == Offload.AUTO
                ? fit(deviceMemory - offload.fitTarget(), layerDeviceBytes(weights, cpuFeedForwards, layerCacheBytes),
                        ModelWeights.bytesOf(outputPart(weights, cpuFeedForwards.isEmpty())))
                : (int) Math.min(offload.gpuLayers(), layers + 1L);
        List<Tensor> device = new ArrayList<>(), host = new ArrayList<>();
        int deviceCaches = 0;
        for (int l = 0; l < layers; l++) {
            ModelWeights.Layer layer = weights.layers().get(l);
            boolean onDevice = l >= layers - Math.min(gpuLayers, layers);
            (onDevice ? device : host).addAll(layer.attentionTensors());
            (onDevice && !cpuFeedForwards.contains(l) ? device : host).addAll(layer.feedForwardTensors());
            if (onDevice) deviceCaches++;
        }
        boolean whole = gpuLayers > layers && cpuFeedForwards.isEmpty();
        (whole ? device : host).add(weights.embedTokens());
        (gpuLayers > layers ? device : host).addAll(weights.outputTensors());
        return new OffloadPlan(layers, gpuLayers, cpuFeedForwards, ModelWeights.bytesOf(device),
                deviceCaches * layerCacheBytes, ModelWeights.bytesOf(host), (layers - deviceCaches) * layerCacheBytes);
    }

    /**
     * How many of the layers whose device bytes are {@code layerBytes} fit in {@code budget} bytes, taken from the last
     * layer down, and one more (the output, {@code outputBytes}) when all of them fit with it.
     */
    static int fit(long budget, long[] layerBytes, long outputBytes) {
        long used = 0;
        int layers = 0;
        for (int l = layerBytes.length - 1; l >= 0 && used + layerBytes[l] <= budget; l--) {
            used += layerBytes[l];
            layers++;
        }
        return layers == layerBytes.length && used + outputBytes <= budget ? layers + 1 : layers;
    }

    /**
     * Each layer's bytes on the device when it is offloaded: its attention, its cache, and its feed-forward unless the
     * experts stay on the CPU.
     */
    private static long[] layerDeviceBytes(ModelWeights weights, Set<Integer> cpuFeedForwards, long layerCacheBytes) {
        long[] bytes = new long[weights.layers().size()];
        for (int l = 0; l < bytes.length; l++) {
            ModelWeights.Layer layer = weights.layers().get(l);
            List<Tensor> tensors = new ArrayList<>(layer.attentionTensors());
            if (!cpuFeedForwards.contains(l)) tensors.addAll(layer.feedForwardTensors());
            bytes[l] = ModelWeights.bytesOf(tensors) + layerCacheBytes;
        }
        return bytes;
    }

    /**
     * What goes to the device with the output: the final norm and lm_head, and the embedding when the whole model
     * does.
     */
    private static List<Tensor> outputPart(ModelWeights weights, boolean whole) {
        List<Tensor> tensors = new ArrayList<>(weights.outputTensors());
        if (whole) tensors.add(weights.embedTokens());
        return tensors;
    }

    /** The layers whose feed-forward runs on the CPU: the experts of the first cpuMoeLayers, and what -ot names. */
    static Set<Integer> cpuFeedForwards(Offload offload, ModelConfig config) {
        Set<Integer> layers = new TreeSet<>();
        for (int l = 0; l < Math.min(offload.cpuMoeLayers(), config.numHiddenLayers()); l++) {
            if (config.feedForward(l) instanceof FeedForward.Experts) layers.add(l);
        }
        for (TensorOverride override : offload.cpuTensors()) layers.addAll(override.feedForwardLayers(config));
        return Collections.unmodifiableSet(layers);
    }

    /** Whether any part runs on the device. */
    public boolean usesDevice() {
        return gpuLayers > 0;
    }

    /** Whether every part runs on the device: the whole model, as without -ngl. */
    public boolean wholeOnDevice() {
        return gpuLayers > layers && cpuFeedForwards.isEmpty();
    }

    /** Where each part runs, {@code device} and {@code cpu} as this plan says. */
    public Placement placement(Backend device, Backend cpu) {
        List<Placement.Layer> placed = new ArrayList<>();
        for (int l = 0; l < layers; l++) {
            Backend attention = l >= layers - Math.min(gpuLayers, layers) ? device : cpu;
            placed.add(new Placement.Layer(attention, cpuFeedForwards.contains(l) ? cpu : attention));
        }
        return new Placement(wholeOnDevice() ? device : cpu, placed, gpuLayers > layers ? device : cpu);
    }

    /**
     * The plan in one line, as fs says it on loading: "-ngl 14: 14/29 layers on DEVICE (1.2 GiB: weights …, KV cache
     * …), the rest on the CPU (…)", counting the output as a layer, as llama.cpp does.
     */
    public String line(String asked, String device) {
        int n = cpuFeedForwards.size();
        String experts = n == 0 ? "" : n == layers ? ", every layer's feed-forward on the CPU"
                : ", the feed-forward of " + n + (n == 1 ? " layer" : " layers") + " on the CPU";
        return "-ngl " + asked + ": " + gpuLayers + "/" + (layers + 1) + " layers on " + device + " ("
                + bytes(deviceWeightBytes, deviceCacheBytes) + "), the rest on the CPU ("
                + bytes(hostWeightBytes, hostCacheBytes) + ")" + experts;
    }

    private static String bytes(long weights, long cache) {
        return HumanSize.of(weights + cache) + ": weights " + HumanSize.of(weights) + ", KV cache "
                + HumanSize.of(cache);
    }

    /** What the plan puts on the device, as a load that does not fit says it: "3/4 layers need 1.2 GiB". */
    String deviceLine() {
        return gpuLayers + "/" + (layers + 1) + " layers need " + HumanSize.of(deviceWeightBytes + deviceCacheBytes);
    }
}
