package fs.chat;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A function call in an assistant turn. {@code arguments} is usually a JSON object; a JSON string is written as it is
 * (the OpenAI API sends arguments as a string holding JSON).
 */
public record ToolCall(String name, JsonNode arguments) {}
