package fs.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import fs.FsException;
import fs.backend.Backend;
import fs.backend.KvCacheTypes;
import fs.backend.cpu.CpuKernels;
import fs.backend.cpu.NativeMatmulCheck;
import fs.backend.cpu.VectorBackend;
import fs.backend.opencl.OpenCl;
import fs.backend.opencl.OpenClBackend;
import fs.engine.Offload;
import fs.engine.OffloadPlan;
import fs.hub.ModelResolver;
import fs.model.DecoderModel;
import fs.model.ModelConfig;
import fs.model.ModelWeights;
import fs.model.Probe;
import fs.model.SingleSequence;
import fs.source.ModelSource;
import fs.verify.CrossCheck;
import fs.verify.NativeCheck;
import fs.verify.OpDifference;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "verify", mixinStandardHelpOptions = true,
        description = {"Runs the same input on OpenCL and on the CPU (Vector API) and compares every op of every layer "
                + "and the logits: max abs diff, RMS diff and NMSE = Σ(a−b)²/Σb².",
                "Exit 0 when every op is within the threshold and the top-1 tokens agree, 1 otherwise.",
                "With --native: the CPU's native int8 kernels against the exact Vector API path instead, each matmul on "
                        + "the exact path's own input and within the bound its rounding to int8 allows (exit 0 when "
                        + "every one is)."})
final class VerifyCommand implements Callable<Integer> {
    /**
     * Float32 noise between two correct backends (other summation orders) stays near 1e-12 per op; a real bug (a wrong
     * index, a lost bf16 bit, a missing scale) lands far above 1e-6, which is about one bf16 rounding (2^-8)².
     */
    static final double DEFAULT_THRESHOLD = 1e-6;

