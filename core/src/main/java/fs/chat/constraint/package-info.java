/**
 * What holds a chat answer to a shape: the GBNF grammars of tool calls and JSON answers in Qwen3's chat format
 * ({@link fs.chat.constraint.AnswerGrammar}), a constraint that waits out the think block
 * ({@link fs.chat.constraint.AfterThinking}), tool_choice auto's calls after the model's own tag
 * ({@link fs.chat.constraint.ModelOpenedCalls}), and the grammars compiled lately
 * ({@link fs.chat.constraint.GrammarCache}).
 * Apart from {@code fs.chat}, which {@code fs.generate} uses, since these use {@code fs.grammar}, which uses
 * {@code fs.generate}.
 */
package fs.chat.constraint;
