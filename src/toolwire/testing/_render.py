"""A scenario's turn rendered as the reply to one request: templates
substituted from the request's tool results, arguments serialized, a typed
output given natively or as a final-result call; and the size of a
request's prompt, for the reply's token counts.
"""

from __future__ import annotations

import time

from toolwire.stream import jsonio
from toolwire.stream.codecs import registered
from toolwire.testing._parse import ParsedRequest
from toolwire.testing.encoders import Reply, ReplyCall
from toolwire.testing.scenario import (
    ResultLookup,
    ScenarioError,
    Turn,
    substitute,
    substitute_value,
)

__all__ = ["prompt_size", "render"]


def prompt_size(body: bytes) -> int:
    """The size of a request's prompt, for its token count: the body without
    the fields that say how to answer, not what (``stream``), so that the
    same turn asked streamed or whole counts the same tokens."""
    try:
        data = jsonio.loads(body)
    except (jsonio.JSONDecodeError, ValueError):
        return len(body)
    if not isinstance(data, dict):
        return len(body)
    for key in _ANSWER_FIELDS:
        data.pop(key, None)
    return len(jsonio.dumps(data).encode())


_ANSWER_FIELDS = frozenset(field for d in registered() for field in d.answer_fields)


def render(turn: Turn, request: ParsedRequest, *, input_tokens: int) -> Reply:
    """Substitute templates and serialize arguments.

    Raises:
        ScenarioError: a template names a tool result the request does not carry.
    """
    lookup = ResultLookup(
        [(r.name, r.content) for r in request.latest_results],
        [(r.name, r.content) for r in request.results],
    )
    calls: list[ReplyCall] = []
    for index, call in enumerate(turn.tool_calls):
        if isinstance(call.arguments, str):
            raw = substitute(call.arguments, lookup)
            try:
                parsed = jsonio.loads(raw)
            except ValueError:
                parsed = None
            arguments = parsed if isinstance(parsed, dict) else None
        else:
            arguments = substitute_value(call.arguments, lookup)
            raw = jsonio.dumps(arguments)
        calls.append(
            ReplyCall(
                index=index,
                name=call.name,
                raw_arguments=raw,
                arguments=arguments,
                custom=call.custom,
                fields=call.fields,
                provider_fields=substitute_value(
                    call.provider_fields.get(request.dialect, {}), lookup
                ),
            )
        )
    text = substitute(turn.text, lookup)
    # A turn dumped and read again (``model_dump()``) holds ``output: None``:
    # that is a turn without an output.
    if turn.output is not None:
        if request.output_native:
            text = jsonio.dumps(turn.output)
        else:
            calls = [_output_call(turn, request)]
    provider_items = tuple(
        (item.after, substitute_value(item.item, lookup))
        for item in turn.provider_items
        if item.dialect == request.dialect
    )
    return Reply(
        request=request,
        turn=request.assistant_turns,
        reasoning=substitute(turn.reasoning, lookup),
        text=text,
        calls=tuple(calls),
        chunk_size=turn.chunk_size,
        created=int(time.time()),
        input_tokens=max(1, input_tokens),
        provider_items=provider_items,
        finish=turn.provider_finish.get(request.dialect),
        steer=turn.steer,
        provider_fields=substitute_value(turn.provider_fields.get(request.dialect, {}), lookup),
        quirks=frozenset(turn.quirks),
    )


def _output_call(turn: Turn, request: ParsedRequest) -> ReplyCall:
    """A turn's ``output`` as a call of the request's final-result tool.

    Raises:
        ScenarioError: the request has no such tool, or the output is not an object.
    """
    names = [n for n in request.tool_names if n.startswith("final_result")]
    name = turn.output_tool or (names[0] if names else None)
    if name is None or name not in request.tool_names:
        raise ScenarioError(
            "the turn answers with an output, and the request asks for it neither "
            "natively nor with a final-result tool"
            + (f" named {turn.output_tool!r}" if turn.output_tool else "")
        )
    if not isinstance(turn.output, dict):
        raise ScenarioError('a final-result call takes a JSON object: write {"response": ...}')
    raw = jsonio.dumps(turn.output)
    return ReplyCall(index=0, name=name, raw_arguments=raw, arguments=turn.output)
