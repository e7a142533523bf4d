"""Build the real-server tier's servers and model, once: ``python -m tests.realservers.build``.

Theory of operation: everything comes from one source package on PyPI,
llama-cpp-python's sdist, which vendors llama.cpp.

1. A virtualenv in the cache, then the sdist, downloaded with pip and checked
   against the sha256 PyPI publishes, then unpacked.
2. ``pip install <sdist>[server]``: llama-cpp-python compiles its llama.cpp
   and installs its OpenAI-compatible server.
3. llama.cpp's own ``llama-server``, configured with CMake from the same
   vendored tree. ``LLAMA_USE_PREBUILT_UI=OFF``, or it downloads a web UI.
   CMake and Ninja come from the system when it has them, else from PyPI.
4. A 25 MB random-weight GGUF (``make_model.py``), made with the ``gguf``
   package vendored in the same tree.

Each step is skipped when its result is already in the cache, so a second run
takes seconds. Every command runs with a deadline; builds use all cores
(``CMAKE_BUILD_PARALLEL_LEVEL`` overrides). Run it under ``nice`` on a
shared machine.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.realservers.cache import SDIST_SHA256, VERSION, Cache

HERE = Path(__file__).resolve().parent
BUILD_DEADLINE = 3 * 3600.0
"""Seconds a compile may take (two cores and a busy machine: about 20 minutes)."""
STEP_DEADLINE = 900.0
"""Seconds any other step may take (downloads, the model)."""
CMAKE_ARGS = ("-DGGML_NATIVE=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF")
"""Portable CPU code (the cache may move between machines), no tests or examples."""
LLAMA_SERVER_ARGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)


class BuildFailed(Exception):
    """A step failed or ran out of time."""


def run(
    argv: Sequence[str | Path],
    *,
    deadline: float = STEP_DEADLINE,
    env: Mapping[str, str] | None = None,
) -> None:
    """Run a command, its output on ours, within ``deadline`` seconds."""
    command = [str(arg) for arg in argv]
    print("+", " ".join(command), flush=True)
    try:
        subprocess.run(command, check=True, timeout=deadline, env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        raise BuildFailed(f"{command[0]} did not finish within {deadline:.0f} s") from None
    except subprocess.CalledProcessError as error:
        raise BuildFailed(f"{command[0]} failed with exit status {error.returncode}") from None


def jobs() -> str:
    return os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)


def require_compilers() -> None:
    """llama.cpp is C and C++: say so before pip and CMake fail less clearly."""
    for kind, names in (("C", ("cc", "gcc", "clang")), ("C++", ("c++", "g++", "clang++"))):
        if not any(shutil.which(name) for name in names):
            raise BuildFailed(f"no {kind} compiler on PATH (looked for {', '.join(names)})")


def ensure_venv(cache: Cache) -> None:
    if not cache.python.exists():
        run([sys.executable, "-m", "venv", cache.venv])


def ensure_sdist(cache: Cache) -> None:
    if cache.sdist.exists() and sha256(cache.sdist) == SDIST_SHA256:
        return
    cache.sdist.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.root) as tmp:
        spec = f"llama-cpp-python=={VERSION}"
        pip = [cache.python, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        run([*pip, "--dest", tmp, spec])
        downloaded = Path(tmp) / cache.sdist.name
        digest = sha256(downloaded)
        if digest != SDIST_SHA256:
            raise BuildFailed(f"{cache.sdist.name}: sha256 {digest}, PyPI says {SDIST_SHA256}")
        downloaded.replace(cache.sdist)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_source(cache: Cache) -> None:
    if (cache.source / "pyproject.toml").exists():
        return
    cache.source.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.source.parent) as tmp:
        with tarfile.open(cache.sdist) as archive:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12: no links out, no devices
                archive.extractall(tmp, filter="data")
            else:  # pragma: no cover - older patch releases
                archive.extractall(tmp)  # the archive's sha256 was checked
        shutil.rmtree(cache.source, ignore_errors=True)
        (Path(tmp) / cache.source.name).replace(cache.source)


def ensure_llama_cpp_python(cache: Cache) -> None:
    probe = subprocess.run(
        [cache.python, "-c", "import llama_cpp.server.app"],
        capture_output=True,
        timeout=STEP_DEADLINE,
        check=False,
    )
    if probe.returncode == 0:
        return
    require_compilers()
    env = {"CMAKE_ARGS": " ".join(CMAKE_ARGS), "CMAKE_BUILD_PARALLEL_LEVEL": jobs()}
    install = [cache.python, "-m", "pip", "install", f"{cache.sdist}[server]"]
    run(install, deadline=BUILD_DEADLINE, env=env)


def cmake_tools(cache: Cache) -> dict[str, str]:
    """The environment under which ``cmake`` and ``ninja`` are new enough."""
    found = shutil.which("cmake")
    if found and shutil.which("ninja") and cmake_version(found) >= (3, 14):
        return {}
    bin_dir = cache.venv / "bin"
    if not (bin_dir / "cmake").exists() or not (bin_dir / "ninja").exists():
        run([cache.python, "-m", "pip", "install", "cmake>=3.21", "ninja"])
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def cmake_version(cmake: str) -> tuple[int, ...]:
    out = subprocess.run(
        [cmake, "--version"], capture_output=True, text=True, timeout=60, check=False
    ).stdout
    match = re.search(r"(\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2])) if match else (0,)


def ensure_llama_server(cache: Cache) -> None:
    if cache.llama_server.exists():
        return
    require_compilers()
    env = cmake_tools(cache)
    tree, build = cache.llama_cpp, cache.llama_cpp / "build"
    configure = ["cmake", "-S", tree, "-B", build, "-G", "Ninja", *CMAKE_ARGS, *LLAMA_SERVER_ARGS]
    run(configure, env=env)
    compile_ = ["cmake", "--build", build, "--target", "llama-server", "-j", jobs()]
    run(compile_, deadline=BUILD_DEADLINE, env=env)


def ensure_model(cache: Cache) -> None:
    if cache.model.exists() and cache.tokens.exists():
        return
    models = cache.llama_cpp / "models"
    cache.model.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.model.parent) as tmp:
        model, tokens = Path(tmp) / cache.model.name, Path(tmp) / cache.tokens.name
        script = HERE / "make_model.py"
        vocab = models / "ggml-vocab-qwen2.gguf"
        template = models / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
        gguf_py = {"PYTHONPATH": str(cache.llama_cpp / "gguf-py")}
        run([cache.python, script, vocab, template, model, tokens], env=gguf_py)
        model.replace(cache.model)
        tokens.replace(cache.tokens)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """One build at a time per cache folder."""
    with path.open("a") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


STEPS = (
    ensure_venv,
    ensure_sdist,
    ensure_source,
    ensure_llama_cpp_python,
    ensure_llama_server,
    ensure_model,
)


def main() -> int:
    cache = Cache.from_env()
    cache.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    started = time.monotonic()
    try:
        with locked(cache.root / ".lock"):
            for step in STEPS:
                began = time.monotonic()
                step(cache)
                print(f"{step.__name__}: {time.monotonic() - began:.0f} s", flush=True)
    except BuildFailed as error:
        print(f"llama.cpp servers: {error}", file=sys.stderr)
        return 1
    print(f"llama.cpp servers ready in {cache.root} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
