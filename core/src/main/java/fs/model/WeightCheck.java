package fs.model;

import java.util.List;

/**
 * What checking a checkpoint's tensors against config.json found. {@code problems} make the weights unusable; only
 * the first {@link #MAX_LISTED} are kept, {@code problemCount} counts them all, so that a config wrong in every size
 * still gives a short answer. {@code notes} are what fs chose that the user should hear about but that does not stop
 * it, e.g. a stored lm_head.weight set aside because the embeddings are tied.
 */
public record WeightCheck(List<String> problems, int problemCount, List<String> notes) {
    public static final int MAX_LISTED = 20;

    public WeightCheck {
        problems = List.copyOf(problems);
        notes = List.copyOf(notes);
    }

    public boolean ok() {
        return problemCount == 0;
    }

    /** The listed problems on one line, then how many more there are. */
    public String problemLine() {
        String listed = String.join("; ", problems);
        int more = problemCount - problems.size();
        return more == 0 ? listed : listed + "; and " + more + " more";
    }
}
