"""Renders extra chat-template goldens (tools, tool calls, reasoning_content, multi-step turns) with Python's Jinja2
configured as transformers' apply_chat_template configures it. Run from this folder:
    python3 make_chat_template_extra_golden.py > qwen3_chat_template_extra_golden.jsonl
"""
import json

from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
template = env.from_string(json.load(open("tokenizer_config.json"))["chat_template"])

weather = {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city, in °C.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer",
           "minimum": 1, "maximum": 7}, "ratio": {"type": "number", "default": 0.25}}, "required": ["city"]}}}
clock = {"type": "function", "function": {"name": "now", "description": "Time \"now\"\n\tin <tz>", "parameters": {}}}
tools = [weather, clock]

call = {"type": "function", "function": {"name": "get_weather",
        "arguments": {"city": "Zürich", "days": 2, "scale": 1e-05, "big": 1e16, "f": 1.5, "zero": 0.0, "neg": -3,
                      "list": [True, False, None], "quote": "a\"b\\c\u0001"}}}
string_call = {"type": "function", "function": {"name": "now", "arguments": "{\"tz\": \"UTC\"}"}}
bare_call = {"name": "now", "arguments": {}}

cases = [
    ("tools_system_user", [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Zürich?"}], tools, True, None),
    ("tools_user_only", [{"role": "user", "content": "What time is it?"}], tools, True, False),
    ("tool_round_trip", [
        {"role": "user", "content": "Weather in Zürich?"},
        {"role": "assistant", "content": "<think>\nNeed the tool.\n</think>\n\n", "tool_calls": [call]},
        {"role": "tool", "content": "{\"temp\": 21}"},
        {"role": "tool", "content": "{\"temp\": 19}"},
        {"role": "assistant", "content": "<think>\nGot it.\n</think>\n\nIt is 21 °C."}], tools, False, None),
    ("tool_round_trip_gen", [
        {"role": "user", "content": "Time?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [string_call, bare_call]},
        {"role": "tool", "content": "12:00"}], tools, True, True),
    ("reasoning_content_field", [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "\n\nHello!", "reasoning_content": "\nGreet back.\n"},
        {"role": "user", "content": "Again"},
        {"role": "assistant", "content": "Hello again!", "reasoning_content": "\n\nSame.\n\n"}], [], False, None),
    ("history_reasoning_dropped", [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "A1", "reasoning_content": "R1"},
        {"role": "user", "content": "Q2"}], [], True, False),
    ("wrapped_tool_response_user", [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "<think>t1</think>A", "tool_calls": [bare_call]},
        {"role": "user", "content": "<tool_response>\nok\n</tool_response>"},
        {"role": "assistant", "content": "\n<think>\n\nt2\n</think>\n\nB"}], [], False, None),
    ("after_query_not_last_without_reasoning", [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "plain", "tool_calls": [bare_call]},
        {"role": "tool", "content": "r"},
        {"role": "assistant", "content": "x</think>y</think>\nz"}], [], True, None),
    ("nested_think_blocks", [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "<think>a<think>\nb\n\n</think>\n\nc\n</think>\n\nd"}], [], False, None),
    ("later_system_and_unknown_role", [
        {"role": "user", "content": "Q"},
        {"role": "system", "content": "Mid system."},
        {"role": "developer", "content": "ignored"},
        {"role": "assistant", "content": ""}], [], True, None),
    ("tool_first", [{"role": "tool", "content": "orphan"}, {"role": "user", "content": "Q"}], [], True, None),
]

for name, messages, tool_list, add_generation_prompt, enable_thinking in cases:
    kwargs = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
    rendered = template.render(messages=messages, tools=tool_list or None, add_generation_prompt=add_generation_prompt, **kwargs)
    print(json.dumps({"name": name, "messages": messages, "tools": tool_list, "add_generation_prompt": add_generation_prompt,
                      "enable_thinking": enable_thinking, "rendered": rendered}, ensure_ascii=False))
