"""Every Python block of README.md and docs/*.md runs as a reader copies it,
on its own (unless marked ``<!-- continues -->``), twice in a row, against
the emulation server: as a script, or pasted into ``python -m asyncio`` when
it has a top-level ``await`` (and then its page says so). So do the offline
``toolwire`` commands; every other ``toolwire`` command they show exists,
with its options.

The blocks are read from the documents themselves (``_markdown.plan``) and
run by ``run_document.py``, each in a scratch folder of its own, with HOME
pointed at an empty folder that must stay empty. Providers find the server
through their base-URL variables, as a reader's would find theirs; the keys
are fake, and never printed. A block marked ``<!-- docs-test: pytest -->`` is
a test file: it is written to a file of its own and run by pytest, the
toolwire fixture included. None is skipped.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests._userland import run_pytest, user_env
from toolwire.cli import main

from ._markdown import SHELLS, Block, Session, blocks, commands, inline_code, plan

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNER = Path(__file__).with_name("run_document.py")
FAKE_KEY = "sk-docs-test-not-a-real-key-0123456789"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")

# What a reader sees when the page runs: proof that the blocks talked to the
# emulated model and got its answer, not only that nothing raised.
EXPECTED_OUTPUT = {
    "README.md": [
        "It is light rain in Hangzhou.",
        "get_weather {'city': 'Hangzhou'}",
        "search_docs",
        "suspended get_weather {'city': 'Hangzhou'}",
        "refused: digest",
        "approved by ann",
        "I see the login page.",
        "Invoice INV-7 500",
        "True answered",
    ],
    "errors.md": ["failed"],
    "content.md": ["I see the page after the click.", "tool_result ['image', 'text']"],
    "output.md": [
        "Invoice INV-7 500",
        "INV-7 500 2",
        "asked with json_schema",
        "OutputInvalid 2 ('total',",
        "final INV-8 50 True",
        "items seen only grew: True 50 True",
    ],
    "cost.md": ["cost limit of $0.01 cannot be enforced", "['UnpricedCostWarning']"],
    "integrations.md": ["It is light rain in Hangzhou.", "get_weather {'city': 'Hangzhou'}"],
    "ray.md": ["It is light rain in Hangzhou.", "3 0 0"],
    "clouds.md": [
        f"{name} 2 calls: 杭州现在小雨"
        for name in ("Bedrock", "BedrockInvoke", "AnthropicVertex", "AzureOpenAI")
    ],
    "provider-items.md": [
        "It is light rain in Hangzhou. 2",
        "['text', 'server_tool_use', 'web_search_tool_result']",
    ],
    "wire-items.md": ["Done: applied 5 lines"],
    "websocket.md": [
        "over one socket: 2 responses",
        "continued: resp_ ['function_call_output', 'function_call_output']",
        "answered after 1 response over the socket",
        "then over HTTP, whole: 5 items",
    ],
    "approvals.md": [
        "suspended [('send_payment', {'amount_cents': 1250, 'to': 'ann'})]",
        "409 {'refused': 'digest'}",
        "Done: sent 1250 to ann [('ann', 1250)]",
        "send_payment {'amount_cents': 1250, 'to': 'ann'} sha256:",
        "signature True 0",
        "Done: sent 1250 to ann",
    ],
    "dialects.md": ["stop anthropic", "gemini", "True 1", "False 0"],
    "interactions.md": [
        "2 calls: 杭州现在小雨",
        "chained: True",
        "Light rain in Hangzhou. 2 requests, 1 continued",
    ],
    "security.md": ["invalid_arguments 100"],
    "conform.md": ["seen  an opener merged with its first fragment: 2 of 2 openers"],
    "reliability.md": ["requests: 2 continued after event: ["],
}


def python_blocks(document: Path) -> list[Block]:
    return [b for b in blocks(document) if b.language == "python"]


def scratch(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A working folder, an empty HOME, and the environment of a reader whose
    keys are fake and whose journal is in ``tmp_path``."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    env = user_env(
        home,
        TOOLWIRE_JOURNAL=str(tmp_path / "journal.sqlite3"),
        # Ray's settings for a single-node instance that reports nothing (docs/ray.md)
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
        RAY_USAGE_STATS_ENABLED="0",
        **{key: FAKE_KEY for key in KEYS},
    )
    return work, home, env


def run_blocks(document: Path) -> list[Session | Block]:
    return plan(document)


@pytest.mark.timeout(900)  # the page's own bound below: Ray starts slowly on a busy machine
@pytest.mark.parametrize("document", [d for d in DOCUMENTS if run_blocks(d)], ids=lambda d: d.name)
def test_every_block_runs(document: Path, tmp_path: Path) -> None:
    work, home, env = scratch(tmp_path)
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, str(RUNNER), str(document), str(report)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert report.exists(), proc.stdout[-4000:] + proc.stderr[-4000:]
    results = json.loads(report.read_text(encoding="utf-8"))
    for result in results:
        assert result["ok"], (
            f"{document.name}:{result['line']} fails:\n{result['error']}\n"
            f"output:\n{proc.stdout[-3000:]}"
        )
    expected = [step.line for step in run_blocks(document)]
    assert [r["line"] for r in results] == expected, "every block runs, none is skipped"
    assert proc.returncode == 0, proc.stderr[-4000:]
    for fragment in EXPECTED_OUTPUT.get(document.name, []):
        assert fragment in proc.stdout, fragment
    assert FAKE_KEY not in proc.stdout + proc.stderr
    assert list(home.iterdir()) == []


TEST_FILES = [b for d in DOCUMENTS for b in python_blocks(d) if b.directive == "pytest"]


def test_the_readme_shows_a_test_file() -> None:
    assert [b.path.name for b in TEST_FILES].count("README.md") >= 1


@pytest.mark.parametrize("block", TEST_FILES, ids=lambda b: b.where)
def test_test_file_blocks_pass_under_pytest(block: Block, tmp_path: Path) -> None:
    work, home, env = scratch(tmp_path)
    del env["TOOLWIRE_JOURNAL"]  # the fixture alone must keep the user's journal out
    test_file = work / f"test_{block.path.stem.lower()}_{block.line}.py"
    test_file.write_text(block.text, encoding="utf-8")
    proc = run_pytest(test_file, env=env, basetemp=tmp_path / "pytest")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"\b[1-9]\d* passed\b", proc.stdout)
    assert list(home.iterdir()) == []


# -- shell commands -------------------------------------------------------------------


def shell_commands(document: Path) -> list[tuple[str, list[str]]]:
    """``(where, argv)`` of each command shown in the document's shell blocks, and of
    each inline ``toolwire ...`` span."""
    found = [
        (block.where, argv)
        for block in blocks(document)
        if block.language in SHELLS
        for argv in commands(block)
    ]
    for line, text in inline_code(document):
        if re.match(r"(\.venv/bin/)?toolwire ", text) and "|" not in text:
            found.append((f"{document.name}:{line}", shlex.split(text)))
    return found


def check_toolwire(argv: list[str]) -> None:
    """The subcommands exist, and so do the options, with valid choices."""
    command: click.Command = main
    ctx = click.Context(main, info_name="toolwire")
    args = list(argv)
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        name = args.pop(0)
        sub = command.get_command(ctx, name)
        assert sub is not None, f"no command {ctx.command_path} {name}"
        command, ctx = sub, click.Context(sub, info_name=name, parent=ctx)
    options = {
        opt: param
        for param in command.params
        if isinstance(param, click.Option)
        for opt in (*param.opts, *param.secondary_opts)
    }
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if not arg.startswith("-") or arg == "-" or arg in ("--help", "-h"):
            continue
        name, _, value = arg.partition("=")
        assert name in options, f"{ctx.command_path} has no option {name}"
        param = options[name]
        if not param.is_flag and not value and position < len(args):
            value, position = args[position], position + 1
        if isinstance(param.type, click.Choice):
            assert value in param.type.choices, f"{ctx.command_path} {name} {value}"


def make_targets() -> set[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([\w-]+):", makefile, re.MULTILINE))


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_commands_shown_exist(document: Path) -> None:
    checked = 0
    for where, argv in shell_commands(document):
        program = Path(argv[0]).name
        if program == "toolwire":
            check_toolwire(argv[1:])
        elif program == "make":
            assert set(argv[1:]) <= make_targets(), f"{where}: make {argv[1:]}"
        elif program in ("python", "python3"):
            script = next((a for a in argv[1:] if a.endswith(".py")), None)
            if script is not None and "/" in script:  # a file of the repository
                assert (ROOT / script).exists(), f"{where}: no {script}"
        else:
            continue
        checked += 1
    assert checked or not any(b.language in SHELLS for b in blocks(document))


def test_the_checker_catches_a_wrong_command() -> None:
    with pytest.raises(AssertionError, match="no option --nope"):
        check_toolwire(["serve", "--nope"])
    with pytest.raises(AssertionError, match="no command toolwire runs lst"):
        check_toolwire(["runs", "lst"])
    with pytest.raises(AssertionError, match="--provider"):
        check_toolwire(["demo", "--provider", "openai"])
    check_toolwire(["chat", "--provider", "openai-chat", "--model", "m", "hi"])


# -- the runner itself ----------------------------------------------------------------


def test_the_readme_is_a_short_guide() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 400


def run_page(tmp_path: Path, page: str) -> list[dict[str, object]]:
    document = tmp_path / "page.md"
    document.write_text(page, encoding="utf-8")
    work, _home, env = scratch(tmp_path)
    report = tmp_path / "report.json"
    subprocess.run(
        [sys.executable, str(RUNNER), str(document), str(report)],
        cwd=work,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    results: list[dict[str, object]] = json.loads(report.read_text(encoding="utf-8"))
    return results


def test_each_block_runs_on_its_own_unless_it_continues(tmp_path: Path) -> None:
    page = (
        "```python\nx = 1\nopen('here.txt', 'w').close()\n```\n\n"
        "<!-- continues -->\n```python\n"
        "import os\nassert x == 1 and os.path.exists('here.txt')\n```\n\n"
        "```python\nimport os\nassert not os.path.exists('here.txt')\nprint(x)\n```\n"
    )
    results = run_page(tmp_path, page)
    assert [r["ok"] for r in results] == [True, False]
    assert "NameError: name 'x' is not defined" in str(results[1]["error"])


def test_a_misspelt_marker_is_refused(tmp_path: Path) -> None:
    document = tmp_path / "page.md"
    document.write_text("<!-- continue -->\n```python\npass\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="is not a marker"):
        blocks(document)


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md"])
def test_relative_links_resolve(name: str) -> None:
    """The site checks the links of docs/ (mkdocs build --strict); these two
    pages are read on the repository's front page."""
    text = (ROOT / name).read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    relative = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert relative, "links to the docs"
    assert [t for t in relative if not (ROOT / t).exists()] == []


