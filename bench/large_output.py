"""Time and peak memory of `yarp run -- cat FILE` for large outputs, beside `cat FILE > /dev/null`.

For each kind and size, a file is generated once in the work directory
(`text`: log-like lines, each block different; `yes`: `y` lines; `random`:
incompressible bytes), then, in a private sandbox (its own HOME, runtime
directory and archive), one warm-up run starts the broker, its resident size
is read (`VmRSS`: idle), its peak is reset (`/proc/PID/clear_refs` 5), and
`yarp run -- cat FILE` runs with its stdout into a file (an agent host's
stdout is a pipe or a file: the view). Reported per case: the wall time of
`cat FILE > /dev/null` and of the run, the runner's peak RSS (`wait4`), the
broker's peak beyond its idle size (`VmHWM` − idle `VmRSS`), what the agent
got (bytes, and whether stderr says the archive failed), and what the archive
holds (call status, stored stdout length). The archive is removed after each
case. `--src` runs every child from another source tree, so a baseline is
measured the same way::

    nice python bench/large_output.py --sizes 100M,1G --kinds text
    nice python bench/large_output.py --sizes 100M,1G --kinds text --src /tmp/old-src
    nice python bench/large_output.py --sizes 1100M --kinds random

The generated inputs stay in `--work` for the next run (`--clean` removes
them at the end); the sandbox and its archive are removed after each case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
_BLOCK = 4 << 20


def parse_size(text: str) -> int:
    """`100M`, `1G`, `1100M` or a plain byte count (binary units)."""
    text = text.strip().upper()
    if text[-1:] in _UNITS:
        return int(float(text[:-1]) * _UNITS[text[-1]])
    return int(text)


def _text_block(number: int) -> bytes:
    """About 4 MiB of log-like lines; every block differs (numbers, shifted words)."""
    words = [b"request", b"handled", b"cache", b"miss", b"user", b"session", b"timeout", b"retry", b"ok",
             b"GET", b"/api/v1/items", b"POST", b"/login", b"200", b"404", b"500", b"worker", b"queue"]
    out = []
    size = 0
    line = number * 100_000
    while size < _BLOCK:
        line += 1
        chosen = b" ".join(words[(line * k + number) % len(words)] for k in (3, 5, 7, 11))
        text = b"2026-01-%02d 12:%02d:%02d.%03d INFO [%d] %s latency=%dms\n" % (
            1 + line % 28, line % 60, (line // 60) % 60, line % 1000, line, chosen, (line * 7919) % 1000)
        out.append(text)
        size += len(text)
    return b"".join(out)


def make_input(work: Path, kind: str, size: int) -> Path:
    """The input file of `kind` and `size` bytes, generated once."""
    path = work / f"{kind}-{size}.bin"
    if path.exists() and path.stat().st_size == size:
        return path
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as out:
        written = 0
        number = 0
        yes = b"y\n" * (_BLOCK // 2)
        while written < size:
            if kind == "random":
                block = os.urandom(_BLOCK)
            elif kind == "yes":
                block = yes
            else:
                block = _text_block(number)
            block = block[: size - written]
            out.write(block)
            written += len(block)
            number += 1
    tmp.rename(path)
    return path


def _status_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def _broker_pid(archive: str) -> int | None:
    needle = archive.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"broker" in args and needle in args and b"status" not in args:
            return int(name)
    return None


def _timed(argv: list[str], env: dict, stdout, stderr) -> tuple[float, int, int]:
    """(wall seconds, exit status, peak RSS in KiB) of one child."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, proc.returncode, usage.ru_maxrss


def _sandbox_env(root: Path, src: str) -> tuple[dict, str]:
    runtime = tempfile.mkdtemp(prefix="yr", dir="/tmp")
    home = root / "home"
    spool = root / "spool"
    for d in (home, spool, root / "arch"):
        d.mkdir(mode=0o700)
    archive = str(root / "arch" / "a.sqlite3")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YARP_", "XDG_"))}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=runtime, XDG_DATA_HOME=str(home / "data"),
               XDG_CONFIG_HOME=str(home / "config"), YARP_ARCHIVE=archive, YARP_BROKER_IDLE_MS="60000",
               TMPDIR=str(spool), PYTHONPATH=src)
    return env, runtime


def _archived(archive: str) -> dict:
    """The last call's status and its stored stdout/before length."""
    conn = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT c.status, p.uncompressed_byte_length, p.compression, length(p.body) FROM tool_calls c"
            " LEFT JOIN snapshots s ON s.tool_call_id = c.id AND s.subject = 'stdout' AND s.stage = 'before'"
            " LEFT JOIN payloads p ON p.sha256 = s.payload_sha256 ORDER BY c.id DESC LIMIT 1").fetchone()
    finally:
        conn.close()
    return {"call": row[0], "stored_stdout": row[1], "compression": row[2], "body": row[3]} if row else {}


def measure(path: Path, src: str, work: Path) -> dict:
    """One case: the baseline `cat`, then `yarp run -- cat FILE` under a fresh broker."""
    out = {"kind": path.name.split("-")[0], "bytes": path.stat().st_size}
    with open(os.devnull, "wb") as null:
        out["cat_s"] = round(_timed(["cat", str(path)], dict(os.environ), null, null)[0], 3)
    root = Path(tempfile.mkdtemp(prefix="lo-", dir=work))
    env, runtime = _sandbox_env(root, src)
    yarp = [sys.executable, "-m", "yarp", "run", "--", "cat", str(path)]
    broker = None
    try:
        subprocess.run([sys.executable, "-m", "yarp", "run", "--", "true"], env=env, check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        broker = _broker_pid(env["YARP_ARCHIVE"])
        idle = _status_kib(broker, "VmRSS")
        with open(f"/proc/{broker}/clear_refs", "w") as f:
            f.write("5")
        view, err = root / "view.out", root / "view.err"
        with open(view, "wb") as v, open(err, "wb") as e:
            wall, status, runner_kib = _timed(yarp, env, v, e)
        peak = _status_kib(broker, "VmHWM")
        message = err.read_bytes()[-400:].decode("utf-8", "replace").strip()
        out.update(run_s=round(wall, 2), status=status, runner_peak_mib=round(runner_kib / 1024, 1),
                   broker_idle_mib=round(idle / 1024, 1), broker_peak_over_idle_mib=round((peak - idle) / 1024, 1),
                   view_bytes=view.stat().st_size, stderr=message[:300], **_archived(env["YARP_ARCHIVE"]))
    finally:
        if broker is not None:
            try:
                os.kill(broker, 15)
            except ProcessLookupError:
                pass
            for _ in range(100):
                if _broker_pid(env["YARP_ARCHIVE"]) is None:
                    break
                time.sleep(0.1)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100M,1G", help="comma-separated sizes (K, M, G: binary units)")
    parser.add_argument("--kinds", default="text", help="comma-separated: text, yes, random")
    parser.add_argument("--work", default="/tmp/yarp-large-output", help="where inputs and sandboxes go")
    parser.add_argument("--src", default=str(_ROOT / "src"), help="source tree the children run")
    parser.add_argument("--clean", action="store_true", help="remove the generated inputs at the end")
    args = parser.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    print(f"# {' '.join(sys.argv)}  (src {args.src})", flush=True)
    try:
        for kind in args.kinds.split(","):
            for size in map(parse_size, args.sizes.split(",")):
                print(json.dumps(measure(make_input(work, kind, size), args.src, work)), flush=True)
    finally:
        if args.clean:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
