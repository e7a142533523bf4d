"""Typed output without I/O: the spec of each kind of type, the two ways to
ask per dialect and model, strict validation, and the verdict on a reply."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolwire import UsageError
from toolwire.agent._output import OutputFailure, output_spec
from toolwire.agent._typed import Accepted, Refused, judge
from toolwire.run import RunResult
from toolwire.stream.codecs import (
    ModelTable,
    model_has_structured_output,
    registered,
    structured_output,
)
from toolwire.stream.codecs.structured import tool_names
from toolwire.types import ChoiceResult, InvalidToolCall, ToolCall, Usage


class Invoice(BaseModel):
    number: str
    total: int


@dataclasses.dataclass
class Refusal:
    reason: str


class Label(TypedDict):
    label: str


def choice(text: str = "", calls: tuple[Any, ...] = (), finish: str = "stop") -> ChoiceResult:
    tool_calls = tuple(c for c in calls if isinstance(c, ToolCall))
    invalid = tuple(c for c in calls if isinstance(c, InvalidToolCall))
    return ChoiceResult(
        index=0, text=text, tool_calls=tool_calls, invalid_tool_calls=invalid, finish_reason=finish
    )


def call(name: str, arguments: dict[str, Any], index: int = 0) -> ToolCall:
    raw = json.dumps(arguments)
    return ToolCall(id=f"c{index}", index=index, name=name, arguments=arguments, raw_arguments=raw)


def test_str_is_a_text_answer() -> None:
    assert output_spec(str) is None and output_spec(None) is None


@pytest.mark.parametrize(
    ("output_type", "wrapped"),
    [
        (Invoice, False),
        (Refusal, False),
        (Label, False),
        (list[Invoice], True),
        (Literal["a"], True),
    ],
)
def test_an_object_schema_is_asked_as_is_and_the_others_wrapped(
    output_type: Any, wrapped: bool
) -> None:
    spec = output_spec(output_type)
    assert spec is not None and spec.whole.wrapped is wrapped
    assert spec.whole.parameters["type"] == "object"
    assert spec.tool_names == ("final_result",)


def test_a_union_has_one_final_result_tool_per_member() -> None:
    spec = output_spec(Invoice | Refusal)
    assert spec is not None and spec.tool_names == ("final_result_Invoice", "final_result_Refusal")
    assert spec.whole.wrapped and "anyOf" in spec.whole.parameters["properties"]["response"]


def test_a_type_without_a_schema_is_a_usage_error() -> None:
    class Opaque:
        pass

    with pytest.raises(UsageError, match="no JSON Schema"):
        output_spec(Opaque)
    with pytest.raises(UsageError, match="output_mode"):
        output_spec(Invoice, "json")  # type: ignore[arg-type]


def test_native_where_the_dialect_and_model_have_it() -> None:
    spec = output_spec(Invoice)
    assert spec is not None
    assert spec.mode_for("openai-chat", "gpt-4.1") == "native"
    assert spec.mode_for("anthropic-messages", "claude-3-5-haiku") == "tool"
    assert spec.mode_for("anthropic-messages", "claude-sonnet-4-5") == "native"
    assert spec.mode_for("ollama", "llama3") == "tool"
    forced = output_spec(Invoice, "native")
    assert forced is not None
    with pytest.raises(UsageError, match="no native structured output"):
        forced.mode_for("ollama", "llama3")
    assert output_spec(Invoice, "tool").mode_for("openai-chat", "gpt-4.1") == "tool"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("dialect", "model", "native"),
    [
        ("openai-chat", "gpt-4o-2024-08-06", True),
        ("openai-chat", "gpt-4o-2024-05-13", False),  # before json_schema
        ("openai-responses", "gpt-4-turbo", False),
        ("openai-responses", "gpt-4o-mini", True),
        ("openai-chat", "o1-mini", False),
        ("openai-chat", "my-finetune", True),  # unknown: the table's default
        ("anthropic-messages", "claude-sonnet-4-20250514", False),
        ("anthropic-messages", "claude-opus-4-1-20250805", True),
        ("anthropic-messages", "claude-3-7-sonnet-latest", False),
        ("gemini", "gemini-1.5-pro", False),
        ("gemini", "gemini-2.5-flash", True),
        ("bedrock-converse", "us.anthropic.claude-3-5-sonnet-20241022-v2:0", False),
        ("bedrock-converse", "global.anthropic.claude-sonnet-4-5-20250929-v1:0", True),
        ("bedrock-converse", "us.amazon.nova-2-lite-v1:0", True),
        ("ollama-ndjson", "llama3", False),  # the dialect has none
        ("bedrock-invoke", "anthropic.claude-sonnet-4-5", False),
        ("no-such-dialect", "gpt-4.1", False),
    ],
)
def test_the_registration_says_which_models_have_native_output(
    dialect: str, model: str, native: bool
) -> None:
    assert model_has_structured_output(dialect, model) is native
    spec = output_spec(Invoice)
    assert spec is not None
    assert spec.mode_for(dialect, model) == ("native" if native else "tool")


def test_the_agent_can_say_otherwise_than_the_table() -> None:
    spec = output_spec(Invoice)
    assert spec is not None
    assert spec.mode_for("openai-chat", "gpt-4o-2024-05-13", True) == "native"
    assert spec.mode_for("openai-chat", "gpt-4.1", False) == "tool"
    assert spec.mode_for("ollama-ndjson", "llama3", True) == "tool"  # no words to ask in


def test_a_model_table_takes_the_longest_prefix_and_reads_past_a_region() -> None:
    table = ModelTable(True, {"a": False, "ab": True, "abc-old": False}, strip=("us.",))
    assert [table(m) for m in ("x", "a1", "ab1", "abc-old-2", "us.abc-old", "eu.a")] == [
        True,
        False,
        True,
        False,
        False,
        True,  # eu. is not stripped here: "eu.a" matches nothing
    ]
    assert all(
        d.provider is not None and d.provider.structured_models is not None
        for d in registered()
        if d.structured_output is not None
    )


def test_a_schema_strict_mode_cannot_hold_falls_back_to_the_tool() -> None:
    spec = output_spec(dict[str, int])  # a free-form map: not strict-expressible
    assert spec is not None and spec.mode_for("openai-chat", "gpt-4.1") == "tool"


def test_each_dialect_asks_in_its_own_words_and_the_server_tells() -> None:
    spec = output_spec(Invoice)
    assert spec is not None
    where = {
        "openai-chat": ("response_format",),
        "openai-responses": ("text",),
        "anthropic-messages": ("output_config",),
        "gemini": ("generationConfig",),
        "bedrock-converse": ("outputConfig",),
    }
    for dialect, keys in where.items():
        body = spec.native_body(dialect)
        assert tuple(body) == keys
        native = structured_output(dialect)
        assert native is not None and native.asked(body) and not native.asked({})
    bedrock = spec.native_body("bedrock-converse")["outputConfig"]["textFormat"]
    assert json.loads(bedrock["structure"]["jsonSchema"]["schema"])["additionalProperties"] is False


def test_tool_names_in_every_shape() -> None:
    body = {
        "tools": [
            {"type": "function", "function": {"name": "a"}},
            {"name": "b"},
            {"functionDeclarations": [{"name": "c"}]},
        ],
        "toolConfig": {"tools": [{"toolSpec": {"name": "d"}}]},
    }
    assert tool_names(body) == ["a", "b", "c", "d"]


def test_validation_is_strict_unless_asked() -> None:
    spec = output_spec(Invoice)
    lax = output_spec(Invoice, strict=False)
    assert spec is not None and lax is not None
    raw = '{"number": "1", "total": "500"}'
    failure = spec.check(spec.whole, raw)
    assert isinstance(failure, OutputFailure) and failure.errors[0][0] == "total"
    assert "total" in failure.feedback() and failure.raw == raw
    assert lax.check(lax.whole, raw) == Invoice(number="1", total=500)


def test_native_verdicts() -> None:
    spec = output_spec(Invoice)
    assert spec is not None
    good = judge(spec, "native", choice('{"number": "1", "total": 5}'))
    assert good == Accepted(Invoice(number="1", total=5))
    assert isinstance(judge(spec, "native", choice("not json")), Refused)
    assert judge(spec, "native", choice("{", finish="paused")) is None
    assert judge(spec, "native", choice("", (call("lookup", {}),))) is None


def test_tool_verdicts() -> None:
    spec = output_spec(Invoice)
    assert spec is not None
    valid = call("final_result", {"number": "1", "total": 5}, 1)
    wrong = call("final_result", {"number": "1", "total": "5"}, 0)
    assert judge(spec, "tool", choice("", (wrong, valid))) == Accepted(Invoice(number="1", total=5))
    refused = judge(spec, "tool", choice("", (wrong, call("lookup", {}, 1))))
    assert isinstance(refused, Refused) and [c.id for c, _ in refused.calls] == ["c0"]
    assert judge(spec, "tool", choice("", (call("lookup", {}),))) is None
    text = judge(spec, "tool", choice("it is 5"))
    assert (
        isinstance(text, Refused) and not text.calls and "final_result" in text.failure.feedback()
    )
    broken = InvalidToolCall(id="x", index=0, name="final_result", raw_arguments="{", error="cut")
    assert isinstance(judge(spec, "tool", choice("", (broken,))), Refused)


def test_a_typed_result_is_json_data() -> None:
    result = RunResult(
        output=Invoice(number="1", total=5),
        outcome="answered",
        messages=(),
        usage=Usage(),
        tool_calls=(),
        turns=1,
        run_id="r",
    )
    assert result.to_dict()["output"] == {"number": "1", "total": 5}
