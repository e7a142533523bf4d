"""Decode a recorded provider stream with toolwire's sans-I/O decoder.

    python examples/inspect_stream.py [FILE.sse]

Without a file it reads a recorded OpenAI stream with two parallel calls from
the test fixtures. (`toolwire inspect FILE` does the same from the shell.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import toolwire

DEFAULT = (
    Path(__file__).parent.parent
    / "tests/fixtures/conformance/openai/chat_parallel_2_mixed_args.sse"
)


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    body = path.read_bytes()
    decoder = toolwire.StreamDecoder("auto")
    for start in range(0, len(body), 64):  # feed it the way a socket would
        for event in decoder.feed(body[start : start + 64]):
            if isinstance(event, toolwire.ToolCallDelta):
                print(f"  #{event.index} {event.name} so far: {event.partial}")
            elif isinstance(event, toolwire.ToolCallReady):
                print(f"ready: {event.name}({event.call.arguments}) id={event.id}")
    decoder.close()
    result = decoder.result()
    print(f"{result.dialect}: {len(result.tool_calls)} call(s), error={result.error}")
    return 1 if result.error else 0


if __name__ == "__main__":
    sys.exit(main())
