"""The test cluster runs from a clone inside a private directory (``/root``,
``mktemp -d``), where the server's user cannot reach the binaries."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests._postgres import as_server_user, find_bin, reachable_bin


def test_binaries_behind_a_private_directory_are_copied_where_the_server_user_can_run_them(
    tmp_path: Path,
) -> None:
    found = find_bin()
    assert found is not None
    install = found.parent
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    package = private / "site-packages" / install.parent.name
    shutil.copytree(install, package / install.name, symlinks=True)
    libs = install.parent.parent / f"{install.parent.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, private / "site-packages" / libs.name, symlinks=True)
    hidden = package / install.name / "bin"
    scratch = Path(tempfile.mkdtemp(prefix="twpgbin-"))  # where the fixture makes it
    try:
        usable = reachable_bin(hidden, scratch)

        if os.geteuid() == 0:  # the server runs as nobody, who cannot enter `private`
            assert usable == scratch / install.parent.name / install.name / "bin"
        else:  # the server runs as this user, who can
            assert usable == hidden
        version = subprocess.run(
            [*as_server_user(), str(usable / "initdb"), "--version"],
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert version.returncode == 0, version.stderr
        assert version.stdout.startswith(b"initdb (PostgreSQL)")
    finally:
        shutil.rmtree(scratch)
