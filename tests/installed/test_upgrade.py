"""Two installed versions of the package on one archive: an upgrade (and a downgrade) while a broker runs.

The wheel `run.py` built is installed in this venv; a second wheel, the same
files saying they are the next release (its `yarp/_version.py`, its
`.dist-info` name, `METADATA` and `RECORD` rewritten, nothing rebuilt), is
installed with pip into a second venv of its own. That venv finds the
dependencies (orjson, zstandard, uvloop) in this one's site-packages through
a `.pth` line placed after its own, so nothing is downloaded twice; its
`yarp` package and console script are its own.

One version starts a broker with an idle time longer than the test, then the
other runs `yarp run -- seq 1 30000` in a loop and a few at once: every
capture must be archived exactly (read back with `yarp read` and `yarp
restore`), every view the agent would see capped, and the first broker gone
— asked to drain and exit, not left to idle. Then the other way round.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import DIST, VENV, World

CAP = 5120
#: The view may pass the cap by its closing marker lines at most.
MARKER_ALLOWANCE = 512
SEQ = "".join(f"{i}\n" for i in range(1, 30001)).encode()
REF = re.compile(rb"ref=(yr_[0-9a-f]{32})")


def bumped(version: str) -> str:
    """`version` with its last number one higher: the release after it."""
    head, last = re.fullmatch(r"(.*?)(\d+)", version).groups()
    return f"{head}{int(last) + 1}"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel_as_version(wheel: Path, version: str, outdir: Path) -> Path:
    """A copy of `wheel` that is release `version`: the same files, its version rewritten where it is stated."""
    project, old = wheel.name.split("-")[:2]
    old_info, new_info = f"{project}-{old}.dist-info/", f"{project}-{version}.dist-info/"
    files: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as source:
        for info in source.infolist():
            name, data = info.filename, source.read(info)
            if name == "yarp/_version.py":
                patched = data.replace(f'__version__ = "{old}"'.encode(), f'__version__ = "{version}"'.encode())
                assert patched != data, "the version line moved"
                data = patched
            if name.startswith(old_info):
                name = new_info + name[len(old_info):]
            if name == new_info + "METADATA":
                data = re.sub(rb"(?m)^Version: .*$", f"Version: {version}".encode(), data, count=1)
            files[name] = data
    record = new_info + "RECORD"
    files[record] = ("\n".join([_record_line(n, d) for n, d in files.items() if n != record] + [f"{record},,"])
                     + "\n").encode()
    target = outdir / wheel.name.replace(f"-{old}-", f"-{version}-", 1)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in files.items():
            out.writestr(name, data)
    return target


@pytest.fixture(scope="session")
def versions(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """{"installed": (bin directory, version), "next": (…)}: this venv and a second one holding the next release."""
    import yarp

    assert DIST is not None, "run by tests/installed/run.py, which builds the wheel"
    wheel = next(DIST.glob("*.whl"))
    work = tmp_path_factory.mktemp("next")
    version = bumped(yarp.__version__)
    second = wheel_as_version(wheel, version, work)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
                    str(second)], check=True, capture_output=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    ours = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "zz_installed_dependencies.pth").write_text(ours + "\n")
    found = subprocess.run([str(venv / "bin" / "yarp"), "--version"], check=True, capture_output=True, text=True)
    assert found.stdout == f"yarp {version}\n"
    located = subprocess.run([str(python), "-c", "import yarp; print(yarp.__file__)"], check=True,
                             capture_output=True, text=True).stdout
    assert located.startswith(site), located
    return {"installed": (VENV / "bin", yarp.__version__), "next": (venv / "bin", version)}


class Side:
    """One installed version as a user's shell runs it: its `yarp` first on PATH."""

    def __init__(self, world: World, bin_dir: Path, version: str, **env: str) -> None:
        self.world = world
        self.version = version
        self.bin = bin_dir
        self.env = {**world.env, "PATH": f"{bin_dir}{os.pathsep}{world.env['PATH']}", **env}

    def argv(self, *args: str) -> list[str]:
        return [str(self.bin / "yarp"), *args]

    def yarp(self, *args: str) -> subprocess.CompletedProcess:
        result = subprocess.run(self.argv(*args), env=self.env, cwd=self.world.work, capture_output=True,
                                timeout=120)
        assert result.returncode == 0, (args, result.stderr.decode()[-2000:])
        return result

    def capture(self) -> subprocess.Popen:
        return subprocess.Popen(self.argv("run", "--", "seq", "1", "30000"), env=self.env, cwd=self.world.work,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def status(self) -> dict:
        return json.loads(self.yarp("archive", "broker", "status", "--json").stdout)


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def _checked(side: Side, proc: subprocess.Popen) -> str:
    """The capture's reference, once its view is proven capped and its archived stdout exact."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and err == b"", err.decode()[-2000:]
    assert len(out) <= CAP + MARKER_ALLOWANCE, f"{len(out)} bytes of output reached the agent"
    refs = set(REF.findall(out))
    assert len(refs) == 1, out[-600:]
    ref = refs.pop().decode()
    assert side.yarp("read", ref, "stdout", "29999:30000").stdout == b"29999\n30000\n"
    assert side.yarp("restore", ref).stdout == SEQ
    return ref


@pytest.mark.parametrize("first,second", [("installed", "next"), ("next", "installed")],
                         ids=["upgrade", "downgrade"])
def test_a_broker_of_one_installed_version_hands_over_to_the_other_under_load(world: World, versions, first,
                                                                               second):
    # Brokers outlive the test on their own (the world's default is 400 ms): the old one must be asked to go.
    old = Side(world, *versions[first], YARP_BROKER_IDLE_MS="600000")
    new = Side(world, *versions[second], YARP_BROKER_IDLE_MS="600000")
    old.yarp("run", "--", "true")
    before = old.status()
    assert before["compatible"] and before["binaryVersion"] == old.version
    seen = new.status()
    assert (seen["compatible"], seen["binaryVersion"], seen["pid"]) == (False, old.version, before["pid"])
    # A few at once meet the old broker (one asks it to exit, the others wait for that), then a loop.
    refs = [_checked(new, proc) for proc in [new.capture() for _ in range(4)]]
    refs += [_checked(new, new.capture()) for _ in range(6)]
    assert len(set(refs)) == 10
    deadline = time.monotonic() + 10
    while _pid_alive(before["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _pid_alive(before["pid"]), "the old broker is still running"
    after = new.status()
    assert after["compatible"] and after["binaryVersion"] == new.version and after["pid"] != before["pid"]
    assert b"incomplete_calls: 0" in new.yarp("archive", "verify").stdout
    stopped = new.yarp("archive", "broker", "stop").stdout.decode()
    assert stopped.startswith(f"stopped: the broker of yarp {new.version} (pid {after['pid']})"), stopped
