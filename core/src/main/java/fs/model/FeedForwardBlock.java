package fs.model;

import fs.backend.Backend;

/** A layer's feed-forward block, x += ffn(rmsnorm(x)), of the kind {@link FeedForward} says. */
sealed interface FeedForwardBlock permits DenseFeedForward, ExpertFeedForward {

    void forward(Backend backend, ModelConfig config, int layer, int rows, Activations b, Probe probe);
}
