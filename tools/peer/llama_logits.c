// llama.cpp's own logits for a GGUF file, in the layout of the goldens (models/README.md, q-tied's llama-T.json):
//
//   llama_logits MODEL.gguf TOKENS.txt [THREADS [TOP [GREEDY]]] > llama-T.json      # defaults 2 5 8
//
// TOKENS.txt holds comma-separated token ids (tokens.txt). One llama_batch of all of them, logits at every position,
// read with llama_get_logits_ith: the TOP largest ids and logits (rounded to 6 decimals) at each position; then GREEDY
// tokens decoded one at a time, each the argmax of the previous step's logits (the first from the prompt's last
// position). CPU backend only (no GPU offload), THREADS threads for both batch and single-token decoding, the
// context's other settings llama.cpp's defaults (F16 KV cache, flash attention auto). Prints JSON as Python's
// json.dump(indent=1) would: {"gguf": basename, "tokens": [...], "positions": [{"top_ids", "top_logits"}], "greedy"}.
// Build: tools/peer/llama-logits.sh does it (gcc against libllama).
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ggml_log_level level, const char * text, void * user) {
    (void) user;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

// A float rounded to 6 decimals, written as Python's repr of round(x, 6) (shortest form: trailing zeros dropped).
static void print_float(double x) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.6f", x);
    char * end = buf + strlen(buf) - 1;
    while (*end == '0' && end[-1] != '.') *end-- = '\0';
    fputs(buf, stdout);
}

static void print_ints(const char * indent, const int * values, int n) {
    fputs("[\n", stdout);
    for (int i = 0; i < n; i++) printf("%s %d%s\n", indent, values[i], i + 1 < n ? "," : "");
    printf("%s]", indent);
}

static int argmax(const float * logits, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (logits[i] > logits[best]) best = i;
    return best;
}

int main(int argc, char ** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.gguf TOKENS.txt [THREADS [TOP [GREEDY]]]\n", argv[0]);
        return 2;
    }
    const char * path = argv[1];
    int threads = argc > 3 ? atoi(argv[3]) : 2;
    int top = argc > 4 ? atoi(argv[4]) : 5;
    int steps = argc > 5 ? atoi(argv[5]) : 8;

    FILE * f = fopen(argv[2], "r");
    if (!f) { fprintf(stderr, "llama_logits: cannot read %s\n", argv[2]); return 1; }
    int tokens[4096], n = 0, id;
    while (n < 4096 && fscanf(f, " %d ,", &id) == 1) tokens[n++] = id;
    fclose(f);
    if (n == 0) { fprintf(stderr, "llama_logits: no token ids in %s\n", argv[2]); return 1; }

    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) { fprintf(stderr, "llama_logits: cannot load %s\n", path); return 1; }
    const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t) (n + steps + 16);
    cp.n_batch = cp.n_ctx;
    cp.n_ubatch = cp.n_ctx;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.no_perf = true;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "llama_logits: cannot make a context for %s\n", path); return 1; }

    struct llama_batch batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        batch.token[i] = tokens[i];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "llama_logits: decode failed\n"); return 1; }

    const char * base = strrchr(path, '/');
    base = base ? base + 1 : path;
    printf("{\n \"gguf\": \"%s\",\n \"tokens\": ", base);
    print_ints(" ", tokens, n);
    fputs(",\n \"positions\": [\n", stdout);
    int * ids = malloc(sizeof(int) * top);
    for (int p = 0; p < n; p++) {
        const float * logits = llama_get_logits_ith(ctx, p);
        // The top ids, largest first (ties to the lower id), by selection: top is small.
        for (int k = 0; k < top; k++) {
            int best = -1;
            for (int v = 0; v < vocab; v++) {
                int taken = 0;
                for (int j = 0; j < k; j++) if (ids[j] == v) { taken = 1; break; }
                if (!taken && (best < 0 || logits[v] > logits[best])) best = v;
            }
            ids[k] = best;
        }
        fputs("  {\n   \"top_ids\": ", stdout);
        print_ints("   ", ids, top);
        fputs(",\n   \"top_logits\": [\n", stdout);
        for (int k = 0; k < top; k++) {
            fputs("    ", stdout);
            print_float(logits[ids[k]]);
            fputs(k + 1 < top ? ",\n" : "\n", stdout);
        }
        printf("   ]\n  }%s\n", p + 1 < n ? "," : "");
    }
    fputs(" ],\n \"greedy\": ", stdout);

    int * greedy = malloc(sizeof(int) * (steps > 0 ? steps : 1));
    const float * last = llama_get_logits_ith(ctx, n - 1);
    for (int s = 0; s < steps; s++) {
        greedy[s] = argmax(last, vocab);
        if (s + 1 == steps) break;
        struct llama_batch one = llama_batch_get_one(&greedy[s], 1);
        if (llama_decode(ctx, one) != 0) { fprintf(stderr, "llama_logits: decode failed at step %d\n", s); return 1; }
        last = llama_get_logits_ith(ctx, -1);
    }
    print_ints(" ", greedy, steps);
    fputs("\n}", stdout);
    fflush(stdout);

    free(ids);
    free(greedy);
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
