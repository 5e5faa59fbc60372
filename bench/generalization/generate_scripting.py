"""Regenerate the scripting and web half of the generalization corpus from scratch.

Run: python bench/generalization/generate_scripting.py [--only NAME ...] [--list]

It installs pinned tools outside the repository (a venv and an npm prefix under
/tmp/yarp-gen), writes each case's small project under a fixed directory
(/tmp/yarp-gen/work/scripting/NAME, so paths in the output are stable), runs the
command as an agent would type it, and records the exact stdout, stderr and exit
status as `NAME.stdout` / `NAME.stderr` beside this file (a stream over 200 KB as
`NAME.STREAM.zst`), then writes `manifest-scripting.json`.

The recipes, with their signals, are in `scripting_recipes.py` (Python linters and
formatters), `scripting_recipes_py2.py` (packaging, test runners, docs, frameworks,
profilers) and `scripting_recipes_web.py` (npm tools, data and logs). Each signal's pattern must
match at least one line of its stream: the generator stops loudly when one does not,
so a tool upgrade that changes the output's meaning is noticed. A recipe whose tool
cannot be installed or found is skipped with a message, and its previous recording,
if any, is kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from scripting_common import GEN, NPM, VENV, WORK, Recipe, run_env  # noqa: E402

MANIFEST = os.path.join(HERE, "manifest-scripting.json")
ZST_OVER = 200 * 1024
MAX_SIGNAL_LINES = 16

PY_PINS = [
    "pylint==4.1.5", "flake8==7.5.0", "flake8-bugbear==26.11.22", "flake8-docstrings==1.7.0",
    "black==26.10.1", "isort==9.0.2", "bandit==1.9.4", "vulture==2.16", "pydocstyle==6.3.0",
    "coverage==7.18.0", "pytest==9.2.0", "pytest-xdist==3.8.0", "hypothesis==6.170.27",
    "Sphinx==9.0.4", "mkdocs==1.6.1", "Django==5.2.19", "alembic==1.20.1", "SQLAlchemy==2.1.9",
    "yamllint==1.38.0", "tox==4.67.17", "nox==2026.10.20", "pre-commit==4.7.0", "uv==0.13.9",
    "ruff==0.17.6", "mypy==2.4.1", "Jinja2==3.1.6",
]
NPM_PINS = [
    "pyright@1.1.414", "prettier@3.10.2", "stylelint@17.16.0", "stylelint-config-standard",
    "markdownlint-cli@0.48.0", "esbuild@0.28.2", "eslint@9.39.5", "@eslint/js@9",
]


def split_half(name: str) -> str:
    """The fixed split: decided by the name's hash, before any view is looked at."""
    return "held_out" if hashlib.sha256(name.encode()).digest()[0] & 1 else "tuning"


