package fs.model;

/**
 * What a layer's tensor is for, named once for both sources: Hugging Face's module path inside the layer and
 * llama.cpp's GGUF name inside the block. An expert's matrix ({@link #perExpert}) is one tensor per expert in a Hugging
 * Face checkpoint ({@code %d} is the expert) and one stack of every expert's matrix in a GGUF file.
 */
public enum TensorRole {
    ATTN_NORM("input_layernorm.weight", "attn_norm.weight"),
    Q("self_attn.q_proj.weight", "attn_q.weight"),
    K("self_attn.k_proj.weight", "attn_k.weight"),
    V("self_attn.v_proj.weight", "attn_v.weight"),
    O("self_attn.o_proj.weight", "attn_output.weight"),
    Q_NORM("self_attn.q_norm.weight", "attn_q_norm.weight"),
    K_NORM("self_attn.k_norm.weight", "attn_k_norm.weight"),
    FFN_NORM("post_attention_layernorm.weight", "ffn_norm.weight"),
    GATE("mlp.gate_proj.weight", "ffn_gate.weight"),
    UP("mlp.up_proj.weight", "ffn_up.weight"),
    DOWN("mlp.down_proj.weight", "ffn_down.weight"),
    ROUTER("mlp.gate.weight", "ffn_gate_inp.weight"),
    EXPERT_GATE("mlp.experts.%d.gate_proj.weight", "ffn_gate_exps.weight"),
    EXPERT_UP("mlp.experts.%d.up_proj.weight", "ffn_up_exps.weight"),
    EXPERT_DOWN("mlp.experts.%d.down_proj.weight", "ffn_down_exps.weight");

    private final String huggingFace;
    private final String gguf;

    TensorRole(String huggingFace, String gguf) {
        this.huggingFace = huggingFace;
        this.gguf = gguf;
    }

    /** The name inside a layer; for an expert's matrix in a Hugging Face checkpoint, a pattern of the expert. */
    String name(TensorNaming naming) {
        return naming == TensorNaming.GGUF ? gguf : huggingFace;
    }

    /** An expert's matrix: one per expert (Hugging Face) or a stack of them (GGUF). */
    public boolean perExpert() {
        return this == EXPERT_GATE || this == EXPERT_UP || this == EXPERT_DOWN;
    }
}
