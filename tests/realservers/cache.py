"""Where the real-server tier keeps what it builds.

One folder holds everything, so that a second run reuses it: the source
package as downloaded, its unpacked tree (with llama.cpp's build inside), a
virtualenv with llama-cpp-python's server, and the tiny model. It is the
repository's own ``.cache/llamacpp/`` (gitignored), or the folder named by
``$TOOLWIRE_LLAMACPP_CACHE``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

CACHE_ENV = "TOOLWIRE_LLAMACPP_CACHE"
REPO = Path(__file__).resolve().parents[2]

VERSION = "0.3.36"
"""llama-cpp-python's version; its source package vendors the llama.cpp it binds."""
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
"""The sha256 PyPI publishes for ``llama_cpp_python-0.3.36.tar.gz``."""


@dataclass(frozen=True)
class Cache:
    """The paths of one cache folder."""

    root: Path

    @classmethod
    def from_env(cls) -> Cache:
        value = os.environ.get(CACHE_ENV)
        root = Path(value).expanduser() if value else REPO / ".cache" / "llamacpp"
        return cls(root.resolve())

    @property
    def sdist(self) -> Path:
        return self.root / "dl" / f"llama_cpp_python-{VERSION}.tar.gz"

    @property
    def source(self) -> Path:
        return self.root / "src" / f"llama_cpp_python-{VERSION}"

    @property
    def llama_cpp(self) -> Path:
        """llama.cpp's tree, as vendored in the source package."""
        return self.source / "vendor" / "llama.cpp"

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        """The virtualenv's interpreter: llama-cpp-python's server runs on it."""
        return self.venv / "bin" / "python"

    @property
    def llama_server(self) -> Path:
        return self.llama_cpp / "build" / "bin" / "llama-server"

    @property
    def model(self) -> Path:
        return self.root / "model" / "tiny.gguf"

    @property
    def tokens(self) -> Path:
        """The model's token ids the tests steer with (written with the model)."""
        return self.root / "model" / "tiny.tokens.json"

    def missing(self) -> list[Path]:
        """What a test session needs and the build has not made yet."""
        needed = [self.python, self.llama_server, self.model, self.tokens]
        return [path for path in needed if not path.exists()]


@dataclass(frozen=True)
class Tokens:
    """Token ids of the tiny model's vocabulary, for ``logit_bias``."""

    tool_call: int
    newline: int
    message: int
    whitespace: tuple[int, ...]

    @classmethod
    def load(cls, path: Path) -> Tokens:
        ids = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            tool_call=ids["tool_call"],
            newline=ids["newline"],
            message=ids["message"],
            whitespace=tuple(ids["whitespace"]),
        )
