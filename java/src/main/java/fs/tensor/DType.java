package fs.tensor;

/** Element types as safetensors names them; {@code byteSize} is the size of one element. */
public enum DType {
    F64(8), F32(4), F16(2), BF16(2),
    I64(8), I32(4), I16(2), I8(1),
    U64(8), U32(4), U16(2), U8(1),
    BOOL(1), F8_E4M3(1), F8_E5M2(1);

    private final int byteSize;

    DType(int byteSize) {
        this.byteSize = byteSize;
    }

    public int byteSize() {
        return byteSize;
    }

    /** The types the compute paths read: weights are stored in one of these and converted to float32 in kernels. */
    public boolean isComputeType() {
        return this == F32 || this == F16 || this == BF16;
    }
}
