"""A real, throwaway PostgreSQL server for the tests (a plugin of the root
conftest: the ``postgres_server`` and ``postgres_url`` fixtures).

The server binaries come from the ``pgserver`` wheel (a dev dependency, so
``make`` installs them from PyPI on a fresh machine), else from
``$TOOLWIRE_PG_BIN``, else from a ``postgres`` on ``PATH`` or in Debian's
``/usr/lib/postgresql/*/bin``. The cluster lives in a private temporary
directory, listens on a Unix socket in it and on no TCP address, and is
stopped (fast shutdown, then killed past a deadline) when the session ends.

PostgreSQL refuses to run as root: as root, the cluster is initialized and run
as ``nobody`` (``setpriv``), in a directory that user owns; root may still
connect to its socket. When ``nobody`` cannot reach the binaries (a clone
inside a private directory such as ``/root`` or one made by ``mktemp -d``),
the installation is first copied, libraries beside it, into a temporary
directory that user can read.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = [
    "PostgresServer",
    "as_server_user",
    "find_bin",
    "other_connections",
    "postgres_server",
    "postgres_url",
    "reachable_bin",
]

START_DEADLINE = 30.0
STOP_DEADLINE = 10.0


def find_bin() -> Path | None:
    """The directory of the ``initdb`` and ``postgres`` binaries, if any."""
    env = os.environ.get("TOOLWIRE_PG_BIN")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("pgserver")  # not imported: it warns on import
    if spec is not None and spec.origin is not None:
        candidate = Path(spec.origin).parent / "pginstall" / "bin"
        if (candidate / "postgres").exists():
            return candidate
    found = shutil.which("postgres")
    if found:
        return Path(found).resolve().parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(debian[-1]).parent if debian else None


def as_server_user() -> list[str]:
    """The command prefix that drops root to ``nobody`` (nothing otherwise)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def _runs(bin_dir: Path) -> str | None:
    """Why the cluster's binaries cannot run as the user they will run as
    (None when they can). ``initdb`` loads the installation's shared
    libraries, so it is the one asked."""
    try:
        done = subprocess.run(
            [*as_server_user(), str(bin_dir / "initdb"), "--version"],
            capture_output=True,
            timeout=START_DEADLINE,
            check=False,
        )
    except OSError as exc:
        return str(exc)
    return None if done.returncode == 0 else done.stderr.decode(errors="replace")[-500:]


def reachable_bin(bin_dir: Path, scratch: Path) -> Path:
    """``bin_dir``, or a copy of its installation in ``scratch`` that the
    server's user can run.

    The copy keeps the layout around the installation that its binaries find
    their libraries by (pgserver's ``pginstall`` and the ``pgserver.libs``
    two levels up); every directory on the way is made world-readable.

    Raises:
        RuntimeError: the binaries cannot run, copied or not.
    """
    if _runs(bin_dir) is None:
        return bin_dir
    install = bin_dir.parent
    package = install.parent
    scratch.chmod(0o755)
    copy = scratch / package.name / install.name
    shutil.copytree(install, copy, symlinks=True)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, scratch / libs.name, symlinks=True)
    for path in (scratch, *scratch.rglob("*")):
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode | (0o555 if path.is_dir() or mode & 0o100 else 0o444))
    problem = _runs(copy / "bin")
    if problem is not None:
        raise RuntimeError(f"the PostgreSQL binaries in {bin_dir} cannot run: {problem}")
    return copy / "bin"


@dataclass
class PostgresServer:
    """A running throwaway cluster (see :meth:`start`)."""

    directory: Path
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, bin_dir: Path) -> PostgresServer:
        """Initialize a cluster in a new temporary directory and start it.

        Raises:
            RuntimeError: initdb failed, or the server did not accept
                connections within :data:`START_DEADLINE` seconds.
        """
        directory = Path(tempfile.mkdtemp(prefix="twpg-"))
        if os.geteuid() == 0:
            shutil.chown(directory, "nobody", "nogroup")
        data = directory / "data"
        prefix = as_server_user()
        init = subprocess.run(
            [
                *prefix,
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            capture_output=True,
            timeout=START_DEADLINE,
            check=False,
        )
        if init.returncode != 0:
            shutil.rmtree(directory, ignore_errors=True)
            raise RuntimeError(f"initdb failed: {init.stderr.decode(errors='replace')[-2000:]}")
        log = open(directory / "log", "wb")
        process = subprocess.Popen(
            [
                *prefix,
                str(bin_dir / "postgres"),
                "-D",
                str(data),
                "-k",
                str(directory),
                "-c",
                "listen_addresses=",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        server = cls(directory, process)
        server._wait_ready(bin_dir)
        return server

    def _wait_ready(self, bin_dir: Path) -> None:
        deadline = time.monotonic() + START_DEADLINE
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            ready = subprocess.run(
                [str(bin_dir / "pg_isready"), "-h", str(self.directory), "-U", "postgres"],
                capture_output=True,
                timeout=START_DEADLINE,
                check=False,
            )
            if ready.returncode == 0:
                return
            time.sleep(0.05)
        log = (self.directory / "log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start: {log}")

    def url(self, database: str = "postgres") -> str:
        """A ``postgresql://`` URL of a database on the server's socket."""
        return f"postgresql://postgres@/{database}?host={self.directory}"

    def new_database(self) -> str:
        """Create an empty database; the URL of it."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:16]
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as db:
            db.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (SIGINT: fast shutdown; killed past a deadline) and
        remove its directory."""
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_DEADLINE)
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session, on a private Unix socket."""
    bin_dir = find_bin()
    if bin_dir is None:
        pytest.fail("no PostgreSQL binaries: run make (pgserver is a dev dependency)")
    scratch = Path(tempfile.mkdtemp(prefix="twpgbin-"))
    try:
        server = PostgresServer.start(reachable_bin(bin_dir, scratch))
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database."""
    return postgres_server.new_database()


def other_connections(url: str, deadline: float = 5.0) -> int:
    """How many connections to the database of ``url`` other than the one
    asking are open, once those being closed are gone (a server process
    ends a moment after its client closes: waited for up to ``deadline``
    seconds)."""
    import psycopg

    query = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    end = time.monotonic() + deadline
    with psycopg.connect(url, autocommit=True) as db:
        while True:
            row = db.execute(query).fetchone()
            count = int(row[0]) if row else 0
            if count == 0 or time.monotonic() > end:
                return count
            time.sleep(0.02)
