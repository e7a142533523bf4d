"""The viewer's web application: routes, and the guard in front of them.

Theory of operation: the viewer serves one user on their own machine, on
loopback. Every request passes :class:`Guard` first:

* the ``Host`` must be the loopback address the viewer listens on (a page
  of another site cannot reach it through DNS rebinding);
* the path must be under the viewer's secret root, else 404
  (:mod:`toolwire.view._access`: the cookie is bound to that path, so a
  server on another port of the same host never receives it);
* it must carry the access token, in the URL the viewer printed
  (``?token=``: answered with a redirect to the same page without it and a
  cookie, ``HttpOnly``, ``SameSite=Strict`` and ``Path=/<root>/``, holding
  it), or the one-time code ``--open`` gave the browser (``?code=``, taken
  once), or in that cookie; else 401;
* ``GET`` and ``HEAD`` read; ``POST`` is taken on the action paths alone,
  and only from the viewer's own pages (``Origin`` is the viewer's, or,
  without one or with ``null``, what the pages' no-referrer policy makes a
  browser send with a form, ``Sec-Fetch-Site: same-origin``), else 403;
  any other method or path that would write is 405.

The journal is opened read-only, once per request (a file another process
writes to is read as it stands now, and no read transaction stays open).
An action opens it for writing for one decision (:mod:`toolwire.view._actions`).
Pages carry a content security policy that allows the viewer's own script
and style alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, urlencode

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolwire.journal import JournalError, JournalReader, PostgresJournal, SQLiteJournal
from toolwire.view._access import COOKIE, Access, cookie_value, new_secret
from toolwire.view._actions import FORM_LIMIT, BadForm, decide, parse_form
from toolwire.view._assets import ASSETS
from toolwire.view._blobs import blob_response
from toolwire.view._html import ROOT, href, ident, layout, text
from toolwire.view._listing import BadQuery, ListQuery, list_page
from toolwire.view._live import STREAMS, follow
from toolwire.view._replay import load_replays
from toolwire.view._run_page import run_page

__all__ = ["COOKIE", "ViewSettings", "create_app"]

_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
}
_ACTIONS = ("/resume", "/approve", "/deny")


@dataclass(frozen=True, slots=True)
class ViewSettings:
    """What one viewer serves, and how."""

    journal: Path | str = field(repr=False)
    """The journal file, or a ``postgresql://`` URL (which may hold a password)."""
    token: str = field(repr=False)
    port: int
    """The port the viewer listens on (what the ``Host`` header must say)."""
    poll: float = 0.5
    """Seconds between two reads of the journal by a live stream."""
    stream_deadline: float = 300.0
    """Seconds one live stream lasts at most (the browser reconnects)."""
    head_timeout: float = 5.0
    """Seconds a connection has to send a whole request head, else it is
    dropped (:class:`toolwire.view._serve.HeadTimeout`)."""
    principal: str = "toolwire view"
    """Who the approvals and denials given in this viewer are journaled as."""
    cassettes: tuple[Path, ...] = ()
    """Cassette directories of the runs' streams: a call found in one shows
    how its arguments grew (:mod:`toolwire.view._replay`)."""
    approval_key: bytes | None = field(default=None, repr=False)
    """The approval key (``$TOOLWIRE_APPROVAL_KEY``) the viewer signs its
    decisions with; without one they are recorded unsigned, and the run's
    page says that a resume with a key refuses them."""
    root: str = field(default_factory=lambda: "/" + new_secret(), repr=False)
    """The secret path everything is served under (``/`` and a random word):
    the cookie is bound to it (:mod:`toolwire.view._access`)."""
    code: str | None = field(default=None, repr=False)
    """A one-time code that is exchanged once for the cookie (``--open``)."""
    code_used: Callable[[], None] | None = field(default=None, repr=False, compare=False)
    """Called once the code is used (which removes the file that held it)."""

    @staticmethod
    def new_token() -> str:
        return new_secret()

    def url(self, path: str = "/") -> str:
        """The viewer's address for ``path`` (under its root), without a credential."""
        return f"http://127.0.0.1:{self.port}{self.root}{path}"


