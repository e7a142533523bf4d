"""The pure pieces of toolwire.mcp: tool names, result content, and the
import boundary (toolwire never loads the SDK; a missing SDK is a clear error)."""

from __future__ import annotations

import base64
import subprocess
import sys

import mcp_types
import pytest

from toolwire import Audio, Document, Image
from toolwire.mcp import MCPToolError, result_content, result_parts, tool_name
from toolwire.mcp._results import _error_message, _first_error

if sys.version_info >= (3, 11):
    from builtins import BaseExceptionGroup
else:  # anyio's dependency on older Pythons
    from exceptiongroup import BaseExceptionGroup


@pytest.mark.parametrize(
    ("mcp_name", "prefix", "expected"),
    [
        ("add", "", "add"),
        ("add", "fs_", "fs_add"),
        ("notes.search", "", "notes_search"),
        ("github/create-issue", "gh_", "gh_github_create-issue"),
        ("3d_render", "", "_3d_render"),
        ("天气", "", "__"),
    ],
)
def test_tool_names_fit_every_provider(mcp_name: str, prefix: str, expected: str) -> None:
    assert tool_name(mcp_name, prefix=prefix) == expected


def test_long_names_stay_distinct_and_short() -> None:
    a = tool_name("x" * 70 + ".a")
    b = tool_name("x" * 70 + ".b")
    assert a != b and len(a) == len(b) == 64
    assert tool_name("x" * 70 + ".a") == a  # stable


def text(value: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=value)


def test_text_blocks_are_joined() -> None:
    result = mcp_types.CallToolResult(content=[text("one"), text("two")])
    assert result_content(result) == "one\ntwo"


def test_structured_content_wins_over_its_text_form() -> None:
    result = mcp_types.CallToolResult(
        content=[text('{"n": 1}')], structured_content={"n": 12345678901234567890, "s": "é"}
    )
    assert result_content(result) == '{"n":12345678901234567890,"s":"é"}'


def test_empty_result() -> None:
    assert result_content(mcp_types.CallToolResult(content=[])) == ""


def test_every_block_kind_is_described() -> None:
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
            mcp_types.AudioContent(type="audio", data="AAAAAA==", mime_type="audio/wav"),
            mcp_types.ResourceLink(
                type="resource_link",
                name="report",
                uri="file:///r.pdf",
                mime_type="application/pdf",
            ),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.TextResourceContents(uri="memo://1", text="memo text"),
            ),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.BlobResourceContents(
                    uri="blob://1", blob="AAAA", mime_type="application/octet-stream"
                ),
            ),
        ]
    )
    assert result_content(result).splitlines() == [
        "[image: image/png, 3 bytes]",
        "[audio: audio/wav, 4 bytes]",
        "[resource link: report <file:///r.pdf>, application/pdf]",
        "memo text",
        "[resource: <blob://1>, application/octet-stream, 3 bytes]",
    ]


def test_images_audio_and_embedded_files_become_parts() -> None:
    png = base64.b64encode(b"\x89PNG").decode()
    result = mcp_types.CallToolResult(
        content=[
            text("look"),
            mcp_types.ImageContent(type="image", data=png, mime_type="image/png"),
            mcp_types.AudioContent(type="audio", data="AAAAAA==", mime_type="audio/wav"),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.BlobResourceContents(
                    uri="blob://1", blob="JVBERg==", mime_type="application/pdf"
                ),
            ),
            # A media type toolwire does not send is described, not dropped.
            mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/svg+xml"),
        ]
    )
    assert result_parts(result) == [
        "look",
        Image.from_bytes(b"\x89PNG", media_type="image/png"),
        Audio.from_bytes(b"\x00\x00\x00\x00", media_type="audio/wav"),
        Document.from_bytes(b"%PDF", media_type="application/pdf"),
        "[image: image/svg+xml, 3 bytes]",
    ]
    assert result_parts(mcp_types.CallToolResult(content=[text("only text")])) is None


def test_error_message() -> None:
    assert _error_message(mcp_types.CallToolResult(content=[text(" bad ")], is_error=True)) == "bad"
    assert "without a message" in _error_message(
        mcp_types.CallToolResult(content=[], is_error=True)
    )
    error = MCPToolError("boom", tool="t", code=-32602)
    assert error.to_dict() == {
        "type": "mcp_tool_error",
        "message": "boom",
        "tool": "t",
        "code": -32602,
    }


def test_first_error_unwraps_single_exception_groups() -> None:
    inner = OSError("refused")
    nested = BaseExceptionGroup("outer", [BaseExceptionGroup("inner", [inner])])
    assert _first_error(nested) is inner
    two = BaseExceptionGroup("two", [OSError("a"), OSError("b")])
    assert _first_error(two) is two


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_import_boundary_and_missing_sdk() -> None:
    code = """
import sys
sys.modules["mcp"] = None  # as if the SDK were not installed
import toolwire, toolwire.mcp
from toolwire import *
assert toolwire.MCPConnection is toolwire.mcp.MCPConnection
try:
    toolwire.mcp.connect_stdio("server")
except toolwire.UsageError as exc:
    print(exc)
"""
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "toolwire.mcp needs the MCP SDK: pip install 'toolwire[mcp]'"


def test_toolwire_does_not_load_the_sdk() -> None:
    done = run_python(
        "import sys, toolwire, toolwire.mcp\n"
        "toolwire.MCPConnection\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_'))))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
