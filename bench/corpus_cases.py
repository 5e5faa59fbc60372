"""The recorded pruning corpus as typed cases, each annotated with the lines an agent must see.

A case is one real command run on this machine (see `bench/corpus/record.py`): its argv, exit
status and the exact stdout and stderr bytes. Its signals are regexes for the lines a reader needs
to act on the output — the error with its `file:line`, the innermost frame and the exception line,
the test summary, each commit subject — written from the output's meaning, independently of any
reducer, so that a view can be scored by how many of those lines it keeps.

Two manifests list the cases: `manifest.json` holds the original cases (every stream stored raw,
also read by the shell-reducer tests) and `manifest-added.json` the cases added for salience
measurement. A stream over ~200 KB is stored zstandard-compressed as `NAME.STREAM.zst`; the loader
returns the decompressed bytes, so callers never see the storage form.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

CORPUS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
MANIFESTS = ("manifest.json", "manifest-added.json")
STREAMS = ("stdout", "stderr")


@dataclass(frozen=True)
class Signal:
    """One class of line the agent must see: `pattern` is re.search'd against each decoded line."""

    stream: str
    pattern: str
    why: str


@dataclass(frozen=True)
class Case:
    """One recorded command: exact output bytes, exit status and the signals that matter in it."""

    name: str
    tool: str
    argv: tuple[str, ...]
    exit_code: int
    stdout: bytes
    stderr: bytes
    signals: tuple[Signal, ...]
    category: str = ""
    version: str = ""
    half: str = ""


def stream_path(name: str, stream: str, corpus_dir: str = CORPUS_DIR) -> str:
    """The file holding one stream of a case: raw if present, else its `.zst` form."""
    raw = os.path.join(corpus_dir, f"{name}.{stream}")
    return raw if os.path.exists(raw) else raw + ".zst"


def read_stream(name: str, stream: str, corpus_dir: str = CORPUS_DIR) -> bytes:
    """The exact recorded bytes of one stream, decompressing the `.zst` form."""
    path = stream_path(name, stream, corpus_dir)
    with open(path, "rb") as handle:
        data = handle.read()
    if path.endswith(".zst"):
        import zstandard  # only the compressed large cases need it

        data = zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 30)
    return data


def host_join(stdout: bytes, stderr: bytes) -> bytes:
    """A tool result as a host shows it: stdout, then stderr on a line of its own
    (`yarp.agents.claude_code.broker.output.host_text`)."""
    return stdout + (b"\n" if stdout and stderr and not stdout.endswith(b"\n") else b"") + stderr


def read_host_text(name: str, corpus_dir: str = CORPUS_DIR) -> bytes:
    """A case's two streams as a host shows them (`host_join`)."""
    return host_join(read_stream(name, "stdout", corpus_dir), read_stream(name, "stderr", corpus_dir))


def build_mib(varied: bool = False) -> bytes:
    """The recorded `cargo build` errors and warnings repeated to whole lines within 1 MiB.

    `varied`: each copy names its own file and missing value, so fewer lines repeat byte for byte.
    """
    build = read_stream("cargo-build-errors", "stderr")
    copies = [build.replace(b"main.rs", b"m%d.rs" % k).replace(b"missing_name", b"missing_%d" % k) if varied
              else build for k in range(1 + (1 << 20) // max(1, len(build)))]
    data = b"".join(copies)[:1 << 20]
    return data[:data.rfind(b"\n") + 1]


def manifest_entries(corpus_dir: str = CORPUS_DIR, manifests: tuple[str, ...] = MANIFESTS) -> list[dict]:
    """Every entry of the corpus's manifests that exist, in manifest then recording order."""
    entries: list[dict] = []
    for manifest in manifests:
        path = os.path.join(corpus_dir, manifest)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                entries.extend(json.load(handle))
    return entries


def load_cases(corpus_dir: str = CORPUS_DIR, manifests: tuple[str, ...] = MANIFESTS) -> list[Case]:
    """All recorded cases with their bytes and signals (by default the pruning corpus)."""
    cases = []
    for entry in manifest_entries(corpus_dir, manifests):
        cases.append(Case(
            name=entry["name"],
            tool=entry["tool"],
            argv=tuple(entry["argv"]),
            exit_code=int(entry["exit_code"]),
            stdout=read_stream(entry["name"], "stdout", corpus_dir),
            stderr=read_stream(entry["name"], "stderr", corpus_dir),
            signals=tuple(Signal(s["stream"], s["pattern"], s["why"]) for s in entry.get("signals", ())),
            category=entry.get("category", ""),
            version=entry.get("version", ""),
            half=entry.get("half", ""),
        ))
    return cases


def split_lines(data: bytes) -> list[str]:
    """Raw lines as the signals see them: utf-8 with replacement, without the newline."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line.decode("utf-8", errors="replace") for line in lines]


def signal_matches(case: Case, signal: Signal) -> list[tuple[int, str]]:
    """(line index, text) of every raw line of the signal's stream that its pattern matches."""
    regex = re.compile(signal.pattern)
    data = case.stdout if signal.stream == "stdout" else case.stderr
    return [(index, text) for index, text in enumerate(split_lines(data)) if regex.search(text)]


def signal_lines(case: Case) -> list[tuple[str, int, str]]:
    """(stream, line index, line text) of every raw line some signal matches, in stream order."""
    found: dict[tuple[str, int], str] = {}
    for signal in case.signals:
        for index, text in signal_matches(case, signal):
            found[(signal.stream, index)] = text
    return [(stream, index, text) for (stream, index), text in sorted(found.items())]
