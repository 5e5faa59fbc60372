"""Whole-process benchmarks of the evidence index, beside the reference's figures.

Each operation runs `python -m agent_workflow ...` as a subprocess (start-up
included) on the 200 real launched runs and on a generated root of 10,000
runs scaled from the real launched and journal runs (re-sealed). A bare
interpreter start-up is measured in the same run as the baseline. The
generated root is cached under $AGENT_WORKFLOW_BENCH_ROOT (default
/tmp/agent-workflow-bench) between sessions.

Run: .venv/bin/python -m pytest bench/agent_workflow
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from generate import generate  # noqa: E402

DATA_DIR = os.environ.get("AGENT_WORKFLOW_DATA", "/work/shared/data/agent-workflow")
CACHE = os.environ.get("AGENT_WORKFLOW_BENCH_ROOT", "/tmp/agent-workflow-bench")
LARGE_COUNT = 10_000

#: Reference index (agent-workflow 0.7.9), whole-process seconds on a 2-core machine.
REFERENCE = {
    ("real-200", "rebuild"): "20-23 s",
    ("real-200", "sync-no-change"): "0.84-0.89 s",
    ("real-200", "query"): "0.55-0.8 s",
    ("real-200", "verify-full"): "0.5-0.8 s",
    ("generated-10000", "sync-no-change"): "1.0 s at 1,000 runs",
    ("generated-10000", "query"): "1.2 s at 1,000 runs",
    ("real-200", "query --fresh"): "0.55-0.8 s",
    ("generated-10000", "query --fresh"): "1.2 s at 1,000 runs",
    ("generated-10000", "rebuild"): "11.6 s at 1,000 runs",
}
TARGETS = {
    ("real-200", "rebuild"): 1.5,
    ("generated-10000", "sync-no-change"): 1.0,
    ("real-200", "query"): 0.1,
    ("generated-10000", "query"): 0.1,
}
RESULTS: dict = {}


def _cli(root: str, *argv: str) -> None:
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    done = subprocess.run([sys.executable, "-m", "agent_workflow", *argv, "--state-root", root],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr.decode()[:400]


def _unpack():
    # Loaded by path: bench/conftest.py is also importable as `conftest`.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "agent_workflow_test_conftest", os.path.join(REPO, "tests", "agent_workflow", "conftest.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.unpack


@pytest.fixture(scope="session")
def sources():
    unpack = _unpack()

    archives = [os.path.join(DATA_DIR, f"{name}-200.tar.zst") for name in ("launched", "journals")]
    if not all(os.path.exists(a) for a in archives):
        pytest.skip("real evidence is not available")
    roots = {}
    for name, archive in zip(("launched", "journals"), archives):
        target = os.path.join(CACHE, f"source-{name}")
        if not os.path.exists(os.path.join(target, "agent-workflow", "runs")):
            shutil.rmtree(target, ignore_errors=True)
            os.makedirs(target, mode=0o700)
            unpack(archive, target)
        roots[name] = os.path.join(target, "agent-workflow")
    return roots


@pytest.fixture(scope="session")
def real_root(sources, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("bench-real") / "agent-workflow")
    shutil.copytree(sources["launched"], root, symlinks=True)
    return root


@pytest.fixture(scope="session")
def large_root(sources):
    root = os.path.join(CACHE, f"generated-{LARGE_COUNT}", "agent-workflow")
    marker = os.path.join(os.path.dirname(root), "complete")
    if not os.path.exists(marker):
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)
        os.makedirs(os.path.dirname(root), mode=0o700)
        generate(sources["launched"], sources["journals"], root, LARGE_COUNT)
        open(marker, "w").close()
    return root


def _record(benchmark, scale: str, operation: str) -> None:
    RESULTS[(scale, operation)] = benchmark.stats.stats.median


def _touch_one(root: str):
    path = os.path.join(root, "runs", sorted(os.listdir(os.path.join(root, "runs")))[0], "status.json")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))


def test_baseline_interpreter_startup(benchmark):
    benchmark.pedantic(subprocess.run, args=([sys.executable, "-c", "pass"],), rounds=10, iterations=1)
    RESULTS[("baseline", "python -c pass")] = benchmark.stats.stats.median


@pytest.mark.parametrize("scale", ["real-200", "generated-10000"])
def test_rebuild(benchmark, scale, request):
    root = request.getfixturevalue("real_root" if scale == "real-200" else "large_root")
    rounds = 3 if scale == "real-200" else 1
    benchmark.pedantic(_cli, args=(root, "index", "rebuild"), rounds=rounds, iterations=1)
    _record(benchmark, scale, "rebuild")


@pytest.mark.parametrize("scale", ["real-200", "generated-10000"])
def test_sync_no_change(benchmark, scale, request):
    root = request.getfixturevalue("real_root" if scale == "real-200" else "large_root")
    _cli(root, "index", "sync")
    benchmark.pedantic(_cli, args=(root, "index", "sync"), rounds=5, iterations=1)
    _record(benchmark, scale, "sync-no-change")


@pytest.mark.parametrize("scale", ["real-200", "generated-10000"])
def test_sync_one_changed(benchmark, scale, request):
    root = request.getfixturevalue("real_root" if scale == "real-200" else "large_root")
    _cli(root, "index", "sync")
    benchmark.pedantic(_cli, args=(root, "index", "sync"), setup=lambda: _touch_one(root), rounds=5, iterations=1)
    _record(benchmark, scale, "sync-one-changed")


@pytest.mark.parametrize("fresh", [False, True], ids=["probe", "fresh"])
@pytest.mark.parametrize("scale", ["real-200", "generated-10000"])
def test_query(benchmark, scale, fresh, request):
    """The default query (bounded freshness probe) beside `--fresh` (every run fingerprinted)."""
    root = request.getfixturevalue("real_root" if scale == "real-200" else "large_root")
    _cli(root, "index", "sync")
    argv = ("index", "query", "incidents", "--state", "open") + (("--fresh",) if fresh else ())
    benchmark.pedantic(_cli, args=(root, *argv), rounds=10, iterations=1)
    _record(benchmark, scale, "query --fresh" if fresh else "query")


@pytest.mark.parametrize("scale", ["real-200", "generated-10000"])
def test_verify_full(benchmark, scale, request):
    root = request.getfixturevalue("real_root" if scale == "real-200" else "large_root")
    _cli(root, "index", "sync")
    rounds = 3 if scale == "real-200" else 1
    benchmark.pedantic(_cli, args=(root, "index", "verify", "--full"), rounds=rounds, iterations=1)
    _record(benchmark, scale, "verify-full")


def test_zz_report(capsys):
    """Print our medians beside the reference's figures and the targets."""
    lines = [f"{'scale':<18}{'operation':<20}{'ours (median s)':>16}  {'target':>8}  reference (agent-workflow 0.7.9)"]
    for (scale, operation), seconds in RESULTS.items():
        target = TARGETS.get((scale, operation))
        lines.append(f"{scale:<18}{operation:<20}{seconds:>16.3f}  {('< %.1f' % target) if target else '':>8}  "
                     f"{REFERENCE.get((scale, operation), '')}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert RESULTS