def test_a_block_runs_as_pasted_into_python_m_asyncio(tmp_path: Path) -> None:
    """Pasted at the prompt, a compound statement ends at a blank line: a
    statement right after it is a syntax error there, though not in a file."""
    loop = "import asyncio\nfor i in range(2):\n    await asyncio.sleep(0)\n"
    page = f"```python\n{loop}\nprint('pasted', i)\n```\n\n```python\n{loop}print(i)\n```\n"
    results = run_page(tmp_path, page)
    assert [r["ok"] for r in results] == [True, False]
    assert "SyntaxError: invalid syntax" in str(results[1]["error"])


def test_a_blank_line_inside_a_class_fails_as_pasted(tmp_path: Path) -> None:
    body = "class A:\n    x = 1\n\n    def f(self):\n        return self.x\n"
    page = f"```python\nimport asyncio\n{body}await asyncio.sleep(0)\n```\n"
    results = run_page(tmp_path, page)
    assert [r["ok"] for r in results] == [False]
    assert "IndentationError: unexpected indent" in str(results[0]["error"])


def test_a_block_runs_twice_in_a_row(tmp_path: Path) -> None:
    page = (
        "```python\nprint('again')\n```\n\n"
        "```python\nimport os\nassert not os.path.exists('once')\nopen('once', 'w').close()\n```\n"
    )
    results = run_page(tmp_path, page)
    assert [r["ok"] for r in results] == [True, False]
    assert "AssertionError" in str(results[1]["error"])


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.name)
def test_a_page_with_a_top_level_await_says_where_it_runs(document: Path) -> None:
    sessions = [s for s in plan(document) if isinstance(s, Session)]
    if any(session.awaits for session in sessions):
        assert "python -m asyncio" in document.read_text(encoding="utf-8")
