"""The sdist and the wheel hold every file of the source package, and the wheel its compiled kernels.

The source package is every file under `src/yarp` and `src/agent_workflow`
in the checkout, but what a build generates there (`__pycache__`, the C files
Cython writes next to each `.pyx`, compiled extensions). A data file left out
of package-data (the first wheel lacked `rules/salience.json`) fails here.
"""

from __future__ import annotations

import tarfile
import zipfile

import pytest

from conftest import DIST, SOURCE

PACKAGES = ("yarp", "agent_workflow")
KERNELS = ("_fastframe", "_payload_kernel", "_validate", "_scan", "_templates", "_lines", "_shapes")

pytestmark = pytest.mark.skipif(DIST is None, reason="run through tests/installed/run.py, which builds the dist")


def _generated(path) -> bool:
    if "__pycache__" in path.parts or path.suffix in (".pyc", ".so"):
        return True
    return path.suffix == ".c" and path.with_suffix(".pyx").exists()


def source_files() -> set[str]:
    """Every file of the source packages, relative to `src/`."""
    root = SOURCE / "src"
    found = {str(path.relative_to(root)) for package in PACKAGES for path in (root / package).rglob("*")
             if path.is_file() and not _generated(path)}
    assert "yarp/rules/salience.json" in found and "yarp/agents/pi/index.ts" in found
    assert "yarp/agents/opencode/plugin.ts" in found and "yarp/agents/ts/lifecycle.ts" in found
    assert "yarp/agents/claude_code/hook.json" in found and "yarp/agents/pi/package.json" in found
    return found


def test_the_sdist_holds_every_source_file():
    (sdist,) = DIST.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = sorted(f"src/{name}" for name in source_files() if f"src/{name}" not in names)
    assert not missing, f"missing from the sdist: {missing}"


def test_the_wheel_holds_every_source_file_and_the_compiled_kernels():
    (wheel,) = DIST.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    missing = sorted(name for name in source_files() if name not in names)
    assert not missing, f"missing from the wheel: {missing}"
    for kernel in KERNELS:
        assert any(name.startswith(f"yarp/{kernel}.") and name.endswith(".so") for name in names), kernel
