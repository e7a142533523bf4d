"""A failing tool's traceback, as the journal keeps it: whole, cleaned, bounded."""

from __future__ import annotations

from toolwire.tools.redaction import TRACEBACK_LIMIT, traceback_text


def _raise(depth: int, message: str) -> None:
    if depth == 0:
        raise RuntimeError(message)
    _raise(depth - 1, message)


def _caught(depth: int, message: str = "x") -> BaseException:
    try:
        _raise(depth, message)
    except RuntimeError as exc:
        return exc
    raise AssertionError("no error")


def test_a_traceback_keeps_its_lines_and_loses_its_credentials() -> None:
    text = traceback_text(_caught(2, "Bearer abcdefghijklmnop at https://u:pw@example.com/a?t=z"))
    lines = text.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert sum("in _raise" in line for line in lines) == 3
    assert lines[-1] == "RuntimeError: Bearer <redacted> at https://example.com/..."
    assert not any(secret in text for secret in ("abcdefghijklmnop", "pw@", "t=z"))
    assert __file__ in text  # file paths are what a traceback is for


def test_a_long_traceback_keeps_its_end() -> None:
    error = _caught(3, "the end of a long story " * 500)
    whole = traceback_text(error, limit=10**9)
    cut = traceback_text(error)
    assert len(whole) > TRACEBACK_LIMIT
    assert cut == f"...({len(whole) - TRACEBACK_LIMIT} characters cut)\n" + whole[-TRACEBACK_LIMIT:]
    assert whole.startswith("Traceback") and cut.endswith("the end of a long story ")


def test_a_cause_is_part_of_the_traceback() -> None:
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise ValueError("outer") from inner
    except ValueError as exc:
        text = traceback_text(exc)
    assert "KeyError: 'inner'" in text and "direct cause" in text
    assert text.splitlines()[-1] == "ValueError: outer"


def test_a_frames_path_with_digits_is_kept() -> None:
    # /tmp/build2/tests/tools/test_... is a run of letters, digits and slashes
    # that the credential pattern would take for a key anywhere else.
    path = "/tmp/build2/tests/tools/test_checkout_v1_module.py"
    namespace: dict[str, object] = {}
    exec(compile("def fail():\n    raise RuntimeError('no')\n", path, "exec"), namespace)
    try:
        namespace["fail"]()  # type: ignore[operator]
    except RuntimeError as exc:
        text = traceback_text(exc)
    assert f'File "{path}", line 2, in fail' in text
