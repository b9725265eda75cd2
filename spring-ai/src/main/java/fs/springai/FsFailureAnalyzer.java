package fs.springai;

import fs.FsException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Ends a startup that fs stopped (a model that cannot be loaded, a wrong {@code fs.*} value) with Spring Boot's
 * "APPLICATION FAILED TO START" report holding fs's one line, rather than the bean creation's stack trace.
 */
public final class FsFailureAnalyzer extends AbstractFailureAnalyzer<FsException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, FsException cause) {
        return new FailureAnalysis(cause.getMessage(), "Check the fs.* properties (fs.model, fs.embedding-model, "
                + "fs.backend, fs.threads, fs.context-length, fs.parallel-slots) and the model they name.", cause);
    }
}
