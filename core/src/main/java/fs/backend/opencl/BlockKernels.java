package fs.backend.opencl;

import fs.tensor.DType;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The kernels of blocks.cl built for one block format, in one design: they read the format's blocks where they lie,
 * with no float copy of the weight. {@link #matmulDecode} takes the arguments of weights.cl's kernel of the same name
 * and is launched by the design's {@link Launcher} with {@link KernelConstants#PIECE} as its chunk; the others are
 * the same for every design and launched here.
 */
record BlockKernels(ClKernel dequantize, ClKernel embed, ClKernel matmulDecode) {
    /**
     * Whether {@code type} is a block format: every quantized format has a header in the kernels' folder, named by
     * the format ({@link DType#kernelName()}.h), that gives blocks.cl its decode_piece.
     */
    static boolean reads(DType type) {
        return type.isQuantized();
    }

    /** Builds {@code type}'s header and blocks.cl (once per device) and makes their kernels with {@code kernel}. */
    static BlockKernels build(DeviceContext device, KernelDesign design, DType type,
            BiFunction<MemorySegment, String, ClKernel> kernel) {
        MemorySegment program = device.program(List.of(type.kernelName() + ".h", "blocks.cl"),
                KernelConstants.blockFormatOptions(type));
        return new BlockKernels(kernel.apply(program, "dequantize"), kernel.apply(program, "embed"),
                kernel.apply(program, design.kernel("matmul_decode")));
    }

    /**
     * Rows {@code firstRow..firstRow + rows - 1} of {@code w} ({@code columns} weights each) as float32 into
     * {@code out}, exactly as llama.cpp dequantizes them.
     */
    void dequantize(MemorySegment queue, ClMemory w, int columns, int firstRow, int rows, ClMemory out) {
        dequantize.arg(0, w).arg(1, out).arg(2, columns).arg(3, firstRow)
                .run(queue, columns / KernelConstants.PIECE, rows, 0, 0);
    }

    /** Rows {@code tokens[0..count - 1]} of {@code table} ({@code columns} weights each) as float32 into out. */
    void embed(MemorySegment queue, ClMemory table, ClMemory tokens, int count, int columns, ClMemory out) {
        embed.arg(0, table).arg(1, tokens).arg(2, out).arg(3, columns)
                .run(queue, columns / KernelConstants.PIECE, count, 0, 0);
    }
}
