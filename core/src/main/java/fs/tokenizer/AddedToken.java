package fs.tokenizer;

/**
 * A token from tokenizer.json's added_tokens, matched in the text before BPE. {@code normalized} tokens are matched in
 * the normalized text, the others in the raw text; {@code special} ones are left out by a decode that skips specials.
 */
record AddedToken(int id, String content, boolean special, boolean normalized) {}