def _plain(status: int, message: str) -> Response:
    return PlainTextResponse(message + "\n", status_code=status)


def _page(status: int, title: str, message: str) -> Response:
    body = f"<p>{text(message)}</p>"
    return HTMLResponse(layout(title, body), status_code=status)


class Guard:
    """The root, token, host, method and origin checks (see the module's docstring)."""

    def __init__(self, app: ASGIApp, settings: ViewSettings) -> None:
        self.app = app
        self.settings = settings
        self.access = Access(settings.token, settings.root, settings.code)
        self.hosts = {f"127.0.0.1:{settings.port}", f"localhost:{settings.port}"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, _with_headers(send))
            return
        rooted = ROOT.set(self.access.root)
        try:
            scope = {**scope, "root_path": self.access.root}
            await self.app(scope, receive, _with_headers(send))
        finally:
            ROOT.reset(rooted)

    def _refusal(self, scope: Scope) -> Response | None:
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("host") not in self.hosts:
            return _plain(403, "this viewer answers on its loopback address only")
        method, path = scope["method"], scope["path"]
        if not self.access.within(path):
            return _plain(404, "nothing here: open the URL toolwire view printed")
        if path == self.access.root:  # the cookie's path has the slash: go there first
            rest = scope.get("query_string", b"").decode("latin-1")
            target = self.access.cookie_path + ("?" + rest if rest else "")
            return Response(status_code=308, headers={"location": target})
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        offered = query.get("token")
        if method == "GET" and "code" in query:
            if self.access.redeem(query["code"]):
                if self.settings.code_used is not None:
                    self.settings.code_used()
                return self._set_cookie(path, query, refresh=True)
            return _plain(
                401, "this one-time code is used or wrong: open the URL toolwire view printed"
            )
        if offered is None:
            offered = cookie_value(headers.get("cookie", ""))
        elif method == "GET" and self.access.matches(offered):
            return self._set_cookie(path, query)
        if not self.access.matches(offered):
            return _plain(401, "open the URL toolwire view printed (it carries the access token)")
        if method in ("GET", "HEAD"):
            return None
        if method != "POST" or not path.endswith(_ACTIONS):
            return _plain(405, "the viewer reads; it writes only through its actions")
        origin = headers.get("origin")
        # The pages' no-referrer policy makes a browser send "Origin: null"
        # with their forms: then its Sec-Fetch-Site says where they come from.
        if origin is not None and origin != "null":
            same = origin in {f"http://{host}" for host in self.hosts}
            if not same or origin != f"http://{headers['host']}":
                return _plain(403, "actions are taken from the viewer's own pages only")
        elif headers.get("sec-fetch-site") != "same-origin":
            return _plain(403, "actions are taken from the viewer's own pages only")
        return None

    def _set_cookie(self, path: str, query: dict[str, str], *, refresh: bool = False) -> Response:
        """The cookie, and the page again without the credential in its address.

        ``refresh``: the browser came from elsewhere (the opener file), and
        a redirect would carry on that navigation, whose requests a
        ``SameSite=Strict`` cookie is not sent with: a page of the viewer's
        own sends it on instead.
        """
        rest = {k: v for k, v in query.items() if k not in ("token", "code")}
        target = path + ("?" + urlencode(rest) if rest else "")
        if refresh:
            shown = ident(target)
            response: Response = HTMLResponse(
                f'<!doctype html><meta http-equiv=refresh content="0;url={shown}">'
                f'<title>toolwire view</title><a href="{shown}">toolwire view</a>'
            )
        else:
            response = Response(status_code=303, headers={"location": target})
        response.set_cookie(
            COOKIE,
            self.settings.token,
            httponly=True,
            samesite="strict",
            path=self.access.cookie_path,
        )
        return response


