package fs.api;

/** Whether the model must call one of a chat's tools ({@link ChatParams#withToolChoice}). */
public enum ToolChoice {
    /** The model decides whether to call, and which. */
    AUTO,
    /** The model must answer with one or more calls (the answer is constrained to them). */
    REQUIRED,
    /** The model must not call: it is not shown the tools either. */
    NONE
}
