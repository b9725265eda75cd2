package fs.server;

/**
 * What fs serve was started to do, as llama-server's flags choose it: chat and text completions (the default),
 * embeddings ({@code --embedding}) or reranking ({@code --rerank}). Each answers its own endpoints only; the others
 * say which flag would serve them.
 */
public enum ServedTask {
    /** POST /v1/chat/completions and /v1/completions. */
    CHAT("completions", "without --embedding or --rerank"),
    /** POST /v1/embeddings (and /embeddings). */
    EMBEDDING("embeddings", "with --embedding"),
    /** POST /v1/rerank (and /rerank, /v2/rerank). */
    RERANK("reranking", "with --rerank");

    private final String what;
    private final String started;

    ServedTask(String what, String started) {
        this.what = what;
        this.started = started;
    }

    /** The 501 a request for this task gets from a server started for {@code served}, as llama-server answers it. */
    ApiException notServedBy(ServedTask served) {
        return new ApiException(501, "not_supported_error", "not_supported", null, "this server does not support "
                + what + ": it was started " + served.started + "; start fs serve " + started
                + (this == CHAT ? "" : " (and a model made for it)"));
    }
}
