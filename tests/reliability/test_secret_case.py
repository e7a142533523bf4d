"""A key is the same key in any case: a tool that prints it upper-cased, a
percent-escape written in lower case, leave no form of it in the journal."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from toolwire import tool
from toolwire.http.credentials import Scrubber, redact
from toolwire.journal import SQLiteJournal
from toolwire.journal._payloads import RecordEncoder, encode_record
from toolwire.testing import EmulationServer, Scenario

from ..journal._support import make_agent

pytestmark = pytest.mark.anyio

KEY = "sk-proj-Zq81x0Yb7Kd2/Lm3Np4+Ab"
FORMS = [KEY.upper(), KEY.lower(), quote(KEY, safe="").lower(), KEY.swapcase()]


def journal_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("journal.sqlite3*")))


@tool
def shout(what: str) -> str:
    """Prints its settings the way a careless tool might.

    Args:
        what: anything.
    """
    return f"CONFIG: OPENAI_API_KEY={KEY.upper()} FOR {what.upper()} ({KEY.lower()})"


async def test_a_key_in_another_case_is_not_journaled(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    scenario = Scenario.from_dict(
        {
            "name": "shout",
            "turns": [
                {"tool_calls": [{"name": "shout", "arguments": {"what": "x"}}]},
                {"text": "the tool said {result:shout}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [shout], journal=journal, api_key=KEY)
        result = await agent.run("go", run_id="shout")
        await agent.aclose()
    journal.close()
    assert KEY.upper() in result.output, "the model did see it: the test is meaningful"
    data = journal_bytes(tmp_path)
    for form in (KEY, KEY.upper(), KEY.lower()):
        assert form.encode() not in data, form
    assert b"<redacted>" in data


@pytest.mark.parametrize("form", FORMS)
def test_every_scrubber_finds_a_key_in_any_case(form: str) -> None:
    record = {"note": f"the key is {form}.", form: 1}
    assert form not in encode_record(record, [KEY])
    assert form not in RecordEncoder([KEY]).encode(record)
    assert form not in str(redact(record, [KEY]))
    assert form.encode() not in Scrubber([KEY]).scrub(f"x{form}y".encode())
    scrubber = Scrubber([KEY])
    streamed = b"".join(scrubber.feed(bytes([b])) for b in f"a {form} b".encode())
    assert form.encode() not in streamed + scrubber.finish()
