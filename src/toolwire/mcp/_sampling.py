"""A server's sampling request (``sampling/createMessage``) as toolwire's
:class:`~toolwire.tools.SamplingRequest`, and the run's answer back as the
SDK's ``CreateMessageResult``.

toolwire serves text: a request holding images or audio, or offering tools
to the sampled model, is refused (the client declares no ``sampling.tools``
capability). Stop sequences and model preferences are advisory in the
protocol and not sent: the run's own model answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolwire.messages import AssistantMessage, UserMessage
from toolwire.tools import Sample, SamplingRequest

if TYPE_CHECKING:  # pragma: no cover - the SDK is optional; imported for real on connect
    import mcp_types

__all__ = ["sampling_request", "sampling_result"]

_STOP_REASONS = {"stop": "endTurn", "length": "maxTokens"}
"""toolwire's finish reasons in the protocol's words (others are sent as they are)."""


def sampling_request(
    params: mcp_types.CreateMessageRequestParams, source: str
) -> SamplingRequest | str:
    """The request to serve, or why it is refused."""
    import mcp_types

    if params.tools:
        return "toolwire offers no tools to a sampled model"
    messages: list[UserMessage | AssistantMessage] = []
    for message in params.messages:
        texts: list[str] = []
        for block in message.content_as_list:
            if not isinstance(block, mcp_types.TextContent):
                return f"toolwire samples text only, not {block.type} content"
            texts.append(block.text)
        text = "\n".join(texts)
        messages.append(UserMessage(text) if message.role == "user" else AssistantMessage(text))
    if not messages:
        return "the sampling request holds no message"
    return SamplingRequest(
        messages=tuple(messages),
        system=params.system_prompt,
        max_tokens=params.max_tokens,
        temperature=params.temperature,
        source=source,
    )


def sampling_result(sample: Sample) -> mcp_types.CreateMessageResult:
    """The model's answer as the server reads it."""
    import mcp_types

    reason = sample.finish_reason
    return mcp_types.CreateMessageResult(
        role="assistant",
        content=mcp_types.TextContent(text=sample.text),
        model=sample.model,
        stop_reason=_STOP_REASONS.get(reason, reason) if reason is not None else None,
    )