def _quiet(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def install_tools() -> None:
    """Create the tool venv and npm prefix with the pinned versions; failures only warn."""
    os.makedirs(GEN, exist_ok=True)
    if not os.path.exists(os.path.join(VENV, "bin", "python")):
        _quiet([sys.executable, "-m", "venv", VENV])
    pip = [os.path.join(VENV, "bin", "python"), "-m", "pip", "install", "-q"]
    if _quiet(pip + PY_PINS).returncode:
        for pin in PY_PINS:  # one by one, so one missing pin skips only its recipes
            if _quiet(pip + [pin]).returncode:
                print(f"warning: could not install {pin}; its cases will be skipped", file=sys.stderr)
    os.makedirs(NPM, exist_ok=True)
    npm = ["npm", "install", "--prefix", NPM, "--no-audit", "--no-fund", "--loglevel=error"]
    if shutil.which("npm") is None or _quiet(npm + NPM_PINS).returncode:
        print("warning: npm tools could not be installed; their cases will be skipped", file=sys.stderr)


def tool_version(recipe: Recipe, env: dict, cwd: str) -> str:
    """The first non-empty line the recipe's version command prints."""
    proc = _quiet(recipe.version, env=env, cwd=cwd)
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.strip():
            return line.strip().split(" from /")[0][:120]
    return "unknown"


def check_signals(name: str, streams: dict[str, bytes], signals) -> list[str]:
    """Problems with a case's signals: a pattern matching nothing, or too many signal lines."""
    problems, matched = [], set()
    for stream, pattern, _why in signals:
        lines = streams[stream].split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        regex = re.compile(pattern)
        hits = [i for i, raw in enumerate(lines) if regex.search(raw.decode("utf-8", errors="replace"))]
        if not hits:
            problems.append(f"{name}: signal {pattern!r} matches no line of {stream}")
        matched.update((stream, i) for i in hits)
    if len(matched) > MAX_SIGNAL_LINES:
        problems.append(f"{name}: {len(matched)} signal lines (keep it under {MAX_SIGNAL_LINES})")
    return problems


def write_stream(name: str, stream: str, data: bytes) -> None:
    """Store one stream raw, or zstandard-compressed when it is over 200 KB."""
    raw = os.path.join(HERE, f"{name}.{stream}")
    for stale in (raw, raw + ".zst"):
        if os.path.exists(stale):
            os.remove(stale)
    if len(data) <= ZST_OVER:
        with open(raw, "wb") as handle:
            handle.write(data)
        return
    try:
        import zstandard
        packed = zstandard.ZstdCompressor(level=19).compress(data)
    except ImportError:
        packed = subprocess.run(["zstd", "-19", "-q", "-c"], input=data, capture_output=True, check=True).stdout
    with open(raw + ".zst", "wb") as handle:
        handle.write(packed)


def record(recipe: Recipe) -> dict | None:
    """Set up, run and record one recipe; its manifest entry, or None when it was skipped."""
    env = run_env(recipe)
    missing = [exe for exe in recipe.needs if shutil.which(exe, path=env["PATH"]) is None]
    if missing:
        print(f"skip {recipe.name}: {', '.join(missing)} not available", file=sys.stderr)
        return None
    project = os.path.join(WORK, recipe.name)
    shutil.rmtree(project, ignore_errors=True)
    os.makedirs(project)
    recipe.setup(project)
    cwd = os.path.join(project, recipe.cwd)
    for prep in recipe.prep:
        proc = subprocess.run(prep, cwd=cwd, env=env, capture_output=True)
        if proc.returncode and not recipe.prep_may_fail:
            raise SystemExit(f"{recipe.name}: preparation {prep} failed:\n{proc.stdout.decode()}{proc.stderr.decode()}")
    proc = subprocess.run(recipe.argv, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if recipe.expect_exit is not None and proc.returncode != recipe.expect_exit:
        raise SystemExit(f"{recipe.name}: exit {proc.returncode}, expected {recipe.expect_exit}\n"
                         f"{proc.stdout[-3000:].decode(errors='replace')}\n{proc.stderr[-3000:].decode(errors='replace')}")
    streams = {"stdout": proc.stdout, "stderr": proc.stderr}
    problems = check_signals(recipe.name, streams, recipe.signals)
    if problems:
        last = os.path.join(GEN, "last")
        os.makedirs(last, exist_ok=True)
        for stream, data in streams.items():
            with open(os.path.join(last, f"{recipe.name}.{stream}"), "wb") as handle:
                handle.write(data)
        raise SystemExit("\n".join(problems + [f"(this run's output is in {last})"]))
    for stream, data in streams.items():
        write_stream(recipe.name, stream, data)
    print(f"{recipe.name:32} exit {proc.returncode:3} {len(proc.stdout) + len(proc.stderr):9} bytes", file=sys.stderr)
    return {
        "name": recipe.name, "tool": recipe.tool, "argv": list(recipe.argv), "exit_code": proc.returncode,
        "signals": [{"stream": s, "pattern": p, "why": w} for s, p, w in recipe.signals],
        "category": recipe.category, "version": tool_version(recipe, env, cwd), "half": split_half(recipe.name),
    }


def stored_streams(name: str) -> dict[str, bytes]:
    """The recorded bytes of a case's two streams, decompressed."""
    out = {}
    for stream in ("stdout", "stderr"):
        raw = os.path.join(HERE, f"{name}.{stream}")
        if os.path.exists(raw):
            with open(raw, "rb") as handle:
                out[stream] = handle.read()
        else:
            with open(raw + ".zst", "rb") as handle:
                packed = handle.read()
            try:
                import zstandard
                out[stream] = zstandard.ZstdDecompressor().decompress(packed, max_output_size=1 << 30)
            except ImportError:
                out[stream] = subprocess.run(["zstd", "-d", "-q", "-c"], input=packed, capture_output=True,
                                             check=True).stdout
    return out


def refresh_signals(entry: dict, recipe: Recipe) -> dict:
    """A kept recording with the recipe's current signals, checked against its stored streams."""
    problems = check_signals(recipe.name, stored_streams(recipe.name), recipe.signals)
    if problems:
        raise SystemExit("\n".join(problems))
    return {**entry, "signals": [{"stream": s, "pattern": p, "why": w} for s, p, w in recipe.signals],
            "category": recipe.category, "tool": recipe.tool, "argv": list(recipe.argv)}


def readme_table() -> str:
    """The recorded cases as the README's Markdown table."""
    with open(MANIFEST, encoding="utf-8") as handle:
        entries = json.load(handle)
    rows = ["| case | tool | version | category | exit | bytes | half |", "|---|---|---|---|---:|---:|---|"]
    for e in entries:
        size = sum(map(len, stored_streams(e["name"]).values()))
        rows.append(f"| {e['name']} | {e['tool']} | {e['version']} | {e['category']} | {e['exit_code']} | {size:,} "
                    f"| {e['half']} |")
    return "\n".join(rows)


def all_recipes() -> list[Recipe]:
    """Every recipe, Python tools first."""
    import scripting_recipes
    import scripting_recipes_web
    return scripting_recipes.RECIPES + scripting_recipes_web.RECIPES


def main(argv: list[str] | None = None) -> int:
    """Install the tools, record the chosen recipes and rewrite the manifest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="record only these cases (others keep their entry)")
    parser.add_argument("--list", action="store_true", help="list the recipes and their halves")
    parser.add_argument("--no-install", action="store_true", help="use the tools already installed")
    parser.add_argument("--table", action="store_true", help="print the README's table of the recorded cases")
    args = parser.parse_args(argv)
    if args.table:
        print(readme_table())
        return 0
    recipes = all_recipes()
    if args.list:
        for recipe in recipes:
            print(f"{recipe.name:32} {recipe.tool:12} {recipe.category:16} {split_half(recipe.name)}")
        return 0
    if not args.no_install:
        install_tools()
    previous = {}
    if os.path.exists(MANIFEST):
        with open(MANIFEST, encoding="utf-8") as handle:
            previous = {entry["name"]: entry for entry in json.load(handle)}
    entries = []
    for recipe in recipes:
        entry = None
        if args.only is None or recipe.name in args.only:
            entry = record(recipe)
        if entry is None and recipe.name in previous:
            entry = refresh_signals(previous[recipe.name], recipe)
        if entry is not None:
            entries.append(entry)
    with open(MANIFEST, "w", encoding="utf-8") as handle:
        json.dump(entries, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    print(f"{len(entries)} case(s) in {os.path.relpath(MANIFEST)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