    /** Verify records every op's output on the host; this bounds that memory. */
    static final int MAX_TOKENS = 256;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "MODEL", defaultValue = "Qwen/Qwen3-0.6B",
            description = "A model directory, a .gguf file, a Hugging Face repo id or repo:QUANT (default: ${DEFAULT-VALUE}).")
    String model;

    @ArgGroup(exclusive = true)
    Input input;

    static final class Input {
        @Option(names = "--tokens", paramLabel = "IDS", converter = TokenIds.Converter.class,
                description = "Input token ids, e.g. \"1 2 3\" (as fs tokenize prints them) or 1,2,3 (default: the "
                        + "tokens of -p's default).")
        TokenIds tokens;

        @Option(names = {"-p", "--prompt"}, paramLabel = "TEXT", description = "Input text, tokenized without a template (default: \"The quick brown fox jumps over the lazy dog.\").")
        String prompt;
    }

    @Option(names = "--device", paramLabel = "N",
            description = "OpenCL device index (see fs devices; default: the GPU with the most memory, else the first device).")
    Integer device;

    private Integer threads;

    @Option(names = {"-t", "--threads"}, paramLabel = "N", description = "CPU threads of the oracle (default: the number of available processors).")
    void threads(int n) {
        if (n < 1) throw usage("--threads must be at least 1, got " + n);
        threads = n;
    }

    @Option(names = "--threshold", paramLabel = "NMSE", description = "Largest NMSE an op may show (default: 1e-6).")
    double threshold = DEFAULT_THRESHOLD;

    @Option(names = "--json", description = "Print the report as one JSON object.")
    boolean json;

    @Option(names = {"-ngl", "--gpu-layers", "--n-gpu-layers"}, paramLabel = "N|auto|all",
            description = "Verify the model split as -ngl splits it for fs run: the last N layers (and the output, above "
                    + "the layer count) on OpenCL, the rest on the CPU's exact path (default: all).")
    String gpuLayers;

    @Option(names = {"-cmoe", "--cpu-moe"}, description = "With the split: every mixture of experts on the CPU.")
    boolean cpuMoe;

    @Option(names = {"-ncmoe", "--n-cpu-moe"}, paramLabel = "N",
            description = "With the split: the mixtures of experts of the first N layers on the CPU (default: 0).")
    Integer cpuMoeLayers;

    @Option(names = "--native", description = "Check the CPU's native int8 kernels (libfscpu) against the exact Vector "
            + "API path instead of OpenCL, matmul by matmul; the bound of each output is what rounding its input to "
            + "int8 moves, plus both sides' float32 rounding (no --threshold).")
    boolean nativeKernels;

    @Override
    public Integer call() {
        Offload offload = offload();
        if (nativeKernels) {
            if (offload != null) throw usage("-ngl, --cpu-moe and --n-cpu-moe have no use with --native");
            return verifyNative();
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CrossCheck.Report report;
        OpenCl.Device openClDevice;
        try (ModelSource source = ModelSource.open(ModelResolver.resolve(model, err))) {
            ModelConfig config = source.config();
            int[] tokens = checkedTokens(source, config);
            openClDevice = switch (OpenCl.select(true, device)) {
                case OpenCl.Selection.Selected selected -> selected.device();
                case OpenCl.Selection.NotSelected notSelected ->
                        throw new FsException("verify needs an OpenCL device: " + notSelected.reason());
            };
            int threadCount = threads != null ? threads : Runtime.getRuntime().availableProcessors();

            SingleSequence.Shape shape = new SingleSequence.Shape(tokens.length, tokens.length, tokens.length);
            // The oracle is the exact Vector API path whatever FS_CPU_KERNELS says.
            try (Backend oracleBackend = new VectorBackend(threadCount, CpuKernels.vectorApi());
                 OpenClBackend testedBackend = new OpenClBackend(openClDevice);
                 Backend testedCpu = new VectorBackend(threadCount, CpuKernels.vectorApi())) {
                ModelWeights weights = ModelWeights.bind(config, source.tensors());
                SingleSequence oracle = new SingleSequence(new DecoderModel(config, weights, oracleBackend), shape);
                String split = "";
                DecoderModel testedModel;
                if (offload == null) {
                    testedModel = new DecoderModel(config, weights, testedBackend);
                } else {
                    // The split's CPU part on the exact path too: what differs from the oracle is the device's ops.
                    long cache = KvCacheTypes.F32.bytesPerPosition(1, config.numKeyValueHeads(), config.headDim())
                            * tokens.length;
                    OffloadPlan plan = OffloadPlan.of(offload, config, weights, cache, testedBackend.memorySize());
                    testedModel = new DecoderModel(config, weights, plan.placement(testedBackend, testedCpu));
                    split = " (" + plan.line(Offload.spelling(offload.gpuLayers()), "OpenCL") + ")";
                }
                SingleSequence tested = new SingleSequence(testedModel, shape);
                err.println("fs: verifying " + testedBackend.description() + split + " against "
                        + oracleBackend.description() + " on " + tokens.length + " tokens");
                err.flush();
                report = CrossCheck.run(tested, oracle, tokens, threshold);
            }
        }
        if (json) {
            out.println(toJson(report, testedDescription(openClDevice)));
        } else {
            printTable(out, report);
        }
        out.flush();
        return report.agree() ? 0 : 1;
    }

    /**
     * --native: the exact path's forward pass on {@link NativeCheck}, which checks each of its matmuls of a native
     * format on the native kernels; then a whole pass on the native kernels, whose top-1 tokens are reported beside
     * the exact path's (int8 rounding may flip a near tie, so they do not decide the exit status).
     */
    private int verifyNative() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (device != null) throw usage("--device has no use with --native (it checks the CPU's kernels)");
        if (threshold != DEFAULT_THRESHOLD) {
            throw usage("--threshold has no use with --native: each output's bound comes from its int8 rounding");
        }
        List<NativeCheck.Op> ops;
        int agree = 0, positions;
        String isa;
        try (ModelSource source = ModelSource.open(ModelResolver.resolve(model, err))) {
            ModelConfig config = source.config();
            int[] tokens = checkedTokens(source, config);
            if (source.tensors().tensors().stream().noneMatch(t -> NativeMatmulCheck.covers(t.dtype()))) {
                throw new FsException(model + " has no matmul in a format the native kernels have");
            }
            NativeMatmulCheck check = NativeMatmulCheck.load();
            isa = check.isa();
            int threadCount = threads != null ? threads : Runtime.getRuntime().availableProcessors();
            SingleSequence.Shape shape = new SingleSequence.Shape(tokens.length, tokens.length, tokens.length);
            ModelWeights weights = ModelWeights.bind(config, source.tensors());
            try (NativeCheck exact = new NativeCheck(new VectorBackend(threadCount, CpuKernels.vectorApi()), check);
                 Backend nativeBackend = new VectorBackend(threadCount, CpuKernels.nativeKernels(isa))) {
                err.println("fs: verifying the native " + isa + " int8 matmuls against " + exact.description() + " on "
                        + tokens.length + " tokens");
                err.flush();
                SingleSequence oracle = new SingleSequence(new DecoderModel(config, weights, exact), shape);
                SingleSequence tested = new SingleSequence(new DecoderModel(config, weights, nativeBackend), shape);
                oracle.forward(tokens, 0, exact);
                tested.forward(tokens, 0, Probe.NONE);
                positions = tokens.length;
                for (int row = 0; row < positions; row++) if (oracle.argmax(row) == tested.argmax(row)) agree++;
                ops = exact.ops();
            }
        }
        NativeCheck.Op worst = ops.getFirst();
        for (NativeCheck.Op op : ops) {
            if (!(op.result().worstRatio() <= worst.result().worstRatio())) worst = op;
        }
        boolean within = ops.stream().allMatch(op -> op.result().withinBound());
        if (json) {
            ObjectNode root = new ObjectMapper().createObjectNode();
            root.put("native", isa);
            ArrayNode list = root.putArray("ops");
            for (NativeCheck.Op op : ops) {
                ObjectNode o = list.addObject();
                o.put("layer", op.layer());
                o.put("op", op.op());
                o.put("outputs", op.result().outputs());
                o.put("max_abs", op.result().maxAbs());
                o.put("bound_ratio", op.result().worstRatio());
                o.put("nmse", op.result().nmse());
            }
            root.put("largest_bound_ratio", worst.result().worstRatio());
            root.put("top1_agreement", agree);
            root.put("positions", positions);
            root.put("agree", within);
            out.println(root);
        } else {
            out.printf(Locale.ROOT, "%5s %-10s %12s %12s %12s%n", "layer", "op", "max_abs", "of_bound", "nmse");
            for (NativeCheck.Op op : ops) {
                NativeMatmulCheck.Result r = op.result();
                out.printf(Locale.ROOT, "%5s %-10s %12.3e %12.3f %12.3e%s%n",
                        op.layer() < 0 ? "-" : Integer.toString(op.layer()), op.op(), r.maxAbs(), r.worstRatio(),
                        r.nmse(), r.withinBound() ? "" : "  OVER");
            }
            out.printf(Locale.ROOT, "largest |native - exact| / bound: %.3f at %s (each must be at most 1: the bound is"
                    + " Σ|w|·|x - x8| plus both sides' float32 rounding)%n", worst.result().worstRatio(), worst.where());
            out.printf(Locale.ROOT, "top-1 agreement of a whole native pass with the exact one: %d/%d positions (not "
                    + "checked: int8 rounding may flip a near tie)%n", agree, positions);
            out.println(within ? "OK: every native matmul is within its int8 bound"
                    : "FAIL: a native matmul is outside its int8 bound");
        }
        out.flush();
        return within ? 0 : 1;
    }

    private int[] checkedTokens(ModelSource source, ModelConfig config) {
        int[] tokens = tokens(source);
        for (int id : tokens) {
            if (id < 0 || id >= config.vocabSize()) {
                throw new FsException("--tokens: token id " + id + " is outside the vocabulary (0.." + (config.vocabSize() - 1) + ")");
            }
        }
        return tokens;
    }

    private int[] tokens(ModelSource source) {
        int[] ids;
        if (input != null && input.tokens != null) {
            ids = input.tokens.ids();
        } else {
            String text = input != null ? input.prompt : "The quick brown fox jumps over the lazy dog.";
            ids = source.tokenizer().encode(text);
        }
        if (ids.length == 0) throw new FsException("verify needs at least one token");
        if (ids.length > MAX_TOKENS) {
            throw new FsException("verify takes at most " + MAX_TOKENS + " tokens, got " + ids.length);
        }
        return ids;
    }

    private static String testedDescription(OpenCl.Device device) {
        return device.name() + " (" + device.platformName() + ")";
    }

    private static void printTable(PrintWriter out, CrossCheck.Report report) {
        out.printf(Locale.ROOT, "%-8s %5s %-14s %12s %12s %12s%n", "pass", "layer", "op", "max_abs", "rms", "nmse");
        for (OpDifference d : report.differences()) {
            out.printf(Locale.ROOT, "%-8s %5s %-14s %12.3e %12.3e %12.3e%s%n", d.pass(),
                    d.layer() < 0 ? "-" : Integer.toString(d.layer()), d.op(), d.maxAbs(), d.rms(), d.nmse(),
                    d.nmse() <= report.threshold() ? "" : "  OVER");
        }
        OpDifference worst = report.worst();
        out.printf(Locale.ROOT, "largest NMSE: %.3e at %s (threshold %.1e)%n", worst.nmse(), worst.where(),
                report.threshold());
        OpDifference first = report.firstOverThreshold();
        out.println(first == null ? "every op within the threshold" : "first op over the threshold: " + first.where());
        out.printf(Locale.ROOT, "top-1 agreement: %d/%d positions%n", report.top1Agreements(),
                report.top1Agreement().length);
        out.println(report.agree() ? "OK: the backends agree" : "FAIL: the backends disagree");
    }

    private static String toJson(CrossCheck.Report report, String device) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        root.put("device", device);
        root.put("threshold", report.threshold());
        ArrayNode ops = root.putArray("ops");
        for (OpDifference d : report.differences()) {
            ObjectNode op = ops.addObject();
            op.put("pass", d.pass());
            op.put("layer", d.layer());
            op.put("op", d.op());
            op.put("length", d.length());
            op.put("max_abs", d.maxAbs());
            op.put("rms", d.rms());
            op.put("nmse", d.nmse());
        }
        OpDifference first = report.firstOverThreshold();
        if (first == null) root.putNull("first_over_threshold"); else root.put("first_over_threshold", first.where());
        root.put("top1_agreement", report.top1Agreements());
        root.put("positions", report.top1Agreement().length);
        ArrayNode tested = root.putArray("tested_top1");
        for (int id : report.testedTop1()) tested.add(id);
        ArrayNode oracle = root.putArray("oracle_top1");
        for (int id : report.oracleTop1()) oracle.add(id);
        root.put("agree", report.agree());
        return root.toString();
    }

    /** What -ngl, --cpu-moe and --n-cpu-moe ask for; null: the whole model on OpenCL. */
    private Offload offload() {
        if (gpuLayers == null && !cpuMoe && cpuMoeLayers == null) return null;
        try {
            return new Offload(gpuLayers == null ? Offload.ALL : Offload.gpuLayers(gpuLayers),
                    cpuMoe ? Offload.ALL : cpuMoeLayers == null ? 0 : cpuMoeLayers, List.of());
        } catch (FsException e) {
            throw usage(e.getMessage());
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
