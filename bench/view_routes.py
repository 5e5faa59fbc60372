"""The views a benchmark compares, computed the way the product computes them.

- `run_view`: what `yarp run` shows — the rule selected for the argv reduces each
  stream, then `cap_files` caps both together (the runner's route).
- `host_view`: what a host post-view shows for a tool result — `cap_text` over
  stdout and stderr joined (stderr from a line of its own), source `result_text`,
  the exit status given.
- `naive_cap`: the baseline, the first and last bytes of the same budget around a
  marker of the size a real one has.

Shared by `test_bench_pruning.py` (salience against the naive cap) and
`generalization.py` (the generalization corpus), so both score the same code.
Needs `src` on `sys.path` (bench/conftest.py, or the caller, puts it there).
"""

from __future__ import annotations

from corpus_cases import host_join
from yarp.limits import DEFAULT_CAP_BYTES
from yarp.view.cap import cap_files, cap_text
from yarp.view.reducers import reduce_stream
from yarp.view.rules import select_rule

REF = "yr_" + "0" * 32


def naive_cap(data: bytes, cap: int) -> bytes:
    """The first floor(budget/2) and last bytes of `data`, budget = cap minus a marker of the same size."""
    if len(data) <= cap:
        return data
    marker = (f"\n[yarp: {len(data)} byte(s) capped at {cap}; ref={REF}; stdout complete]\n"
              f"Search omitted output: yarp search {REF} 'term|alternate'\n").encode()
    budget = cap - len(marker)
    head = budget // 2
    while head > 0 and (data[head] & 0xC0) == 0x80:
        head -= 1
    tail = len(data) - (budget - head)
    while tail < len(data) and (data[tail] & 0xC0) == 0x80:
        tail += 1
    return data[:head] + marker + data[tail:]


def run_view(case, rules, tmp_path, cap: int = DEFAULT_CAP_BYTES) -> tuple[bytes, bytes]:
    """What `yarp run` shows for a case: each stream pruned by its rule, then both capped together.

    `tmp_path` is a pathlib directory where the streams are spooled as the runner spools them.
    """
    rule = select_rule(list(case.argv), rules)
    if 0 < cap and len(case.stdout) + len(case.stderr) <= cap:
        rule = None  # yarp run shows an output under the cap exactly (`yarp.view.visible.write_view`)
    paths, markers = [], []
    for stream, data in (("stdout", case.stdout), ("stderr", case.stderr)):
        raw = tmp_path / f"{case.name}.{stream}"
        raw.write_bytes(data)
        pruned = tmp_path / f"{case.name}.{stream}.after"
        stats = None if rule is None else reduce_stream(rule, case.exit_code, str(raw), str(pruned), ref=REF,
                                                         stream_name=stream)
        if stats is not None and stats.reduced:
            paths.append(str(pruned))
            markers.append(stats.markers)
        else:
            paths.append(str(raw))
            markers.append(None)
    capped = cap_files(paths, cap=cap, archive_ref=REF, exit_code=case.exit_code, markers=markers)
    if capped is None:
        out = []
        for path in paths:
            with open(path, "rb") as handle:
                out.append(handle.read())
        return out[0], out[1]
    return capped[0], capped[1]


def host_text(case) -> bytes:
    """A case's result as a host shows it (`corpus_cases.host_join`)."""
    return host_join(case.stdout, case.stderr)


def host_view(case, cap: int = DEFAULT_CAP_BYTES) -> bytes:
    """What a host post-view shows: the host's text of the result (`host_text`) capped as one tool result."""
    return cap_text(host_text(case), cap=cap, archive_ref=REF, source="result_text",
                    exit_code=case.exit_code)
