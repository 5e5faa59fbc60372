"""The runtime directory's fallback base: the temporary directory, chosen without importing tempfile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from yarp import runtime

SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_temp_directory_chooses_as_tempfile_does(tmp_path):
    for environ in ({}, {"TMPDIR": str(tmp_path)}, {"TMPDIR": "relative/dir", "TMP": str(tmp_path)},
                    {"TMPDIR": str(tmp_path / "missing")}):
        child = subprocess.run(
            [sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
            env={"PATH": os.environ.get("PATH", ""), **environ}, capture_output=True, text=True, check=True,
            cwd=tmp_path)
        assert runtime.temp_directory(environ) == child.stdout.strip(), environ


def test_the_fallback_base_does_not_import_tempfile(tmp_path):
    code = ("import sys; from yarp import runtime; "
            "base = runtime.runtime_base({'TMPDIR': sys.argv[1]}); "
            "print(base, 'tempfile' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": SRC}).stdout.split()
    assert out == [str(tmp_path / f"yarp-runtime-{os.geteuid()}"), "False"]
    assert (tmp_path / f"yarp-runtime-{os.geteuid()}").stat().st_mode & 0o777 == 0o700