def _with_headers(send: Send) -> Send:
    """``send`` that adds the security headers to every response."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {k.lower() for k, _ in message.get("headers", [])}
            extra = [
                (k.encode(), v.encode()) for k, v in _HEADERS.items() if k.encode() not in present
            ]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return sending


def create_app(settings: ViewSettings) -> ASGIApp:
    """The viewer of the journal ``settings.journal``, behind its guard."""
    return Guard(Starlette(routes=_Viewer(settings).routes()), settings)


class _Viewer:
    """The viewer's pages and actions over one journal: a handler per route."""

    def __init__(self, settings: ViewSettings) -> None:
        self.settings = settings
        self.streams = anyio.Semaphore(STREAMS)
        """The live streams open at once."""

    def routes(self) -> list[Route]:
        """The route table: pages and streams read, actions post."""
        return [
            Route("/", self.runs, methods=["GET"]),
            Route("/runs/{run_id}", self.run, methods=["GET"]),
            Route("/runs/{run_id}/events", self.events, methods=["GET"]),
            Route("/runs/{run_id}/blobs/{sha256}", self.blob, methods=["GET"]),
            Route("/static/{name}", _asset, methods=["GET"]),
            Route("/runs/{run_id}/resume", _resume, methods=["POST"]),
            Route("/runs/{run_id}/calls/{call_id}/approve", self.approve, methods=["POST"]),
            Route("/runs/{run_id}/calls/{call_id}/deny", self.deny, methods=["POST"]),
        ]

    def open_journal(self) -> JournalReader | None:
        """The journal, read-only (``None``: there is no journal file yet)."""
        journal = self.settings.journal
        if isinstance(journal, str):
            return PostgresJournal(journal, read_only=True)
        if not journal.exists():
            return None
        return SQLiteJournal(journal, read_only=True)

    def opened(self) -> JournalReader:
        """The journal, read-only.

        Raises:
            JournalError: there is no journal.
        """
        journal = self.open_journal()
        if journal is None:
            raise JournalError(f"there is no journal at {self.settings.journal}")
        return journal

    async def runs(self, request: Request) -> Response:
        """``/``: the list of runs, filtered by the query."""
        try:
            query = ListQuery.parse(dict(request.query_params))
        except BadQuery as exc:
            return _page(400, "runs", str(exc))

        def render() -> str:
            journal = self.open_journal()
            try:
                return list_page(journal, query)
            finally:
                if journal is not None:
                    journal.close()

        try:
            return HTMLResponse(await anyio.to_thread.run_sync(render))
        except JournalError as exc:
            return _page(503, "runs", exc.message)

    async def run(self, request: Request) -> Response:
        """``/runs/{run_id}``: one run's page (``?page=``: of turns)."""
        ref = request.path_params["run_id"]
        raw = request.query_params.get("page")
        if raw is not None and not (raw.isascii() and raw.isdigit() and 0 < len(raw) < 7):
            return _page(400, "run", "page must be a positive integer")
        page = int(raw) if raw is not None else None
        if page == 0:
            return _page(400, "run", "page must be a positive integer")

        def render() -> str:
            journal = self.opened()
            try:
                log = journal.load_run(journal.find_run(ref))
            finally:
                journal.close()
            replays, problems = load_replays(self.settings.cassettes)
            return run_page(
                log, replays, problems, page=page, signing=self.settings.approval_key is not None
            )

        try:
            return HTMLResponse(await anyio.to_thread.run_sync(render))
        except JournalError as exc:
            return _page(404, "run", exc.message)

    async def blob(self, request: Request) -> Response:
        """``/runs/{run_id}/blobs/{sha256}``: one of the run's parts (an image
        inline, anything else a download; :mod:`toolwire.view._blobs`)."""
        ref, sha256 = request.path_params["run_id"], request.path_params["sha256"]

        def read() -> Response:
            journal = self.opened()
            try:
                return blob_response(journal, ref, sha256)
            finally:
                journal.close()

        try:
            return await anyio.to_thread.run_sync(read)
        except JournalError as exc:
            return _plain(404, exc.message)

    async def events(self, request: Request) -> Response:
        """``/runs/{run_id}/events``: the run's events as they are journaled
        (server-sent events), from ``Last-Event-ID`` or ``?after=``."""
        run_id = request.path_params["run_id"]
        raw = request.headers.get("last-event-id") or request.query_params.get("after", "0")
        if not (raw.isascii() and raw.isdigit() and len(raw) < 12):
            return _plain(400, "after must be a non-negative integer")
        try:
            start = await anyio.to_thread.run_sync(lambda: self._first_event_at(run_id))
        except JournalError as exc:
            return _plain(404, exc.message)
        if self.streams.value == 0:
            return _plain(503, "too many live streams are open")
        return StreamingResponse(
            self._follow(run_id, int(raw), start), media_type="text/event-stream"
        )

    def _first_event_at(self, run_id: str) -> float:
        """When the run's first event happened (0 without any)."""
        journal = self.opened()
        try:
            found = journal.events_after(run_id, 0, limit=1)
        finally:
            journal.close()
        return found[0].at if found else 0.0

    async def _follow(self, run_id: str, after: int, start: float) -> AsyncIterator[str]:
        """One live stream's body, holding its place among the open streams."""
        async with self.streams:
            async for chunk in follow(
                self.opened,
                run_id,
                after,
                start=start,
                poll=self.settings.poll,
                deadline=self.settings.stream_deadline,
            ):
                yield chunk

    async def approve(self, request: Request) -> Response:
        """``POST .../calls/{call_id}/approve``."""
        return await self._decide(request, "approve")

    async def deny(self, request: Request) -> Response:
        """``POST .../calls/{call_id}/deny``."""
        return await self._decide(request, "deny")

    async def _decide(self, request: Request, verb: Literal["approve", "deny"]) -> Response:
        """Journal a decision on a pending call, then go back to its run."""
        run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
        try:
            form = parse_form(await _form_body(request), request.headers.get("content-type", ""))
        except BadForm as exc:
            return _page(400, "action", str(exc))
        settings = self.settings
        outcome = await anyio.to_thread.run_sync(
            lambda: decide(
                settings.journal,
                run_id,
                call_id,
                verb,
                form,
                principal=settings.principal,
                key=settings.approval_key,
            )
        )
        if not outcome.recorded:
            back = f'<a href="{ident(href("/runs/" + quote(run_id, safe="")))}">back to the run</a>'
            # The judge's words name ids and digests (which redaction would hide), never values.
            body_html = f"<p class=error>{ident(outcome.message)}</p><p>{back}</p>"
            return HTMLResponse(layout("not recorded", body_html), status_code=outcome.status)
        target = href(f"/runs/{quote(run_id, safe='')}#pending")
        return Response(status_code=303, headers={"location": target})


async def _form_body(request: Request) -> bytes:
    """A form's body, read no further than just past :data:`FORM_LIMIT`
    (which :func:`parse_form` then refuses)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_LIMIT:
            break
    return body


async def _asset(request: Request) -> Response:
    """``/static/{name}``: the viewer's own script and style."""
    found = ASSETS.get(request.path_params["name"])
    if found is None:
        return _plain(404, "no such file")
    media_type, content = found
    return Response(content, media_type=media_type)


async def _resume(request: Request) -> Response:
    """``POST /runs/{run_id}/resume``: not here (the run's tools are not)."""
    return _page(
        501,
        "resume",
        "the viewer cannot resume a run: its tools live in your program. Continue it "
        f"there with agent.resume({request.path_params['run_id']!r})",
    )
