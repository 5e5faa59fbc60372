"""Regenerate the native half of the generalization corpus: compilers, sanitizers, debuggers, build
systems, VCS, system listings and logs, each run for real on a small project written here.

Every recipe writes its project under `/tmp/yarp-gen/native/NAME` (a fixed place, so the paths in
the output are stable), runs one command there and records its exact stdout, stderr and exit
status as `NAME.stdout` / `NAME.stderr` beside this file (a stream over 200 KB as `NAME.STREAM.zst`,
zstandard level 19, the form `bench/corpus_cases.py` reads). The manifest `manifest-native.json`
lists the cases with the keys of `bench/corpus/manifest.json` plus `category`, `version` and
`half`; `half` is fixed by the case's name alone.

The signals live beside each recipe and are written from the output's meaning: the error and its
location, a crash's report line, top frame and summary, the closing count, the rare line in a
repetitive output. After a run each pattern must match at least one line of its stream, or the
generator stops with the case's name.

Tools come from Debian (`apt-get install PKG=VERSION`, the versions pinned below) or are already on
the machine (gcc, make, cmake, ninja, git, perl, java, maven, cargo, valgrind, gdb, sqlite3, strace,
psql). A recipe whose tool cannot be had is skipped with a message and keeps its previous recording.
Maven runs offline against the local repository; when a plugin is missing there it is skipped too.

Run from the repo root: `python bench/generalization/generate_native.py [NAME ...]` regenerates all
or the named cases; `--list` prints the recipes; `--check` only re-checks the stored cases' signals.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest-native.json")
WORK = "/tmp/yarp-gen/native"
COMPRESS_OVER = 200 * 1024
STREAMS = ("stdout", "stderr")

# Debian packages and the versions the corpus was recorded with (bookworm).
APT_PINS = {
    "shellcheck": "0.9.0-1",
    "clang": "1:14.0-55.7~deb12u1",
    "golang-go": "2:1.19~1",
    "cppcheck": "2.10-2",
    "meson": "1.0.1-5",
    "autoconf": "2.71-3",
    "automake": "1:1.16.5-1.3",
    "bison": "2:3.8.2+dfsg-1+b1",
    "flex": "2.6.4-8.2",
    "gcovr": "5.2-1",
    "ltrace": "0.7.3-6.4",
}
# The binary each package brings.
APT_BINARIES = {
    "shellcheck": "shellcheck", "clang": "clang", "golang-go": "go", "cppcheck": "cppcheck",
    "meson": "meson", "autoconf": "autoconf", "automake": "automake", "bison": "bison",
    "flex": "flex", "gcovr": "gcovr", "ltrace": "ltrace",
}


def S(stream: str, pattern: str, why: str) -> dict:
    """One signal: the lines of `stream` that `pattern` matches must be seen, for the reason `why`."""
    return {"stream": stream, "pattern": pattern, "why": why}


@dataclass
class Run:
    """What a recipe's setup hands back: the command as typed, how it is really run, its signals."""

    argv: list[str]
    signals: list[dict]
    command: list[str] | None = None  # what is executed when it differs from argv (a wrapper, a pipe)
    cwd: str = "."
    env: dict[str, str] = field(default_factory=dict)
    timeout: int = 600
    expect_exit: Callable[[int], bool] | None = None
    skip_when: bytes | None = None  # output holding these bytes means the tool could not really run


@dataclass
class Recipe:
    """One case: its name, tool, category, the tool's version command, what it needs and its setup."""

    name: str
    tool: str
    category: str
    version: list[str]
    setup: Callable[[str], Run | None]
    needs: tuple[str, ...] = ()
    apt: tuple[str, ...] = ()


RECIPES: list[Recipe] = []


def recipe(name, tool, category, version, needs=(), apt=()):
    """Register the decorated setup function as the recipe `name`."""
    def register(setup):
        RECIPES.append(Recipe(name, tool, category, list(version), setup, tuple(needs), tuple(apt)))
        return setup
    return register


class Skip(Exception):
    """A recipe cannot run on this machine; the message says why."""


def half_of(name: str) -> str:
    """The corpus half a case belongs to, fixed by its name before any view is looked at."""
    return "held_out" if hashlib.sha256(name.encode()).digest()[0] & 1 else "tuning"


def write(root: str, rel: str, text: str, mode: int | None = None) -> str:
    """Write dedented `text` to `root/rel`, creating directories; return the path."""
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text).lstrip("\n"))
    if mode is not None:
        os.chmod(path, mode)
    return path


def read_text(path: str) -> str:
    """A file's text."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def edit(path: str, *replacements: tuple[str, str]) -> None:
    """Rewrite a file with each (old, new) replacement applied in turn."""
    text = read_text(path)
    for old, new in replacements:
        text = text.replace(old, new)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def base_env() -> dict[str, str]:
    """The environment every command runs in: a UTF-8 locale, UTC, no CI or colour settings."""
    keep = ("HOME", "USER", "LOGNAME", "PATH", "RUSTUP_HOME", "CARGO_HOME", "JAVA_HOME", "M2_HOME")
    env = {k: v for k, v in os.environ.items() if k in keep}
    path = env.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    cargo_bin = os.path.expanduser("~/.cargo/bin")
    if cargo_bin not in path.split(":"):
        path = cargo_bin + ":" + path
    env.update(PATH=path, LANG="C.UTF-8", TZ="UTC", TERM="dumb", SHELL="/bin/bash")
    return env


def sh(cmd, cwd, env=None, check=True, input=None) -> subprocess.CompletedProcess:
    """Run a setup step (not recorded); fail loudly when a step the recipe relies on fails."""
    merged = base_env()
    merged.update(env or {})
    done = subprocess.run(cmd, cwd=cwd, env=merged, capture_output=True, input=input, check=False,
                          shell=isinstance(cmd, str), executable="/bin/bash" if isinstance(cmd, str) else None)
    if check and done.returncode != 0:
        raise RuntimeError(f"setup step failed ({done.returncode}): {cmd}\n{done.stdout.decode()[-2000:]}"
                           f"\n{done.stderr.decode()[-2000:]}")
    return done


def ensure_tools(rec: Recipe) -> None:
    """Install the recipe's Debian packages at their pinned versions; Skip when a tool is missing."""
    for package in rec.apt:
        if shutil.which(APT_BINARIES[package]):
            continue
        pinned = f"{package}={APT_PINS[package]}"
        done = subprocess.run(["apt-get", "install", "-y", "-qq", pinned], capture_output=True, check=False,
                              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if done.returncode != 0 or not shutil.which(APT_BINARIES[package]):
            raise Skip(f"could not install {pinned}")
    for binary in rec.needs:
        if not shutil.which(binary, path=base_env()["PATH"]):
            raise Skip(f"{binary} is not installed")


def tool_version(rec: Recipe) -> str:
    """The first line with a digit that the tool's version command prints, without colour codes."""
    done = subprocess.run(rec.version, capture_output=True, env=base_env(), check=False)
    text = (done.stdout or done.stderr).decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    for line in text.splitlines():
        if re.search(r"\d", line):
            return line.strip()
    raise Skip(f"{rec.version[0]} printed no version")


def split_lines(data: bytes) -> list[str]:
    """Lines as the signals see them: utf-8 with replacement, without the newline."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line.decode("utf-8", errors="replace") for line in lines]


def check_signals(name: str, signals: list[dict], streams: dict[str, bytes]) -> list[str]:
    """Problems with a case's signals: a pattern matching no line, or too many lines in all."""
    problems, total = [], 0
    for signal in signals:
        regex = re.compile(signal["pattern"])
        hits = sum(1 for line in split_lines(streams[signal["stream"]]) if regex.search(line))
        total += hits
        if not hits:
            problems.append(f"{name}: {signal['stream']} pattern {signal['pattern']!r} matches no line")
    if total > 20:
        problems.append(f"{name}: signals match {total} lines (keep it small)")
    return problems


def store(name: str, streams: dict[str, bytes]) -> None:
    """Write both streams beside this file, compressing one over 200 KB, removing the other form."""
    for stream, data in streams.items():
        raw = os.path.join(HERE, f"{name}.{stream}")
        for stale in (raw, raw + ".zst"):
            if os.path.exists(stale):
                os.remove(stale)
        if len(data) > COMPRESS_OVER:
            with open(raw + ".zst", "wb") as handle:
                handle.write(compress(data))
        else:
            with open(raw, "wb") as handle:
                handle.write(data)


def compress(data: bytes) -> bytes:
    """Zstandard level 19 with the content size in the frame, by the library or the zstd binary."""
    try:
        import zstandard
    except ImportError:
        return subprocess.run(["zstd", "-19", "-q", "-c"], input=data, capture_output=True, check=True).stdout
    return zstandard.ZstdCompressor(level=19, write_content_size=True).compress(data)


def load_stream(name: str, stream: str) -> bytes:
    """The stored bytes of one stream of a case, decompressed."""
    raw = os.path.join(HERE, f"{name}.{stream}")
    if os.path.exists(raw):
        with open(raw, "rb") as handle:
            return handle.read()
    with open(raw + ".zst", "rb") as handle:
        data = handle.read()
    try:
        import zstandard
    except ImportError:
        return subprocess.run(["zstd", "-d", "-q", "-c"], input=data, capture_output=True, check=True).stdout
    return zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 30)


def record(rec: Recipe) -> dict:
    """Set up, run and store one case; return its manifest entry."""
    ensure_tools(rec)
    version = tool_version(rec)
    root = os.path.join(WORK, rec.name)
    if os.path.isdir(root):
        subprocess.run(["chmod", "-R", "u+rwx", root], check=False)
        shutil.rmtree(root)
    os.makedirs(root)
    run = rec.setup(root)
    env = base_env()
    env.update(run.env)
    cwd = os.path.normpath(os.path.join(root, run.cwd))
    command = run.command or run.argv
    done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False,
                          timeout=run.timeout, shell=isinstance(command, str),
                          executable="/bin/bash" if isinstance(command, str) else None)
    streams = {"stdout": done.stdout, "stderr": done.stderr}
    if run.skip_when and run.skip_when in done.stdout + done.stderr:
        raise Skip(f"the run printed {run.skip_when.decode()!r}")
    if run.expect_exit and not run.expect_exit(done.returncode):
        raise RuntimeError(f"{rec.name}: unexpected exit status {done.returncode}\n"
                           f"{done.stderr.decode('utf-8', 'replace')[-3000:]}")
    problems = check_signals(rec.name, run.signals, streams)
    if problems:
        raise RuntimeError("\n".join(problems))
    store(rec.name, streams)
    return {"name": rec.name, "tool": rec.tool, "argv": run.argv, "exit_code": done.returncode,
            "signals": run.signals, "category": rec.category, "version": version,
            "half": half_of(rec.name)}


def load_manifest() -> list[dict]:
    """The stored manifest, or an empty list."""
    if not os.path.exists(MANIFEST):
        return []
    with open(MANIFEST, encoding="utf-8") as handle:
        return json.load(handle)


def save_manifest(entries: dict[str, dict]) -> None:
    """Write the manifest in recipe order (stored cases no recipe names any more are dropped)."""
    ordered = [entries[r.name] for r in RECIPES if r.name in entries]
    with open(MANIFEST, "w", encoding="utf-8") as handle:
        json.dump(ordered, handle, indent=1, ensure_ascii=False)
        handle.write("\n")


def readme_table(entries: list[dict]) -> str:
    """The recorded cases as the README's Markdown table."""
    rows = ["| case | tool | version | category | exit | bytes | half |", "|---|---|---|---|---:|---:|---|"]
    for e in entries:
        size = sum(len(load_stream(e["name"], s)) for s in STREAMS)
        rows.append(f"| {e['name']} | {e['tool']} | {e['version'].replace('|', '/')} | {e['category']} "
                    f"| {e['exit_code']} | {size:,} | {e['half']} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    """Regenerate all or the named cases, or list them, or check the stored ones."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--list", action="store_true", help="print the recipes and their halves")
    parser.add_argument("--check", action="store_true", help="check the stored cases' signals only")
    parser.add_argument("--table", action="store_true", help="print the README's table of the recorded cases")
    args = parser.parse_args(argv)
    known = {r.name for r in RECIPES}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}")
    if args.list:
        for r in RECIPES:
            print(f"{r.name:32} {r.tool:12} {r.category:16} {half_of(r.name)}")
        return 0
    entries = {e["name"]: e for e in load_manifest()}
    if args.table:
        print(readme_table(list(entries.values())))
        return 0
    if args.check:
        problems = []
        for entry in entries.values():
            streams = {s: load_stream(entry["name"], s) for s in STREAMS}
            problems += check_signals(entry["name"], entry["signals"], streams)
        print("\n".join(problems) or f"{len(entries)} case(s): every signal matches")
        return 1 if problems else 0
    os.makedirs(WORK, exist_ok=True)
    failed = record_each(RECIPES, args.names, entries, record)
    save_manifest(entries)
    return 1 if failed else 0


def record_each(recipes, names, entries: dict[str, dict], record) -> list[str]:
    """Run `record` on each recipe (those in `names`, when any), into `entries`; a line each on stdout,
    a skip or failure on stderr. Returns the names that failed."""
    failed = []
    for rec in recipes:
        if names and rec.name not in names:
            continue
        try:
            entries[rec.name] = record(rec)
        except Skip as why:
            print(f"skip {rec.name}: {why}", file=sys.stderr)
            continue
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            print(f"FAILED {rec.name}: {error}", file=sys.stderr)
            failed.append(rec.name)
            continue
        sizes = [len(load_stream(rec.name, s)) for s in STREAMS]
        print(f"{rec.name:34} exit={entries[rec.name]['exit_code']:<4} stdout={sizes[0]:>9} "
              f"stderr={sizes[1]:>9} {entries[rec.name]['half']}")
    return failed


# ---------------------------------------------------------------------------------------------
# Recipes. Each writes its project under `root` and returns the command and its signals.
# ---------------------------------------------------------------------------------------------

GCC = ["gcc", "--version"]
GXX = ["g++", "--version"]
CLANG = ["clang", "--version"]
CARGO = ["cargo", "--version"]
GO = ["go", "version"]
GIT = ["git", "--version"]


def exits(*codes: int) -> Callable[[int], bool]:
    """An exit check: the run must end with one of `codes`."""
    return lambda code: code in codes


def failing(code: int) -> bool:
    """An exit check: the run must fail."""
    return code != 0


# --- compilers -------------------------------------------------------------------------------

@recipe("gxx-template-candidates", "g++", "compiler", GXX, needs=("g++",))
def _gxx_template_candidates(root):
    write(root, "report.cpp", """
        #include <algorithm>
        #include <iostream>
        #include <list>
        #include <map>
        #include <string>
        #include <vector>

        namespace inventory {

        struct Item {
            std::string sku;
            int quantity;
            double price;
        };

        template <typename Container>
        void sort_by_quantity(Container &items) {
            std::sort(items.begin(), items.end(),
                      [](const Item &a, const Item &b) { return a.quantity < b.quantity; });
        }

        template <typename Container>
        double total_value(const Container &items) {
            double total = 0;
            for (const auto &item : items) total += item.quantity * item.price;
            return total;
        }

        }  // namespace inventory

        int main() {
            std::list<inventory::Item> stock = {{"A-100", 3, 9.5}, {"B-200", 1, 120.0}};
            inventory::sort_by_quantity(stock);
            std::map<std::string, inventory::Item> by_sku;
            for (const auto &item : stock) by_sku[item.sku] = item;
            std::cout << "first: " << stock.front() << "\\n";
            std::cout << "total: " << inventory::total_value(stock) << "\\n";
            return 0;
        }
        """)
    return Run(["g++", "-std=c++17", "-Wall", "-c", "report.cpp"], [
        S("stderr", r"^report\.cpp: In function ‘int main\(\)’:$", "the function the first error is in"),
        S("stderr", r"^report\.cpp:36:28: error: no match for ‘operator<<’", "first error: Item has no operator<<"),
        S("stderr", r"^report\.cpp:(18:14|33:32):   required from", "the project's lines that instantiate std::sort"),
        S("stderr", r"stl_algo\.h:1938:50: error: no match for ‘operator-’", "second error: std::sort needs random access"),
    ], expect_exit=exits(1))


def _telemetry_source() -> str:
    """A C file of 40 functions, each with warnings under -Wall -Wextra -Wshadow, one with an error."""
    parts = ["#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n\n",
             "static int level = 3;\n\n"]
    for i in range(40):
        body = [f"int probe_{i:02d}(const char *name, unsigned count, int flags)\n{{\n",
                "    int level = 0;\n", f"    int scratch_{i};\n", "    char label[16];\n",
                "    for (int k = 0; k < count; k++)\n", "        level += k;\n",
                f'    sprintf(label, "%s-{i}", name);\n']
        if i == 27:
            body.append("    level += sample_window * 2;\n")
        body.append("    if (strlen(label) == -1)\n        return -1;\n")
        body.append('    printf("%s %d\\n", label);\n    return level;\n}\n\n')
        parts.append("".join(body))
    return "".join(parts)


@recipe("gcc-warnings-one-error", "gcc", "compiler", GCC, needs=("gcc",))
def _gcc_warnings_one_error(root):
    with open(os.path.join(root, "telemetry.c"), "w", encoding="utf-8") as handle:
        handle.write(_telemetry_source())
    return Run(["gcc", "-Wall", "-Wextra", "-Wshadow", "-O2", "-c", "telemetry.c", "-o", "telemetry.o"], [
        S("stderr", r"^telemetry\.c: In function ‘probe_27’:$", "the function the error is in"),
        S("stderr", r"^telemetry\.c:\d+:\d+: error: ‘sample_window’ undeclared", "the one error among the warnings"),
    ], expect_exit=exits(1))


@recipe("clang-fixits", "clang", "compiler", CLANG, needs=("clang",), apt=("clang",))
def _clang_fixits(root):
    write(root, "ring.c", """
        #include <stdio.h>
        #include <stdlib.h>

        struct ring {
            int *slots;
            size_t length;
            size_t head;
        };

        static struct ring *ring_new(size_t length)
        {
            struct ring *r = malloc(sizeof *r);
            r->slots = calloc(lenght, sizeof(int));
            r->length = length;
            r->head = 0
            return r;
        }

        static void ring_push(struct ring *r, int value)
        {
            if (r->head = r->length)
                r->head = 0;
            r->slots[r->head++] = value;
        }

        int main(void)
        {
            struct ring *r = ring_new(8);
            for (int i = 0; i < 20; i++)
                ring_pusj(r, i);
            printf("%s\\n", r->head);
            return 0;
        }
        """)
    return Run(["clang", "-Wall", "-c", "ring.c"], [
        S("stderr", r"^ring\.c:\d+:\d+: error: ", "each error with file:line"),
        S("stderr", r"^\d+ (warning|error)s? .*generated\.$", "the closing count"),
    ], expect_exit=exits(1))


@recipe("cppcheck-enable-all", "cppcheck", "linter", ["cppcheck", "--version"], needs=("cppcheck",),
        apt=("cppcheck",))
def _cppcheck(root):
    for i in range(14):
        write(root, f"src/codec_{i:02d}.c", f"""
            #include <stdlib.h>
            #include <string.h>

            int codec_{i:02d}_sum(const int *values, int n)
            {{
                int total = 0;
                int unused_{i} = {i};
                for (int k = 0; k < n; k++)
                    total += values[k];
                return total;
            }}

            void codec_{i:02d}_copy(char *dst, const char *src)
            {{
                strcpy(dst, src);
            }}
            """)
    write(root, "src/buffer.c", """
        #include <stdlib.h>
        #include <string.h>

        int buffer_fill(void)
        {
            int table[10];
            for (int i = 0; i <= 10; i++)
                table[i] = i * 2;
            return table[3];
        }

        char *buffer_dup(const char *text)
        {
            char *copy = malloc(strlen(text) + 1);
            if (text[0] == '\\0')
                return NULL;
            strcpy(copy, text);
            return copy;
        }

        int buffer_first(const int *values)
        {
            int *cursor = NULL;
            if (values)
                cursor = (int *)values;
            return *cursor;
        }
        """)
    return Run(["cppcheck", "--enable=all", "--inconclusive", "src/"], [
        S("stderr", r"^src/buffer\.c:\d+:\d+: error: ", "each error-severity finding with file:line"),
        S("stdout", r"^15/15 files checked 100% done$", "the run finished every file"),
    ], expect_exit=exits(0))


@recipe("shellcheck-scripts", "shellcheck", "linter", ["shellcheck", "--version"], needs=("shellcheck",),
        apt=("shellcheck",))
def _shellcheck(root):
    write(root, "scripts/backup.sh", """
        #!/bin/bash
        # Nightly backup of the upload directories.
        SRC=/srv/uploads
        DEST=$1
        STAMP=`date +%Y%m%d`
        unused_retention=14

        cd $DEST
        for dir in $(ls $SRC); do
            tar czf $DEST/$dir-$STAMP.tgz $SRC/$dir
        done
        echo "backup done: $(ls $DEST | wc -l) archives"
        """)
    write(root, "scripts/deploy.sh", """
        #!/bin/sh
        # Deploy the current build to the given hosts.
        set -e
        hosts="$@"
        for host in $hosts; do
            echo "deploying to $host"
            scp build/app.tar.gz deploy@$host:/tmp/
            ssh deploy@$host "tar xzf /tmp/app.tar.gz -C /opt/app && systemctl restart app"
        done
        if [ $? == 0 ]; then
            echo "ok"
        fi
        read -p "press enter" answer
        """)
    write(root, "scripts/install.sh", """
        #!/bin/bash
        PREFIX=${PREFIX:-/usr/local}
        files=(bin/app bin/appctl share/app/config.toml)
        for f in ${files[@]}; do
            install -D "$f" "$PREFIX/$f"
        done
        [[ -d $PREFIX/share/app ]] && echo "installed into $PREFIX"
        """)
    return Run(["shellcheck", "scripts/backup.sh", "scripts/deploy.sh", "scripts/install.sh"], [
        S("stdout", r"^In scripts/(backup\.sh line 9|install\.sh line 4):$", "the heading of each error finding"),
        S("stdout", r"\^-+\^ SC\d+ \(error\):", "each error-severity finding"),
    ], expect_exit=exits(1))


# --- sanitizers, valgrind, gdb ---------------------------------------------------------------

def _input_lines(count: int, seed: int) -> str:
    """Deterministic `key=value` lines for the small programs to read."""
    rng = random.Random(seed)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    return "".join(f"{rng.choice(words)}_{i}={rng.randint(1, 10**6)}\n" for i in range(count))


@recipe("asan-heap-overflow", "asan", "sanitizer", GCC, needs=("gcc",))
def _asan_heap_overflow(root):
    write(root, "tokenize.c", """
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        #define TOKEN_MAX 16

        static void copy_token(char *dst, const char *src, size_t len)
        {
            for (size_t i = 0; i <= len; i++)
                dst[i] = src[i];
        }

        static char **tokenize(const char *line, int *count)
        {
            char **tokens = calloc(32, sizeof(char *));
            const char *start = line;
            *count = 0;
            for (const char *p = line;; p++) {
                if (*p == ' ' || *p == '\\n' || *p == '\\0') {
                    size_t len = (size_t)(p - start);
                    if (len > 0) {
                        char *tok = malloc(len < TOKEN_MAX ? TOKEN_MAX : len);
                        copy_token(tok, start, len);
                        tok[len] = '\\0';
                        tokens[(*count)++] = tok;
                    }
                    start = p + 1;
                    if (*p != ' ')
                        break;
                }
            }
            return tokens;
        }

        int main(int argc, char **argv)
        {
            setvbuf(stdout, NULL, _IOLBF, 0);
            FILE *in = fopen(argc > 1 ? argv[1] : "input.txt", "r");
            char line[512];
            int lineno = 0;
            while (in && fgets(line, sizeof line, in)) {
                int count;
                char **tokens = tokenize(line, &count);
                printf("line %d: %d tokens, first=%s\\n", ++lineno, count, tokens[0]);
                for (int i = 0; i < count; i++)
                    free(tokens[i]);
                free(tokens);
            }
            return 0;
        }
        """)
    lines = [f"event {i} user{i % 7} ok" for i in range(40)]
    lines.append("event 40 user-with-a-very-long-identifier-0042 failed")
    write(root, "input.txt", "\n".join(lines) + "\n")
    sh(["gcc", "-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O0", "-o", "tokenize", "tokenize.c"], root)
    return Run(["./tokenize", "input.txt"], [
        S("stderr", r"ERROR: AddressSanitizer: heap-buffer-overflow on address", "the report line"),
        S("stderr", r"^WRITE of size 1 at ", "what the bad access was"),
        S("stderr", r"^    #0 0x[0-9a-f]+ in copy_token /tmp/yarp-gen/native/asan-heap-overflow/tokenize\.c:10$",
          "top frame: the overflowing write"),
        S("stderr", r"^SUMMARY: AddressSanitizer: heap-buffer-overflow ", "the summary"),
    ], expect_exit=exits(1))


@recipe("asan-use-after-free", "asan", "sanitizer", GXX, needs=("g++",))
def _asan_use_after_free(root):
    write(root, "sessions.cpp", """
        #include <iostream>
        #include <string>
        #include <unordered_map>
        #include <vector>

        struct Session {
            std::string user;
            int requests = 0;
        };

        class SessionCache {
        public:
            Session *open(const std::string &user) {
                auto *s = new Session{user};
                by_user_[user] = s;
                order_.push_back(s);
                return s;
            }
            void evict_oldest() {
                Session *oldest = order_.front();
                order_.erase(order_.begin());
                delete oldest;
            }
            Session *find(const std::string &user) { return by_user_[user]; }

        private:
            std::unordered_map<std::string, Session *> by_user_;
            std::vector<Session *> order_;
        };

        int main() {
            SessionCache cache;
            for (int i = 0; i < 12; i++) {
                Session *s = cache.open("user" + std::to_string(i));
                s->requests = i;
                std::cout << "opened " << s->user << "\\n";
            }
            cache.evict_oldest();
            Session *again = cache.find("user0");
            again->requests += 1;
            std::cout << "user0 requests: " << again->requests << "\\n";
            return 0;
        }
        """)
    sh(["g++", "-std=c++17", "-fsanitize=address", "-g", "-O0", "-o", "sessions", "sessions.cpp"], root)
    return Run(["./sessions"], [
        S("stderr", r"ERROR: AddressSanitizer: heap-use-after-free on address", "the report line"),
        S("stderr", r"^    #0 0x[0-9a-f]+ in main /tmp/yarp-gen/native/asan-use-after-free/sessions\.cpp:40$",
          "top frame: the use"),
        S("stderr", r"in SessionCache::evict_oldest\(\) /tmp/yarp-gen/native/asan-use-after-free/sessions\.cpp:22$",
          "where it was freed"),
        S("stderr", r"^SUMMARY: AddressSanitizer: heap-use-after-free ", "the summary"),
    ], expect_exit=exits(1))


@recipe("ubsan-runtime-errors", "ubsan", "sanitizer", GCC, needs=("gcc",))
def _ubsan(root):
    write(root, "stats.c", """
        #include <stdio.h>

        static int buckets[8];

        static int scale(int value, int shift)
        {
            return value << shift;
        }

        int main(void)
        {
            int total = 2147480000;
            for (int day = 1; day <= 3000; day++) {
                int load = (day * 7919) % 1000;
                buckets[load % 8] += load;
                printf("day %4d load %3d bucket %d cumulative %d\\n", day, load, load % 8, buckets[load % 8]);
                if (day == 1200)
                    total += load * 10;
                if (day == 2100)
                    printf("scaled %d\\n", scale(load, 33));
                if (day == 2900)
                    printf("bucket 8 %d\\n", buckets[day / 360]);
            }
            printf("total %d\\n", total);
            return 0;
        }
        """)
    sh(["gcc", "-fsanitize=undefined", "-g", "-O0", "-o", "stats", "stats.c"], root)
    return Run(["./stats"], [
        S("stderr", r"^stats\.c:\d+:\d+: runtime error: ", "each undefined-behaviour report with file:line"),
        S("stdout", r"^total -?\d+$", "the program's last line"),
    ], expect_exit=exits(0))


@recipe("valgrind-leaks", "valgrind", "profiler", ["valgrind", "--version"], needs=("valgrind", "gcc"))
def _valgrind(root):
    write(root, "cache.c", """
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        struct entry { char *key; int *values; struct entry *next; };

        static struct entry *insert(struct entry *head, const char *key, int n)
        {
            struct entry *e = malloc(sizeof *e);
            e->key = strdup(key);
            e->values = malloc(n * sizeof(int));
            for (int i = 0; i < n; i++)
                e->values[i] = i * n;
            e->next = head;
            return e;
        }

        static int sum_first(struct entry *e, int n)
        {
            int total = 0;
            for (int i = 0; i <= n; i++)
                total += e->values[i];
            return total;
        }

        int main(void)
        {
            struct entry *head = NULL;
            char key[32];
            for (int i = 0; i < 50; i++) {
                snprintf(key, sizeof key, "key-%03d", i);
                head = insert(head, key, 10);
            }
            printf("sum of first: %d\\n", sum_first(head, 10));
            struct entry *second = head->next;
            free(head->key);
            free(head->values);
            free(head);
            head = second->next;
            printf("done\\n");
            return 0;
        }
        """)
    sh(["gcc", "-g", "-O0", "-o", "cache", "cache.c"], root)
    return Run(["valgrind", "--leak-check=full", "./cache"], [
        S("stderr", r"^==\d+== Invalid read of size 4$", "the memory error"),
        S("stderr", r"^==\d+==    at 0x[0-9A-F]+: sum_first \(cache\.c:22\)$", "its top frame"),
        S("stderr", r"^==\d+== [\d,]+ \(.*\) bytes in \d+ blocks are definitely lost", "the definite leak"),
        S("stderr", r"^==\d+==    definitely lost: ", "leak summary: definitely lost"),
        S("stderr", r"^==\d+== ERROR SUMMARY: \d+ errors", "the error summary"),
    ], expect_exit=exits(0))


@recipe("gdb-segfault-backtrace", "gdb", "debugger", ["gdb", "--version"], needs=("gdb", "gcc"))
def _gdb(root):
    write(root, "server.c", """
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        struct route { const char *path; struct route *next; };
        struct config { int port; struct route *routes; const char *root; };

        static struct config *parse_args(int argc, char **argv)
        {
            struct config *cfg = calloc(1, sizeof *cfg);
            for (int i = 1; i < argc; i++)
                if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
                    cfg->port = atoi(argv[++i]);
            return cfg;
        }

        static size_t route_length(const struct route *r)
        {
            return strlen(r->path);
        }

        static void print_routes(const struct config *cfg)
        {
            const struct route *r = cfg->routes;
            do {
                printf("route %s (%zu)\\n", r->path, route_length(r));
                r = r->next;
            } while (r);
        }

        int main(int argc, char **argv)
        {
            struct config *cfg = parse_args(argc, argv);
            printf("listening on port %d\\n", cfg->port);
            print_routes(cfg);
            return 0;
        }
        """)
    sh(["gcc", "-g", "-O0", "-o", "server", "server.c"], root)
    return Run(["gdb", "-batch", "-ex", "run", "-ex", "bt", "--args", "./server", "--port", "8080"], [
        S("stdout", r"^Program received signal SIGSEGV, Segmentation fault\.$", "the crash"),
        S("stdout", r"^#0  ", "innermost frame"),
        S("stdout", r"^#\d+  0x[0-9a-f]+ in print_routes .* at server\.c:\d+$", "the caller that passed the bad route"),
    ], env={"DEBUGINFOD_URLS": ""}, expect_exit=exits(0, 1))


# --- Rust ------------------------------------------------------------------------------------

def _cargo_toml(name: str, extra: str = "") -> str:
    return f'[package]\nname = "{name}"\nversion = "0.3.1"\nedition = "2021"\n{extra}\n[dependencies]\n'


@recipe("rustc-explain-e0499", "rustc", "docs", ["rustc", "--version"], needs=("rustc",))
def _rustc_explain(root):
    return Run(["rustc", "--explain", "E0499"], [
        S("stdout", r"^A variable was borrowed as mutable more than once\.$", "what the error means"),
        S("stdout", r"^Erroneous code example:$", "where the example starts"),
    ], expect_exit=exits(0))


@recipe("cargo-build-borrowck", "cargo", "build", CARGO, needs=("cargo",))
def _cargo_borrowck(root):
    write(root, "Cargo.toml", _cargo_toml("ledger"))
    write(root, "src/lib.rs", """
        use std::collections::{BTreeMap, HashMap, HashSet};
        use std::fmt::Write;

        #[derive(Debug, Clone)]
        pub struct Entry {
            pub account: String,
            pub cents: i64,
            memo: Option<String>,
        }

        pub struct Ledger {
            entries: Vec<Entry>,
            index: HashMap<String, Vec<usize>>,
        }

        impl Ledger {
            pub fn new() -> Self {
                let capacity = 16;
                Ledger { entries: Vec::new(), index: HashMap::new() }
            }

            pub fn post(&mut self, entry: Entry) {
                let slot = self.entries.len();
                self.index.entry(entry.account.clone()).or_default().push(slot);
                self.entries.push(entry);
            }

            pub fn balance(&self, account: &str) -> i64 {
                let mut total = 0;
                let unused_count = self.entries.len();
                for &i in self.index.get(account).into_iter().flatten() {
                    total += self.entries[i].cents;
                }
                total
            }

            pub fn rename(&mut self, from: &str, to: &str) {
                let slots = self.index.get_mut(from).unwrap();
                for &i in slots.iter() {
                    self.entries[i].account = to.to_string();
                }
                self.index.insert(to.to_string(), slots.clone());
            }

            pub fn archive(&mut self) -> Vec<Entry> {
                let taken = self.entries;
                self.index.clear();
                taken
            }
        }

        fn describe(entry: Entry) -> String {
            format!("{}: {}", entry.account, entry.cents)
        }

        pub fn report(entries: Vec<Entry>) -> Vec<String> {
            let lines: Vec<String> = entries.into_iter().map(describe).collect();
            println!("{} entries", entries.len());
            lines
        }
        """)
    return Run(["cargo", "build", "--offline"], [
        S("stderr", r"^error\[E0\d+\]: ", "each borrow-checker error"),
        S("stderr", r"^  --> src/lib\.rs:(42:9|46:21|58:28)$", "location of each error"),
        S("stderr", r"^error: could not compile `ledger`", "the build result"),
    ], expect_exit=exits(101))


def _workspace(root: str) -> None:
    write(root, "Cargo.toml", '[workspace]\nmembers = ["geo", "units", "cli"]\nresolver = "2"\n')
    for crate, count in (("geo", 150), ("units", 220)):
        write(root, f"{crate}/Cargo.toml", _cargo_toml(crate))
        tests = "".join(
            f"    #[test]\n    fn {crate}_case_{i:03d}() {{\n        assert_eq!(scale({i}, 3), {i * 3});\n    }}\n\n"
            for i in range(count))
        write(root, f"{crate}/src/lib.rs",
              "/// Multiply `value` by `factor`.\n///\n/// ```\n"
              f"/// assert_eq!({crate}::scale(2, 5), 10);\n/// ```\n"
              "pub fn scale(value: i64, factor: i64) -> i64 {\n    value * factor\n}\n\n"
              "/// Parse a decimal degree string such as `12.5N`.\n"
              "pub fn parse_degrees(text: &str) -> Option<f64> {\n"
              "    let (number, hemisphere) = text.split_at(text.len() - 1);\n"
              "    let value: f64 = number.parse().ok()?;\n"
              "    match hemisphere {\n        \"N\" | \"E\" => Some(value),\n"
              "        \"S\" | \"W\" => Some(-value),\n        _ => None,\n    }\n}\n\n"
              "#[cfg(test)]\nmod tests {\n    use super::*;\n\n" + tests +
              ("    #[test]\n    fn parses_southern_latitude() {\n"
               "        let value = parse_degrees(\"33.9S\").unwrap();\n"
               "        assert_eq!(value, 33.9, \"southern latitudes are negative\");\n    }\n\n"
               "    #[test]\n    fn rejects_missing_hemisphere() {\n"
               "        assert_eq!(parse_degrees(\"12.0\"), None);\n    }\n" if crate == "geo" else "") +
              "}\n")
    write(root, "cli/Cargo.toml", _cargo_toml("cli") + 'geo = { path = "../geo" }\nunits = { path = "../units" }\n')
    write(root, "cli/src/main.rs", 'fn main() {\n    println!("{}", geo::scale(units::scale(2, 3), 4));\n}\n')


@recipe("cargo-test-workspace", "cargo", "test-runner", CARGO, needs=("cargo",))
def _cargo_test_workspace(root):
    _workspace(root)
    sh(["cargo", "build", "--offline", "--tests"], root)
    return Run(["cargo", "test", "--offline", "--workspace", "--no-fail-fast"], [
        S("stdout", r"^test tests::(parses_southern_latitude|rejects_missing_hemisphere) \.\.\. FAILED$",
          "the failing tests"),
        S("stdout", r"^thread 'tests::\w+' .*panicked at geo/src/lib\.rs:\d+:\d+:$", "where each panicked"),
        S("stdout", r"^assertion `left == right` failed: southern latitudes are negative$", "the failed assertion"),
        S("stdout", r"^test result: FAILED\. ", "the failing binary's summary"),
        S("stderr", r"^error: 1 target failed:$", "the run's result"),
        S("stderr", r"^    `-p geo --lib`$", "which target failed"),
    ], expect_exit=exits(101))


@recipe("cargo-metadata-json", "cargo", "package-manager", CARGO, needs=("cargo",))
def _cargo_metadata(root):
    _workspace(root)
    plugins = [f"plugin_{c}" for c in "abcdefgh"]
    write(root, "Cargo.toml", '[workspace]\nmembers = ["geo", "units", "cli", '
          + ", ".join(f'"{p}"' for p in plugins) + ']\nresolver = "2"\n')
    for p in plugins:
        write(root, f"{p}/Cargo.toml", _cargo_toml(p, 'description = "Straße, café and naïve names"\n'
                                                     'keywords = ["geo", "units"]\n')
              + 'geo = { path = "../geo" }\nunits = { path = "../units", optional = true }\n\n'
              '[features]\ndefault = ["metric"]\nmetric = ["dep:units"]\nimperial = []\n')
        write(root, f"{p}/src/lib.rs", "pub fn id() -> i64 {\n    geo::scale(1, 2)\n}\n")
        write(root, f"{p}/examples/demo.rs", "fn main() {}\n")
        write(root, f"{p}/benches/speed.rs", "fn main() {}\n")
    return Run(["cargo", "metadata", "--format-version", "1", "--offline"], [
        S("stdout", r'"workspace_root":"/tmp/yarp-gen/native/cargo-metadata-json"', "the one JSON line"),
    ], expect_exit=exits(0))


@recipe("cargo-clippy-lints", "cargo", "linter", ["cargo", "clippy", "--version"], needs=("cargo",))
def _cargo_clippy(root):
    write(root, "Cargo.toml", _cargo_toml("pricing"))
    write(root, "src/lib.rs", """
        pub fn average(prices: &Vec<f64>) -> f64 {
            if prices.len() == 0 {
                return 0.0;
            }
            let mut sum = 0.0;
            for i in 0..prices.len() {
                sum = sum + prices[i];
            }
            return sum / prices.len() as f64;
        }

        pub fn is_free(price: f64) -> bool {
            if price == 0.0 { true } else { false }
        }
        """)
    return Run(["cargo", "clippy", "--offline"], [
        S("stderr", r"^warning: ", "each lint, and the closing count"),
        S("stderr", r"^ +--> src/lib\.rs:\d+:\d+$", "each lint's location"),
    ], expect_exit=exits(0))


# --- Go --------------------------------------------------------------------------------------

def _go_env(root: str) -> dict[str, str]:
    work = os.path.join(WORK, ".go")
    return {"GOPATH": os.path.join(work, "path"), "GOCACHE": os.path.join(work, "cache"),
            "GOPROXY": "off", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "1"}


@recipe("go-vet-findings", "go", "linter", GO, needs=("go",), apt=("golang-go",))
def _go_vet(root):
    write(root, "go.mod", "module example.com/shop\n\ngo 1.19\n")
    write(root, "internal/cart/cart.go", """
        package cart

        import (
            "fmt"
            "sync"
        )

        type Cart struct {
            mu    sync.Mutex
            Items map[string]int `json:"items" xml:items`
        }

        func (c Cart) Count() int {
            c.mu.Lock()
            defer c.mu.Unlock()
            return len(c.Items)
        }

        func Describe(c *Cart, owner string) string {
            fmt.Printf("cart of %d has %s items\\n", owner, c.Count())
            return fmt.Sprintf("%s:%d", owner)
        }
        """)
    write(root, "internal/price/price.go", """
        package price

        func Discount(total float64) float64 {
            if total > 100 {
                return total * 0.9
            }
            return total
            total = total * 2
            return total
        }
        """)
    write(root, "main.go", """
        package main

        import (
            "fmt"

            "example.com/shop/internal/cart"
        )

        func main() {
            c := &cart.Cart{Items: map[string]int{"apple": 2}}
            fmt.Println(cart.Describe(c, "ann"))
        }
        """)
    return Run(["go", "vet", "./..."], [
        S("stderr", r"^# example\.com/shop/internal/", "the package heading of each finding"),
        S("stderr", r"^internal/(cart|price)/\w+\.go:\d+:\d+: ", "each finding with file:line"),
    ], env=_go_env(root), expect_exit=exits(1, 2))


@recipe("go-test-race", "go", "test-runner", GO, needs=("go", "gcc"), apt=("golang-go",))
def _go_test_race(root):
    write(root, "go.mod", "module example.com/metrics\n\ngo 1.19\n")
    cases = "".join(f'\t\t{{"case{i:02d}", {i}, {i * i}}},\n' for i in range(40))
    write(root, "calc/calc.go", "package calc\n\n// Square returns n*n.\nfunc Square(n int) int { return n * n }\n")
    write(root, "calc/calc_test.go",
          "package calc\n\nimport \"testing\"\n\nfunc TestSquare(t *testing.T) {\n"
          "\tcases := []struct {\n\t\tname string\n\t\tin, want int\n\t}{\n" + cases + "\t}\n"
          "\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {\n"
          "\t\t\tif got := Square(c.in); got != c.want {\n"
          "\t\t\t\tt.Fatalf(\"Square(%d) = %d, want %d\", c.in, got, c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n")
    write(root, "counter/counter.go", """
        package counter

        // Counter counts events from many goroutines.
        type Counter struct{ hits map[string]int }

        // New returns an empty counter.
        func New() *Counter { return &Counter{hits: map[string]int{}} }

        // Add records one event for key.
        func (c *Counter) Add(key string) { c.hits[key]++ }

        // Get returns the events recorded for key.
        func (c *Counter) Get(key string) int { return c.hits[key] }
        """)
    write(root, "counter/counter_test.go", """
        package counter

        import (
            "sync"
            "testing"
        )

        func TestAddSingle(t *testing.T) {
            c := New()
            c.Add("a")
            if c.Get("a") != 1 {
                t.Fatal("want 1")
            }
        }

        func TestAddConcurrent(t *testing.T) {
            c := New()
            var wg sync.WaitGroup
            for i := 0; i < 4; i++ {
                wg.Add(1)
                go func() {
                    defer wg.Done()
                    for j := 0; j < 100; j++ {
                        c.Add("hits")
                    }
                }()
            }
            wg.Wait()
            if got := c.Get("hits"); got != 400 {
                t.Errorf("hits = %d, want 400", got)
            }
        }
        """)
    return Run(["go", "test", "-race", "-v", "./..."], [
        S("stdout", r"^WARNING: DATA RACE$", "the race report"),
        S("stdout", r"counter\.go:\d+ \+0x[0-9a-f]+$", "the racing line in the project"),
        S("stdout", r"^--- FAIL: TestAddConcurrent ", "the failing test"),
        S("stdout", r"testing\.go:\d+: race detected during execution of test$", "why it failed"),
        S("stdout", r"^FAIL\texample\.com/metrics/counter\t", "the failing package"),
    ], env=_go_env(root), expect_exit=exits(1))


# --- Java ------------------------------------------------------------------------------------

@recipe("javac-lint-warnings-errors", "javac", "compiler", ["javac", "-version"], needs=("javac",))
def _javac_lint(root):
    for i in range(6):
        write(root, f"src/shop/Legacy{i}.java", f"""
            package shop;

            import java.util.*;

            public class Legacy{i} implements java.io.Serializable {{
                private List items = new ArrayList();
                private Map<String, Integer> counts = new HashMap();

                @SuppressWarnings("unused")
                public void add(Object item) {{
                    items.add(item);
                    Date when = new Date(2024, 1, {i + 1});
                    int year = when.getYear();
                    counts.put(item.toString(), year);
                }}

                public Integer total() {{
                    return new Integer(items.size());
                }}
            }}
            """)
    write(root, "src/shop/Checkout.java", """
        package shop;

        import java.io.FileReader;
        import java.util.ArrayList;
        import java.util.List;

        public class Checkout {
            public List<Object> lines(List<String> skus) {
                List<Object> out = skus;
                return out;
            }

            public String readReceipt(String path) {
                FileReader reader = new FileReader(path);
                return reader.toString();
            }
        }
        """)
    files = [f"src/shop/Legacy{i}.java" for i in range(6)] + ["src/shop/Checkout.java"]
    return Run(["javac", "-Xlint:all", "-d", "out"] + files, [
        S("stderr", r"^src/shop/Checkout\.java:\d+: error: ", "each compile error with file:line"),
        S("stderr", r"^\d+ errors?$", "error count"),
        S("stderr", r"^\d+ warnings?$", "warning count"),
    ], expect_exit=exits(1))


@recipe("java-caused-by-chain", "java", "runtime", ["java", "-version"], needs=("java", "javac"))
def _java_caused_by(root):
    write(root, "src/billing/App.java", """
        package billing;

        import java.util.List;
        import java.util.logging.Logger;
        import java.util.stream.Collectors;

        public class App {
            private static final Logger LOG = Logger.getLogger("billing");

            public static void main(String[] args) {
                for (int i = 1; i <= 30; i++) {
                    System.out.println("INFO  [main] loaded tariff table " + i + " of 30");
                }
                try {
                    new App().start(List.of("acme", "globex", "initech", "umbrella"));
                } catch (IllegalStateException e) {
                    throw new RuntimeException("billing service failed to start", e);
                }
            }

            void start(List<String> tenants) {
                try {
                    List<Invoice> invoices = tenants.stream().map(Invoice::forTenant).collect(Collectors.toList());
                    System.out.println("INFO  [main] prepared " + invoices.size() + " invoices");
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("could not prepare invoices", e);
                }
            }
        }
        """)
    write(root, "src/billing/Invoice.java", """
        package billing;

        public class Invoice {
            final String tenant;
            final long cents;

            Invoice(String tenant, long cents) {
                this.tenant = tenant;
                this.cents = cents;
            }

            static Invoice forTenant(String tenant) {
                try {
                    return new Invoice(tenant, Rates.centsFor(tenant));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("bad rate for tenant " + tenant, e);
                }
            }
        }
        """)
    write(root, "src/billing/Rates.java", """
        package billing;

        import java.util.Map;

        public class Rates {
            private static final Map<String, String> RATES =
                Map.of("acme", "1200", "globex", "980", "initech", "12,50", "umbrella", "400");

            static long centsFor(String tenant) {
                return Long.parseLong(RATES.get(tenant));
            }
        }
        """)
    sh(["javac", "-d", "out", "src/billing/App.java", "src/billing/Invoice.java", "src/billing/Rates.java"], root)
    return Run(["java", "-cp", "out", "billing.App"], [
        S("stderr", r'^Exception in thread "main" java\.lang\.RuntimeException: billing service failed to start$',
          "the exception"),
        S("stderr", r"^Caused by: ", "each cause"),
        S("stderr", r"^\tat billing\.Rates\.centsFor\(Rates\.java:\d+\)$", "the project's innermost frame"),
    ], expect_exit=exits(1))


MAVEN_POM = """
    <?xml version="1.0" encoding="UTF-8"?>
    <project xmlns="http://maven.apache.org/POM/4.0.0"
             xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
             xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
      <modelVersion>4.0.0</modelVersion>
      <groupId>org.example.inventory</groupId>
      <artifactId>inventory-core</artifactId>
      <version>1.4.0-SNAPSHOT</version>
      <packaging>jar</packaging>
      <properties>
        <maven.compiler.release>17</maven.compiler.release>
        <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
      </properties>
      <dependencies>
        <dependency>
          <groupId>org.junit.jupiter</groupId>
          <artifactId>junit-jupiter</artifactId>
          <version>5.10.2</version>
          <scope>test</scope>
        </dependency>
      </dependencies>
      <build>
        <plugins>
          <plugin><artifactId>maven-clean-plugin</artifactId><version>3.3.2</version></plugin>
          <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
          <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
          <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
          <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.1</version></plugin>
        </plugins>
      </build>
    </project>
    """


@recipe("mvn-test-failure", "mvn", "test-runner", ["mvn", "--version"], needs=("mvn",))
def _mvn_test(root):
    write(root, "pom.xml", MAVEN_POM)
    write(root, "src/main/java/org/example/inventory/Stock.java", """
        package org.example.inventory;

        import java.util.HashMap;
        import java.util.Map;

        public class Stock {
            private final Map<String, Integer> counts = new HashMap<>();

            public void receive(String sku, int n) { counts.merge(sku, n, Integer::sum); }

            public int ship(String sku, int n) {
                int have = counts.getOrDefault(sku, 0);
                counts.put(sku, have - n);
                return have - n;
            }

            public int count(String sku) { return counts.getOrDefault(sku, 0); }
        }
        """)
    tests = "".join(f"""
            @Test
            void receiveAddsUp{i:02d}() {{
                Stock s = new Stock();
                s.receive("sku-{i}", {i});
                s.receive("sku-{i}", 1);
                assertEquals({i + 1}, s.count("sku-{i}"));
            }}
        """ for i in range(30))
    write(root, "src/test/java/org/example/inventory/StockTest.java", """
        package org.example.inventory;

        import static org.junit.jupiter.api.Assertions.assertEquals;
        import static org.junit.jupiter.api.Assertions.assertThrows;

        import org.junit.jupiter.api.Test;

        class StockTest {
            @Test
            void shippingMoreThanStockIsRefused() {
                Stock s = new Stock();
                s.receive("sku-1", 2);
                assertThrows(IllegalStateException.class, () -> s.ship("sku-1", 5));
            }
        """ + tests + "}\n")
    return Run(["mvn", "-o", "-B", "test"], [
        S("stdout", r"^\[ERROR\] Tests run: \d+, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: .* <<< FAILURE!",
          "the failing test class"),
        S("stdout", r"^\[ERROR\] org\.example\.inventory\.StockTest\.shippingMoreThanStockIsRefused", "the failing test"),
        S("stdout", r"^\[ERROR\] Tests run: \d+, Failures: 1, Errors: 0, Skipped: 0$", "the test summary"),
        S("stdout", r"^\[INFO\] BUILD FAILURE$", "build result"),
    ], expect_exit=exits(1), skip_when=b"has not been downloaded from it before")


# --- Perl ------------------------------------------------------------------------------------

@recipe("perl-warnings-die", "perl", "runtime", ["perl", "-e", "print qq{perl $^V\\n}"], needs=("perl",))
def _perl_die(root):
    write(root, "report.pl", """
        use strict;
        use warnings;

        my %totals;
        my $rows = 0;
        open(my $fh, '<', 'sales.csv') or die "Cannot open sales.csv: $!";
        my $header = <$fh>;
        while (my $line = <$fh>) {
            chomp $line;
            my @fields = split /,/, $line;
            my ($region, $product, $units, $price) = @fields;
            $totals{$region} += $units * $price;
            $rows++;
            printf "%-10s %-12s %6s x %8s\\n", $region, $product, $units, $price;
        }
        close $fh;
        printf "%d rows read\\n", $rows;
        for my $region (sort keys %totals) {
            printf "%-10s %12.2f\\n", $region, $totals{$region};
        }
        my $out = "/var/reports/q3/summary.txt";
        open(my $sum, '>', $out) or die "Cannot write $out: $!";
        print $sum "done\\n";
        """)
    rng = random.Random(7)
    rows = ["region,product,units,price"]
    regions = ["Nord", "Süd", "Ost", "West", "Zentrum"]
    for i in range(400):
        units = rng.randint(1, 90)
        price = f"{rng.randint(100, 9999) / 100:.2f}"
        if i % 37 == 5:
            rows.append(f"{rng.choice(regions)},Gerät-{i % 13},{units}")
        elif i % 53 == 11:
            rows.append(f"{rng.choice(regions)},Gerät-{i % 13},n/a,{price}")
        else:
            rows.append(f"{rng.choice(regions)},Gerät-{i % 13},{units},{price}")
    write(root, "sales.csv", "\n".join(rows) + "\n")
    return Run(["perl", "report.pl"], [
        S("stderr", r"^Cannot write /var/reports/q3/summary\.txt: No such file or directory at report\.pl line 22\.$",
          "why the script died"),
        S("stdout", r"^\d+ rows read$", "how far it got"),
    ], expect_exit=exits(2))


@recipe("prove-tap-failure", "prove", "test-runner", ["prove", "--version"], needs=("prove",))
def _prove(root):
    write(root, "lib/Slug.pm", """
        package Slug;
        use strict;
        use warnings;

        sub slugify {
            my ($text) = @_;
            $text = lc $text;
            $text =~ s/[^a-z0-9]+/-/g;
            $text =~ s/^-|-$//g;
            return $text;
        }

        sub truncate_words {
            my ($text, $n) = @_;
            my @words = split /\\s+/, $text;
            return join ' ', @words[0 .. $n];
        }

        1;
        """)
    for i in range(1, 13):
        checks = "".join(f"is(Slug::slugify('Item {j} Name {i}'), 'item-{j}-name-{i}', 'slug {j}');\n"
                         for j in range(20))
        write(root, f"t/{i:02d}-slug.t", "use strict;\nuse warnings;\nuse Test::More;\nuse lib 'lib';\n"
              "use Slug;\n\n" + checks + "done_testing();\n")
    write(root, "t/13-truncate.t", """
        use strict;
        use warnings;
        use Test::More tests => 4;
        use lib 'lib';
        use Slug;

        is(Slug::truncate_words('one two three four', 2), 'one two', 'keeps two words');
        is(Slug::truncate_words('one', 1), 'one', 'short text unchanged');
        is(Slug::slugify('  Hello, World!  '), 'hello-world', 'trims separators');
        is(Slug::slugify('Café Crème'), 'caf-cr-me', 'drops non-ASCII letters');
        """)
    return Run(["prove", "-v", "t/"], [
        S("stdout", r"^not ok \d+ - ", "each failing test"),
        S("stderr", r"^#   Failed test '[^']+'$", "the failed test's name"),
        S("stderr", r"^#   at t/13-truncate\.t line \d+\.$", "where it failed"),
        S("stdout", r"^t/13-truncate\.t \(Wstat: ", "the summary report's failing file"),
        S("stdout", r"^Files=\d+, Tests=\d+, ", "the run's counts"),
        S("stdout", r"^Result: FAIL$", "the result"),
    ], expect_exit=exits(1))


# --- build systems ---------------------------------------------------------------------------

def _c_unit(name: str, index: int) -> str:
    """A small C source defining `name_index` helpers, compiled by the build-system cases."""
    return (f"#include \"{name}.h\"\n\nint {name}_{index:02d}_apply(int value)\n{{\n"
            f"    int acc = value;\n    for (int i = 0; i < {index + 2}; i++)\n"
            f"        acc = acc * 31 + i;\n    return acc;\n}}\n")


MAKE_DIRS = ("core/log", "core/alloc", "net/http", "net/tls", "store/db", "store/cache", "util/json", "util/text")


@recipe("make-j-recursive", "make", "build", ["make", "--version"], needs=("make", "gcc"))
def _make_recursive(root):
    subdirs = " ".join(MAKE_DIRS)
    write(root, "Makefile", f"""
        SUBDIRS = {subdirs}

        .PHONY: all $(SUBDIRS)
        all: $(SUBDIRS)

        $(SUBDIRS):
        \t$(MAKE) -C $@
        """)
    for d in MAKE_DIRS:
        lib = d.replace("/", "_")
        write(root, f"{d}/{lib}.h", "".join(f"int {lib}_{i:02d}_apply(int value);\n" for i in range(12)))
        for i in range(12):
            write(root, f"{d}/{lib}_{i:02d}.c", _c_unit(lib, i))
        write(root, f"{d}/Makefile", f"""
            CFLAGS = -O2 -Wall -fPIC
            SRCS = $(wildcard *.c)
            OBJS = $(SRCS:.c=.o)

            lib{lib}.a: $(OBJS)
            \tar rcs $@ $^

            %.o: %.c {lib}.h
            \t$(CC) $(CFLAGS) -c $< -o $@
            """)
    with open(os.path.join(root, "store/db/store_db_07.c"), "a", encoding="utf-8") as handle:
        handle.write("\nint store_db_07_rollback(struct txn *t)\n{\n    return t->depth--;\n}\n")
    return Run(["make", "-j4"], [
        S("stderr", r"^store_db_07\.c:\d+:\d+: error: ", "the compile error with file:line"),
        S("stderr", r"^make\[1\]: \*\*\* \[Makefile:\d+: store_db_07\.o\] Error 1$", "the failing target"),
        S("stderr", r"^make: \*\*\* \[Makefile:\d+: store/db\] Error 2$", "the failing subdirectory"),
    ], expect_exit=exits(2))


def _cmake_project(root: str, libraries: int, per_library: int) -> None:
    names = [f"mod{i}" for i in range(libraries)]
    lines = ["cmake_minimum_required(VERSION 3.20)", "project(inventory C)", "enable_testing()"]
    for name in names:
        sources = " ".join(f"src/{name}/{name}_{k:02d}.c" for k in range(per_library))
        lines.append(f"add_library({name} STATIC {sources})")
        lines.append(f"target_include_directories({name} PUBLIC src/{name})")
        write(root, f"src/{name}/{name}.h", "".join(f"int {name}_{k:02d}_apply(int value);\n" for k in range(per_library)))
        for k in range(per_library):
            write(root, f"src/{name}/{name}_{k:02d}.c", _c_unit(name, k))
    lines.append("add_executable(inventory_app src/main.c)")
    lines.append(f"target_link_libraries(inventory_app {' '.join(names)})")
    write(root, "src/main.c", "#include <stdio.h>\n#include <stdlib.h>\n"
          + "".join(f"#include \"{n}.h\"\n" for n in names)
          + "int main(int argc, char **argv)\n{\n    int v = argc > 1 ? atoi(argv[1]) : 1;\n"
          + "".join(f"    v ^= {n}_00_apply(v);\n" for n in names)
          + "    printf(\"%d\\n\", v);\n    if (argc > 2 && v != atoi(argv[2])) {\n"
          + "        fprintf(stderr, \"apply(%s): got %d, want %s\\n\", argv[1], v, argv[2]);\n"
          + "        return 1;\n    }\n    return 0;\n}\n")
    write(root, "CMakeLists.txt", "\n".join(lines) + "\n")


@recipe("cmake-build-verbose", "cmake", "build", ["cmake", "--version"], needs=("cmake", "make", "gcc"))
def _cmake_verbose(root):
    _cmake_project(root, 5, 30)
    sh(["cmake", "-S", ".", "-B", "build", "-G", "Unix Makefiles"], root)
    return Run(["cmake", "--build", "build", "--verbose"], [
        S("stdout", r"^\[100%\] Built target inventory_app$", "the build finished"),
    ], expect_exit=exits(0))


@recipe("ctest-one-failure", "ctest", "test-runner", ["ctest", "--version"], needs=("cmake", "ctest", "gcc"))
def _ctest(root):
    _cmake_project(root, 2, 4)
    sh(["cmake", "-S", ".", "-B", "build", "-G", "Ninja"], root)
    sh(["cmake", "--build", "build"], root)
    with open(os.path.join(root, "CMakeLists.txt"), "a", encoding="utf-8") as handle:
        for i in range(40):
            want = int(sh(["build/inventory_app", str(i)], root).stdout) + (1 if i == 23 else 0)
            handle.write(f"add_test(NAME apply_{i:02d} COMMAND inventory_app {i} {want})\n")
    sh(["cmake", "-S", ".", "-B", "build"], root)
    return Run(["ctest", "--test-dir", "build", "--output-on-failure"], [
        S("stdout", r"\*\*\*Failed ", "the failing test's line"),
        S("stdout", r"^apply\(23\): got \d+, want \d+$", "the failing test's own output"),
        S("stdout", r"^\d+% tests passed, 1 tests failed out of 40$", "the summary"),
        S("stdout", r"^The following tests FAILED:$", "the failure list"),
        S("stdout", r"^\s+\d+ - apply_23 \(Failed\)$", "which test failed"),
    ], expect_exit=exits(8))


@recipe("cmake-missing-protobuf", "cmake", "build", ["cmake", "--version"], needs=("cmake", "gcc"))
def _cmake_missing(root):
    write(root, "CMakeLists.txt", """
        cmake_minimum_required(VERSION 3.20)
        project(telemetry_agent CXX)
        find_package(Threads REQUIRED)
        find_package(Protobuf 3.21 REQUIRED)
        add_executable(agent src/agent.cpp)
        target_link_libraries(agent protobuf::libprotobuf Threads::Threads)
        """)
    write(root, "src/agent.cpp", "int main() { return 0; }\n")
    return Run(["cmake", "-S", ".", "-B", "build"], [
        S("stderr", r"^CMake Error at /usr/share/cmake-[\d.]+/Modules/FindPackageHandleStandardArgs\.cmake:\d+ \(message\):$",
          "the configure error"),
        S("stderr", r"^  Could NOT find Protobuf \(missing: ", "what is missing"),
        S("stderr", r"^  CMakeLists\.txt:4 \(find_package\)$", "the project line that asked for it"),
        S("stdout", r"^-- Configuring incomplete, errors occurred!$", "configure result"),
    ], expect_exit=exits(1))


def _meson_project(root: str, dep: str | None) -> None:
    extra = f"sodium = dependency('{dep}', version : '>=1.0.18')\n" if dep else ""
    write(root, "meson.build", "project('mediaindex', 'c', version : '0.9.2', default_options : ['warning_level=2'])\n"
          "cc = meson.get_compiler('c')\nm = cc.find_library('m')\nthreads = dependency('threads')\n"
          + extra +
          "src = files(" + ", ".join(f"'src/scan_{i:02d}.c'" for i in range(16)) + ", 'src/main.c')\n"
          "executable('mediaindex', src, dependencies : [m, threads])\n")
    write(root, "src/scan.h", "".join(f"int scan_{i:02d}_apply(int value);\n" for i in range(16))
          + "int scan_checksum(const char *path);\n")
    for i in range(16):
        write(root, f"src/scan_{i:02d}.c", _c_unit("scan", i))
    write(root, "src/main.c", "#include <stdio.h>\n#include \"scan.h\"\n\nint main(int argc, char **argv)\n{\n"
          "    int v = scan_00_apply(argc);\n    if (argc > 1)\n        v += scan_checksum(argv[1]);\n"
          "    printf(\"%d\\n\", v);\n    return 0;\n}\n")


@recipe("meson-setup-missing-dep", "meson", "build", ["meson", "--version"], needs=("meson", "ninja", "gcc"),
        apt=("meson",))
def _meson_missing(root):
    _meson_project(root, "libsodium")
    return Run(["meson", "setup", "build"], [
        S("stdout", r"^meson\.build:5:0: ERROR: Dependency \"libsodium\" not found", "the error with file:line"),
        S("stdout", r"^A full log can be found at ", "where the log is"),
    ], expect_exit=exits(1))


@recipe("ninja-link-error", "ninja", "build", ["ninja", "--version"], needs=("meson", "ninja", "gcc"), apt=("meson",))
def _ninja_link(root):
    _meson_project(root, None)
    sh(["meson", "setup", "build"], root)
    return Run(["ninja", "-C", "build"], [
        S("stdout", r"^FAILED: mediaindex ?$", "the failing target"),
        S("stdout", r"undefined reference to `scan_checksum'$", "the missing symbol"),
        S("stdout", r"^collect2: error: ld returned 1 exit status$", "the link failed"),
        S("stdout", r"^ninja: build stopped: subcommand failed\.$", "the build result"),
    ], expect_exit=exits(1))


CONFIGURE_AC = """
    AC_PREREQ([2.69])
    AC_INIT([mailq-tools], [2.3.0], [bugs@example.org])
    AC_CONFIG_SRCDIR([src/main.c])
    AC_CONFIG_HEADERS([config.h])
    AC_PROG_CC
    AC_PROG_INSTALL
    AC_PROG_MAKE_SET
    AC_PROG_RANLIB
    AC_CHECK_HEADERS([arpa/inet.h fcntl.h limits.h netdb.h netinet/in.h stdint.h stdlib.h string.h \\
                      strings.h sys/socket.h sys/time.h syslog.h unistd.h poll.h sys/epoll.h \\
                      sys/inotify.h locale.h langinfo.h termios.h pwd.h grp.h])
    AC_TYPE_PID_T
    AC_TYPE_SIZE_T
    AC_TYPE_SSIZE_T
    AC_TYPE_UINT16_T
    AC_TYPE_UINT32_T
    AC_TYPE_UINT64_T
    AC_FUNC_FORK
    AC_FUNC_MALLOC
    AC_FUNC_REALLOC
    AC_CHECK_FUNCS([dup2 gethostname gettimeofday memmove memset mkdir select socket strchr strdup \\
                    strerror strrchr strstr strtol strtoul uname epoll_create1 inotify_init1 \\
                    clock_gettime getaddrinfo setlocale nl_langinfo])
    AC_CHECK_LIB([m], [floor])
    AC_CHECK_LIB([yaml], [yaml_parser_initialize], [], [AC_MSG_ERROR([libyaml is required])])
    @EXTRA@
    AC_CONFIG_FILES([Makefile])
    AC_OUTPUT
    """


def _autoconf_project(root: str, extra: str) -> None:
    write(root, "configure.ac", CONFIGURE_AC.replace("@EXTRA@", extra))
    write(root, "Makefile.in", "CC = @CC@\nCFLAGS = @CFLAGS@\nLIBS = @LIBS@\n\nmailq: src/main.c\n"
          "\t$(CC) $(CFLAGS) -o $@ src/main.c $(LIBS)\n")
    write(root, "src/main.c", "#include \"../config.h\"\nint main(void) { return 0; }\n")
    sh(["autoreconf", "-i"], root)


@recipe("configure-ok", "configure", "build", ["autoconf", "--version"], needs=("autoconf", "gcc"),
        apt=("autoconf", "automake"))
def _configure_ok(root):
    _autoconf_project(root, "")
    return Run(["./configure", "--prefix=/opt/mailq"], [
        S("stdout", r"^config\.status: creating Makefile$", "the configure finished"),
        S("stdout", r"^checking for yaml_parser_initialize in -lyaml\.\.\. yes$", "the required library was found"),
    ], expect_exit=exits(0))


@recipe("configure-missing-lib", "configure", "build", ["autoconf", "--version"], needs=("autoconf", "gcc"),
        apt=("autoconf", "automake"))
def _configure_fail(root):
    _autoconf_project(root, "AC_CHECK_LIB([sodium], [sodium_init], [], "
                            "[AC_MSG_ERROR([libsodium >= 1.0.18 is required; install libsodium-dev])])")
    return Run(["./configure", "--prefix=/opt/mailq"], [
        S("stdout", r"^checking for sodium_init in -lsodium\.\.\. no$", "the failing check"),
        S("stderr", r"^configure: error: libsodium >= 1\.0\.18 is required; install libsodium-dev$", "the error"),
    ], expect_exit=exits(1))


@recipe("bison-grammar-errors", "bison", "compiler", ["bison", "--version"], needs=("bison",), apt=("bison",))
def _bison(root):
    write(root, "calc.y", """
        %{
        #include <stdio.h>
        int yylex(void);
        void yyerror(const char *s) { fprintf(stderr, "%s\\n", s); }
        %}
        %token NUM IDENT
        %left '+' '-'
        %%
        input: /* empty */ | input line ;
        line: '\\n' | expr '\\n' { printf("%d\\n", $1); } | assign '\\n' ;
        assign: IDENT '=' expr ;
        expr: NUM
            | IDENT
            | expr '+' expr { $$ = $1 + $3; }
            | expr '-' expr { $$ = $1 - $3; }
            | expr '*' expr { $$ = $1 * $3; }
            | expr '/' expr { $$ = $1 / $3; }
            | '(' expr ')' { $$ = $2; }
            | FUNC '(' expr ')' { $$ = $3; }
            ;
        %%
        """)
    return Run(["bison", "-Wall", "-d", "calc.y"], [
        S("stderr", r"^calc\.y:\d+\.\d+-\d+: error: symbol ‘FUNC’ is used, but is not defined", "the error with file:line"),
    ], expect_exit=exits(1))


@recipe("ldd-not-found", "ldd", "build", ["ldd", "--version"], needs=("ldd", "gcc"))
def _ldd(root):
    write(root, "metrics.c", "int metrics_count(void) { return 42; }\n")
    write(root, "app.c", "#include <stdio.h>\n#include <math.h>\nint metrics_count(void);\n"
          "int main(void) { printf(\"%f\\n\", sqrt(metrics_count())); return 0; }\n")
    sh(["gcc", "-shared", "-fPIC", "-Wl,-soname,libmetrics.so.1", "-o", "libmetrics.so.1", "metrics.c"], root)
    sh(["ln", "-s", "libmetrics.so.1", "libmetrics.so"], root)
    sh(["gcc", "-o", "app", "app.c", "-L.", "-lmetrics", "-lm"], root)
    os.remove(os.path.join(root, "libmetrics.so.1"))
    return Run(["ldd", "./app"], [
        S("stdout", r"^\tlibmetrics\.so\.1 => not found$", "the missing library"),
    ], expect_exit=exits(0))


# --- git -------------------------------------------------------------------------------------

GIT_PEOPLE = (("Dev One", "dev@example.org"), ("Zoë Ångström", "zoe@example.org"),
              ("山田 太郎", "taro@example.jp"), ("Ivan Petrov", "ivan@example.org"))


def git_env(person=GIT_PEOPLE[0], when: str = "2024-03-01T09:00:00Z") -> dict[str, str]:
    """Identity, fixed dates and no machine-wide configuration, for setup steps and recorded runs."""
    return {"GIT_AUTHOR_NAME": person[0], "GIT_AUTHOR_EMAIL": person[1],
            "GIT_COMMITTER_NAME": person[0], "GIT_COMMITTER_EMAIL": person[1],
            "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when,
            "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


class Repo:
    """A scratch repository whose commits get increasing fixed dates."""

    def __init__(self, root: str, branch: str = "main"):
        self.root = root
        self.tick = 0
        os.makedirs(root, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    def when(self) -> str:
        minutes = self.tick * 37
        day, minutes = divmod(minutes, 24 * 60)
        return f"2024-03-{1 + day % 28:02d}T{minutes // 60:02d}:{minutes % 60:02d}:00Z"

    def git(self, *args, person=GIT_PEOPLE[0], check=True):
        return sh(["git", *args], self.root, env=git_env(person, self.when()), check=check)

    def write(self, rel: str, text: str) -> None:
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)

    def commit(self, message: str, person=GIT_PEOPLE[0]) -> None:
        self.tick += 1
        self.git("add", "-A", person=person)
        self.git("commit", "-q", "-m", message, person=person)


def _module_text(i: int, top: str = "", bottom: str = "") -> str:
    middle = "".join(f"    value = value * {k + 2} + {i}\n" for k in range(20))
    return (f"# module {i}\n{top}\ndef run_{i}(value):\n{middle}    return value\n\n"
            f"LIMIT_{i} = {i * 10}\n{bottom}")


def _diverged(root: str) -> Repo:
    """A repository whose `feature` and `main` both touch 220 modules; three overlap, one is deleted."""
    repo = Repo(root)
    for i in range(220):
        repo.write(f"src/pkg{i % 6}/module_{i:03d}.py", _module_text(i))
    repo.write("docs/legacy-api.md", "# Legacy API\n\nStill documented.\n")
    repo.commit("Import the service modules")
    repo.git("checkout", "-q", "-b", "feature")
    for i in range(220):
        bottom = f"LIMIT_{i} = {i * 10 + 5}\n" if i in (17, 58, 103) else ""
        text = _module_text(i, top="import logging\n", bottom=bottom)
        if i in (17, 58, 103):
            text = text.replace(f"LIMIT_{i} = {i * 10}\n", "")
        repo.write(f"src/pkg{i % 6}/module_{i:03d}.py", text)
    os.remove(os.path.join(root, "docs/legacy-api.md"))
    repo.commit("Log every module run; raise three limits; drop the legacy API page", GIT_PEOPLE[1])
    repo.git("checkout", "-q", "main")
    for i in range(220):
        text = _module_text(i, bottom=f"\n\ndef describe_{i}():\n    return 'module {i}'\n")
        if i in (17, 58, 103):
            text = text.replace(f"LIMIT_{i} = {i * 10}\n", f"LIMIT_{i} = {i * 10 - 3}\n")
        repo.write(f"src/pkg{i % 6}/module_{i:03d}.py", text)
    repo.write("docs/legacy-api.md", "# Legacy API\n\nStill documented; see the migration notes.\n")
    repo.commit("Describe each module; lower three limits", GIT_PEOPLE[3])
    return repo


@recipe("git-merge-conflicts", "git", "vcs", GIT, needs=("git",))
def _git_merge(root):
    _diverged(root)
    return Run(["git", "merge", "feature"], [
        S("stdout", r"^CONFLICT \(content\): Merge conflict in src/pkg\d/module_(017|058|103)\.py$", "each content conflict"),
        S("stdout", r"^CONFLICT \(modify/delete\): docs/legacy-api\.md deleted in feature and modified in HEAD\.",
          "the modify/delete conflict"),
        S("stdout", r"^Automatic merge failed; fix conflicts and then commit the result\.$", "the result"),
    ], env=git_env(when="2024-04-01T10:00:00Z"), expect_exit=exits(1))


@recipe("git-status-unmerged", "git", "vcs", GIT, needs=("git",))
def _git_status(root):
    repo = _diverged(root)
    repo.git("merge", "feature", check=False)
    for i in range(160):
        repo.write(f"src/pkg{i % 6}/test_generated_{i:03d}.py", f"def test_{i}():\n    assert True\n")
    repo.write("notes-zoë.txt", "offene Punkte\n")
    return Run(["git", "status"], [
        S("stdout", r"^On branch main$", "current branch"),
        S("stdout", r"^You have unmerged paths\.$", "the merge state"),
        S("stdout", r"^\tboth modified:   ", "each conflicted file"),
        S("stdout", r"^\tdeleted by them: ", "the modify/delete conflict"),
    ], env=git_env(), expect_exit=exits(0))


@recipe("git-rebase-conflict", "git", "vcs", GIT, needs=("git",))
def _git_rebase(root):
    repo = Repo(root)
    repo.write("retry.toml", "[retry]\nattempts = 3\nbackoff_ms = 200\nmax_backoff_ms = 5000\n")
    repo.write("README.md", "# fetcher\n")
    repo.commit("Start the fetcher")
    repo.git("checkout", "-q", "-b", "tune-retries")
    steps = [("README.md", "# fetcher\n\nFetches feeds.\n", "Describe the fetcher"),
             ("src/fetch.py", "def fetch(url):\n    return url\n", "Add the fetch entry point"),
             ("retry.toml", "[retry]\nattempts = 5\nbackoff_ms = 100\nmax_backoff_ms = 2000\n", "Tighten retry limits"),
             ("src/parse.py", "def parse(text):\n    return text.split()\n", "Add the parser"),
             ("src/cli.py", "import sys\nprint(sys.argv)\n", "Add the command line")]
    for path, text, message in steps:
        repo.write(path, text)
        repo.commit(message, GIT_PEOPLE[2])
    repo.git("checkout", "-q", "main")
    repo.write("retry.toml", "[retry]\nattempts = 4\nbackoff_ms = 250\nmax_backoff_ms = 8000\njitter = true\n")
    repo.commit("Add jitter to retries", GIT_PEOPLE[3])
    repo.git("checkout", "-q", "tune-retries")
    return Run(["git", "rebase", "main"], [
        S("stdout", r"^CONFLICT \(content\): Merge conflict in retry\.toml$", "the conflict"),
        S("stderr", r"error: could not apply [0-9a-f]+\.\.\. Tighten retry limits$", "the commit that stopped"),
    ], env=git_env(when="2024-04-02T10:00:00Z"), expect_exit=exits(1))


LOG_SUBJECTS = ("Fix off-by-one in pagination", "Übersetzung der Fehlermeldungen aktualisiert",
                "キャッシュの有効期限を修正", "Bump parser to handle CRLF", "Refactor the job queue 🚀",
                "Remove dead feature flags", "Guard against empty payloads", "Document the retry policy")


@recipe("git-log-stat-unicode", "git", "vcs", GIT, needs=("git",))
def _git_log_stat(root):
    repo = Repo(root)
    rng = random.Random(11)
    for n in range(160):
        for _ in range(rng.randint(1, 6)):
            k = rng.randrange(40)
            path = f"app/{['api', 'jobs', 'i18n', 'web'][k % 4]}/file_{k:02d}.py"
            old = read_text(os.path.join(root, path)) if os.path.exists(os.path.join(root, path)) else ""
            repo.write(path, old + "".join(f"line_{n}_{j} = {j}\n" for j in range(rng.randint(1, 30))))
        subject = f"{LOG_SUBJECTS[n % len(LOG_SUBJECTS)]} (#{1000 + n})"
        if n == 159:
            subject = "Revert „Zeitzonen-Umstellung“: breaks nightly export"
        repo.commit(f"{subject}\n\nPart of the spring clean-up, step {n}.", GIT_PEOPLE[n % 4])
    return Run(["git", "log", "--stat", "-n", "120"], [
        S("stdout", r"^    Revert „Zeitzonen-Umstellung“: breaks nightly export$", "the newest commit's subject"),
        S("stdout", r"^    .* \(#115[4-8]\)$", "the subjects of the next newest commits"),
    ], env=git_env(), expect_exit=exits(0))


@recipe("git-blame-uncommitted", "git", "vcs", GIT, needs=("git",))
def _git_blame(root):
    repo = Repo(root)
    lines = [f"    settings.set('key_{i:03d}', {i})\n" for i in range(300)]
    for n in range(25):
        for k in range(n, 300, 25):
            lines[k] = f"    settings.set('key_{k:03d}', {k + n})  # tuned in round {n}\n"
        repo.write("config/defaults.py", "def apply(settings):\n" + "".join(lines))
        repo.commit(f"Tune defaults, round {n}", GIT_PEOPLE[n % 4])
    lines[141] = "    settings.set('key_141', None)  # FIXME disabled while debugging\n"
    lines[142] = "    settings.set('timeout_ms', 0)\n"
    repo.write("config/defaults.py", "def apply(settings):\n" + "".join(lines))
    return Run(["git", "blame", "config/defaults.py"], [
        S("stdout", r"^00000000 \(Not Committed Yet ", "the lines changed in the work tree"),
    ], env=git_env(when="2024-05-01T12:00:00Z"), expect_exit=exits(0))


@recipe("git-bisect-run", "git", "vcs", GIT, needs=("git",))
def _git_bisect(root):
    repo = Repo(root)
    write(root, "check.sh", "#!/bin/sh\n# exit 1 when the rate limit is broken\n"
          "limit=$(sed -n 's/^RATE_LIMIT = //p' app/limits.py)\n"
          "echo \"rate limit: $limit\"\ntest \"$limit\" -gt 0\n", mode=0o755)
    repo.git("add", "check.sh")
    for n in range(64):
        limit = 100 + n if n < 41 else 0
        repo.write("app/limits.py", f"RATE_LIMIT = {limit}\nBURST = {n}\n")
        repo.write(f"app/feature_{n:02d}.py", f"def feature_{n}():\n    return {n}\n")
        subject = "Read the rate limit from the environment" if n == 41 else f"Add feature {n}"
        repo.commit(subject, GIT_PEOPLE[n % 4])
    first = repo.git("rev-list", "--max-parents=0", "HEAD").stdout.decode().strip()
    repo.git("bisect", "start", "HEAD", first)
    return Run(["git", "bisect", "run", "./check.sh"], [
        S("stdout", r"^[0-9a-f]{40} is the first bad commit$", "the answer"),
        S("stdout", r"^    Read the rate limit from the environment$", "the bad commit's subject"),
        S("stdout", r"^bisect found first bad commit$", "the result"),
    ], env=git_env(), expect_exit=exits(0))


@recipe("git-push-rejected", "git", "vcs", GIT, needs=("git",))
def _git_push(root):
    sh(["git", "init", "-q", "--bare", "-b", "main", "remote.git"], root, env=git_env())
    mine = Repo(os.path.join(root, "work"))
    mine.write("app.py", "print('v1')\n")
    mine.commit("First version")
    mine.git("remote", "add", "origin", os.path.join(root, "remote.git"))
    mine.git("push", "-q", "origin", "main")
    sh(["git", "clone", "-q", "remote.git", "other"], root, env=git_env())
    other = os.path.join(root, "other")
    with open(os.path.join(other, "app.py"), "a", encoding="utf-8") as handle:
        handle.write("print('hotfix')\n")
    sh(["git", "commit", "-q", "-am", "Hotfix from the release branch"], other, env=git_env(GIT_PEOPLE[3]))
    sh(["git", "push", "-q", "origin", "main"], other, env=git_env(GIT_PEOPLE[3]))
    mine.write("app.py", "print('v2')\n")
    mine.commit("Second version")
    return Run(["git", "push", "origin", "main"], [
        S("stderr", r"^ ! \[rejected\]\s+main -> main \(fetch first\)$", "what was rejected"),
        S("stderr", r"^error: failed to push some refs to ", "the result"),
    ], cwd="work", env=git_env(), expect_exit=exits(1))


@recipe("git-apply-failure", "git", "vcs", GIT, needs=("git",))
def _git_apply(root):
    repo = Repo(root)
    for i in range(8):
        repo.write(f"src/handler_{i}.c", "".join(f"int handler_{i}_{k}(void) {{ return {k}; }}\n" for k in range(30)))
    repo.commit("Add handlers")
    for i in (2, 5):
        edit(os.path.join(root, f"src/handler_{i}.c"), ("return 12;", "return 12 * 2;"))
    diff = repo.git("diff").stdout.decode()
    repo.git("checkout", "--", ".")
    edit(os.path.join(root, "src/handler_5.c"), ("return 11;", "return 11 + 0;"), ("return 12;", "return -12;"))
    repo.commit("Negate handler 12")
    write(root, "fix-handlers.patch", diff)
    return Run(["git", "apply", "-v", "fix-handlers.patch"], [
        S("stderr", r"^error: patch failed: src/handler_5\.c:\d+$", "where the patch failed"),
        S("stderr", r"^error: src/handler_5\.c: patch does not apply$", "the result"),
    ], env=git_env(), expect_exit=exits(1))


# --- system tools, listings, logs ------------------------------------------------------------

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
FIXED_MTIME = 1714557600  # 2024-05-01 10:00:00 UTC


def _tree(root: str, top: str, dirs: int, files: int, seed: int, names=None) -> None:
    """A deterministic tree under root/top: nested directories of small files with fixed times."""
    rng = random.Random(seed)
    names = names or ["cache", "logs", "assets", "uploads", "tmp", "reports", "config", "lib"]
    paths = [top]
    for d in range(dirs):
        parent = rng.choice(paths)
        paths.append(os.path.join(parent, f"{rng.choice(names)}_{d:03d}"))
    for p in paths:
        os.makedirs(os.path.join(root, p), exist_ok=True)
    for f in range(files):
        parent = rng.choice(paths)
        ext = rng.choice(["log", "json", "png", "txt", "gz", "csv"])
        path = os.path.join(root, parent, f"item_{f:05d}.{ext}")
        with open(path, "wb") as handle:
            handle.write(rng.randbytes(rng.choice([0, 120, 900, 4000, 12000, 70000])))
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (FIXED_MTIME, FIXED_MTIME))
    os.utime(os.path.join(root, top), (FIXED_MTIME, FIXED_MTIME))


@recipe("du-ah-tree", "du", "listing", ["du", "--version"], needs=("du",))
def _du(root):
    _tree(root, "data", 120, 2600, 3)
    with open(os.path.join(root, "data/core.dump"), "wb") as handle:
        handle.write(random.Random(5).randbytes(48 * 1024 * 1024))
    return Run(["du", "-ah", "data"], [
        S("stdout", r"^4[89]M\tdata/core\.dump$", "the one huge file"),
        S("stdout", r"^\S+\tdata$", "the total"),
    ], expect_exit=exits(0))


@recipe("find-permission-denied", "find", "listing", ["find", "--version"], needs=("find", "setpriv"))
def _find_denied(root):
    _tree(root, "srv", 90, 3500, 4)
    locked = ["srv/uploads_private", "srv/reports_archive/2023", "srv/config_secrets"]
    for rel in locked:
        os.makedirs(os.path.join(root, rel), exist_ok=True)
        write(root, f"{rel}/hidden.txt", "x\n")
    for rel in locked:
        os.chmod(os.path.join(root, rel), 0)
    return Run(["find", "srv", "-xdev"], [
        S("stderr", r"^find: ‘srv/[a-z_/0-9]+’: Permission denied$", "each unreadable directory"),
    ], command=NOBODY + ["find", "srv", "-xdev"], expect_exit=exits(1))


@recipe("ls-laR-unicode", "ls", "listing", ["ls", "--version"], needs=("ls", "setpriv"))
def _ls_unicode(root):
    names = ["Fotos", "Überweisungen", "résumés", "データ", "проекты", "notes", "Ärzte", "café"]
    _tree(root, "share", 60, 900, 6, names=names)
    os.makedirs(os.path.join(root, "share/Überweisungen_private"))
    os.chmod(os.path.join(root, "share/Überweisungen_private"), 0o700)
    os.utime(os.path.join(root, "share/Überweisungen_private"), (FIXED_MTIME, FIXED_MTIME))
    os.utime(os.path.join(root, "share"), (FIXED_MTIME, FIXED_MTIME))
    return Run(["ls", "-laR", "share"], [
        S("stderr", r"^ls: cannot open directory 'share/Überweisungen_private': Permission denied$",
          "the unreadable directory"),
    ], command=NOBODY + ["ls", "-laR", "share"], expect_exit=exits(1))


PROCESS_SCRIPT = """
    #!/bin/bash
    sleep 300 &
    sh -c 'sleep 0 & exec sleep 301' &
    (exec -a "worker: billing queue 3" sleep 302) &
    (exec -a "nginx: worker process" sleep 303) &
    sleep 0.5
    exec "$@"
    """


@recipe("ps-aux-zombie", "ps", "listing", ["ps", "--version"], needs=("ps", "unshare"))
def _ps(root):
    write(root, "spawn.sh", PROCESS_SCRIPT, mode=0o755)
    command = ["unshare", "--pid", "--fork", "--mount-proc", "./spawn.sh", "ps", "aux"]
    probe = sh(command, root, check=False)
    if probe.returncode != 0:
        raise Skip("cannot start a private PID namespace here")
    return Run(["ps", "aux"], [
        S("stdout", r" Z +\S+ +\S+ \[sleep\] <defunct>$", "the zombie process"),
    ], command=command, expect_exit=exits(0))


@recipe("top-batch", "top", "listing", ["top", "-V"], needs=("top", "unshare"))
def _top(root):
    write(root, "spawn.sh", PROCESS_SCRIPT, mode=0o755)
    command = ["unshare", "--pid", "--fork", "--mount-proc", "./spawn.sh", "top", "-b", "-n", "1"]
    probe = sh(command, root, check=False)
    if probe.returncode != 0:
        raise Skip("cannot start a private PID namespace here")
    return Run(["top", "-b", "-n", "1"], [
        S("stdout", r"^Tasks: +\d+ total, .* 1 zombie$", "the task summary with the zombie"),
    ], command=command, expect_exit=exits(0))


def _kernel_log() -> str:
    """About 1.6 MB of a plausible kernel ring buffer with one NULL-pointer oops in it."""
    rng = random.Random(21)
    noise = [
        "usb 1-{p}: new high-speed USB device number {n} using xhci_hcd",
        "usb 1-{p}: USB disconnect, device number {n}",
        "e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx",
        ("audit: type=1400 audit({t}:{n}): apparmor=\"DENIED\" operation=\"open\" profile=\"snap.cups\" "
         "name=\"/proc/{n}/mounts\" pid={n} comm=\"cupsd\" requested_mask=\"r\" denied_mask=\"r\""),
        "EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro. Quota mode: none.",
        "IPv6: ADDRCONF(NETDEV_CHANGE): wlp2s0: link becomes ready",
        "wlp2s0: authenticate with 3c:84:6a:{p}1:22:9e",
        "wlp2s0: associated",
        "TCP: request_sock_TCP: Possible SYN flooding on port 8443. Sending cookies.  Check SNMP counters.",
        "nvme nvme0: I/O {n} QID {p} timeout, completion polled",
        "perf: interrupt took too long ({n} > {t}), lowering kernel.perf_event_max_sample_rate to {n}",
        ("[UFW BLOCK] IN=eno1 OUT= MAC=01:00:5e:00:00:fb SRC=192.168.1.{p} DST=224.0.0.251 LEN=72 "
         "TOS=0x00 PREC=0x00 TTL=255 ID={n} PROTO=UDP SPT=5353 DPT=5353 LEN=52"),
    ]
    lines, clock = [], 2.0
    oops_at = 14210
    for i in range(19500):
        clock += rng.random() * 0.9
        if i == oops_at:
            lines.extend(_oops_lines(clock))
            continue
        text = rng.choice(noise).format(p=rng.randint(1, 9), n=rng.randint(100, 99999), t=rng.randint(1000, 9999))
        lines.append(f"[{clock:12.6f}] {text}")
    return "\n".join(lines) + "\n"


def _oops_lines(clock: float) -> list[str]:
    body = [
        "BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "#PF: supervisor read access in kernel mode",
        "#PF: error_code(0x0000) - not-present page",
        "PGD 0 P4D 0 ",
        "Oops: 0000 [#1] PREEMPT SMP NOPTI",
        "CPU: 3 PID: 18342 Comm: kworker/3:2 Tainted: G           OE      6.1.0-18-amd64 #1  Debian 6.1.76-1",
        "Hardware name: LENOVO 20XW004GGE/20XW004GGE, BIOS N32ET86W (1.62 ) 01/11/2024",
        "Workqueue: events nvme_fw_act_work [nvme_core]",
        "RIP: 0010:nvme_update_ns_info+0x4c/0x3a0 [nvme_core]",
        "Code: 41 56 41 55 41 54 55 48 89 fd 53 48 89 f3 48 83 ec 10 48 8b 47 08 <48> 8b 40 08 a8 01 0f 85",
        "RSP: 0018:ffffb4c6c1d8bd40 EFLAGS: 00010246",
        "RAX: 0000000000000000 RBX: ffff9a1c4b6e2a00 RCX: 0000000000000000",
        "RDX: 0000000000000001 RSI: ffff9a1c4b6e2a00 RDI: ffff9a1c41f3b000",
        "RBP: ffff9a1c41f3b000 R08: 0000000000000000 R09: ffff9a1c40e9b0c0",
        "R10: 0000000000000000 R11: 0000000000000000 R12: ffff9a1c45d10000",
        "FS:  0000000000000000(0000) GS:ffff9a1f6f8c0000(0000) knlGS:0000000000000000",
        "CR2: 0000000000000008 CR3: 000000010b410003 CR4: 0000000000770ee0",
        "Call Trace:",
        " <TASK>",
        " ? __die+0x23/0x70",
        " ? page_fault_oops+0x17d/0x4c0",
        " ? exc_page_fault+0x7f/0x180",
        " ? asm_exc_page_fault+0x26/0x30",
        " ? nvme_update_ns_info+0x4c/0x3a0 [nvme_core]",
        " nvme_validate_ns+0x6a/0x90 [nvme_core]",
        " nvme_scan_ns_list+0x10f/0x2a0 [nvme_core]",
        " nvme_fw_act_work+0x135/0x190 [nvme_core]",
        " process_one_work+0x1c7/0x380",
        " worker_thread+0x4d/0x380",
        " kthread+0xd7/0x100",
        " ret_from_fork+0x1f/0x30",
        " </TASK>",
        "Modules linked in: nvme nvme_core snd_hda_intel iwlmvm mac80211 btusb i915 drm_buddy e1000e",
        "CR2: 0000000000000008",
        "---[ end trace 0000000000000000 ]---",
    ]
    return [f"[{clock + k * 0.000004:12.6f}] {text}" for k, text in enumerate(body)]


@recipe("cat-kernel-oops", "cat", "log", ["cat", "--version"], needs=("cat",))
def _cat_kernel(root):
    write(root, "kern.log", _kernel_log())
    return Run(["cat", "kern.log"], [
        S("stdout", r"\] BUG: kernel NULL pointer dereference, address: ", "the oops"),
        S("stdout", r"\] Oops: 0000 \[#1\] ", "the oops header"),
        S("stdout", r"\] RIP: 0010:nvme_update_ns_info\+", "where it crashed"),
        S("stdout", r"\]  nvme_validate_ns\+", "the first real frame of the call trace"),
    ], expect_exit=exits(0))


def _syslog() -> str:
    """About 600 KB of a host's syslog: web and cron chatter, one service that fails to start."""
    rng = random.Random(33)
    lines = []
    seconds = 0
    failures = {2600, 2604, 2608}
    for i in range(5200):
        seconds += rng.randint(0, 4)
        stamp = f"May 01 {10 + seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d} web-03"
        if i in failures:
            pid = 20211 + i
            lines += [f"{stamp} systemd[1]: Starting billing-worker.service - Billing queue worker...",
                      f"{stamp} billing-worker[{pid}]: Error: connect ECONNREFUSED 10.0.4.12:5432",
                      f"{stamp} billing-worker[{pid}]:     at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
                      f"{stamp} systemd[1]: billing-worker.service: Main process exited, code=exited, status=1/FAILURE",
                      f"{stamp} systemd[1]: billing-worker.service: Failed with result 'exit-code'.",
                      f"{stamp} systemd[1]: Failed to start billing-worker.service - Billing queue worker."]
            if i == 2608:
                lines.append(f"{stamp} systemd[1]: billing-worker.service: Start request repeated too quickly.")
            continue
        kind = rng.random()
        if kind < 0.6:
            ip = f"10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)}"
            path = rng.choice(["/", "/api/orders", "/api/cart", "/static/app.js", "/healthz", "/login"])
            lines.append(f"{stamp} nginx[1187]: {ip} - - \"GET {path} HTTP/1.1\" 200 {rng.randint(200, 90000)} "
                         f"\"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"")
        elif kind < 0.8:
            lines.append(f"{stamp} CRON[{rng.randint(3000, 9000)}]: (www-data) CMD (php /var/www/cron.php --queue=mail)")
        elif kind < 0.95:
            lines.append(f"{stamp} systemd[1]: Started session-{rng.randint(100, 999)}.scope - Session of User deploy.")
        else:
            lines.append(f"{stamp} kernel: [UFW BLOCK] IN=eth0 OUT= SRC=203.0.113.{rng.randint(1, 254)} "
                         f"DST=10.0.0.3 PROTO=TCP SPT={rng.randint(1024, 65000)} DPT=22")
    return "\n".join(lines) + "\n"


@recipe("tail-syslog-unit-failure", "tail", "log", ["tail", "--version"], needs=("tail",))
def _tail_syslog(root):
    write(root, "syslog", _syslog())
    return Run(["tail", "-n", "4000", "syslog"], [
        S("stdout", r"billing-worker\[\d+\]: Error: connect ECONNREFUSED 10\.0\.4\.12:5432$", "why the service failed"),
        S("stdout", r"systemd\[1\]: Failed to start billing-worker\.service", "each failed start"),
        S("stdout", r"billing-worker\.service: Start request repeated too quickly\.$", "systemd gave up"),
    ], expect_exit=exits(0))


@recipe("sqlite3-select-syntax-error", "sqlite3", "database", ["sqlite3", "-version"], needs=("sqlite3",))
def _sqlite(root):
    rng = random.Random(9)
    rows = ",".join(f"({i}, 'Kunde {i} — {rng.choice(['Köln', 'Zürich', 'Malmö', 'Łódź', 'Porto'])}', "
                    f"{rng.randint(1, 5000) / 10:.1f}, '2024-0{1 + i % 9}-{1 + i % 28:02d}')" for i in range(2500))
    schema = "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT, total REAL, placed TEXT);"
    sh(["sqlite3", "shop.db", f"{schema}INSERT INTO orders VALUES {rows};"], root)
    query = ("SELECT id, customer, total, placed FROM orders ORDER BY placed, id; "
             "SELECT customer, SUM(total) AS revenue FROM orders GROUP BY customer ORDER revenue DESC LIMIT 10;")
    return Run(["sqlite3", "-header", "-column", "shop.db", query], [
        S("stderr", r'^(Parse error|Error): .*near "revenue": syntax error$', "the syntax error"),
        S("stderr", r"(error here ---\^|\^--- error here)$", "where in the statement"),
    ], expect_exit=exits(1))


@recipe("psql-connection-refused", "psql", "database", ["psql", "--version"], needs=("psql",))
def _psql(root):
    return Run(["psql", "-h", "127.0.0.1", "-p", "55432", "-U", "app", "-d", "orders", "-c", "SELECT count(*) FROM orders"], [
        S("stderr", r'^psql: error: connection to server at "127\.0\.0\.1", port 55432 failed: Connection refused$',
          "why it failed"),
    ], env={"PGCONNECT_TIMEOUT": "3"}, expect_exit=exits(2))


@recipe("strace-f-enoent", "strace", "profiler", ["strace", "-V"], needs=("strace", "gcc"))
def _strace(root):
    write(root, "loader.c", """
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <sys/wait.h>
        #include <unistd.h>

        int main(void)
        {
            pid_t child = fork();
            if (child == 0) {
                execl("/bin/ls", "ls", "-l", "/usr/share/zoneinfo/Europe", (char *)NULL);
                _exit(127);
            }
            int status;
            waitpid(child, &status, 0);
            const char *candidates[] = {"./loader.ini", "/etc/loader/loader.ini", NULL};
            for (int i = 0; candidates[i]; i++) {
                FILE *f = fopen(candidates[i], "r");
                if (f) {
                    fclose(f);
                    return 0;
                }
            }
            fprintf(stderr, "loader: no configuration found\\n");
            return 1;
        }
        """)
    sh(["gcc", "-O0", "-o", "loader", "loader.c"], root)
    return Run(["strace", "-f", "./loader"], [
        S("stderr", r'^openat\(AT_FDCWD, "/etc/loader/loader\.ini", O_RDONLY\) = -1 ENOENT', "the missing configuration"),
        S("stderr", r"loader: no configuration found$", "the program's own error (after strace's write line)"),
        S("stderr", r"^\+\+\+ exited with 1 \+\+\+$", "the exit status"),
    ], expect_exit=exits(1))


@recipe("gcovr-coverage-table", "gcovr", "coverage", ["gcovr", "--version"], needs=("gcovr", "gcc"), apt=("gcovr",))
def _gcovr(root):
    modules = [f"mod_{i:03d}" for i in range(120)]
    for i, name in enumerate(modules):
        branches = "".join(f"    if (v == {k}) return {k * 3};\n" for k in range(i % 5 + 2))
        write(root, f"src/{name}.c", f"int {name}(int v)\n{{\n{branches}    return v;\n}}\n")
    untested = {"mod_007", "mod_064", "mod_111"}
    calls = "".join(f"    s += {m}({k});\n" for m in modules if m not in untested for k in range(2))
    write(root, "tests/run.c", "".join(f"int {m}(int v);\n" for m in modules)
          + f"int main(void)\n{{\n    int s = 0;\n{calls}    return s == -1;\n}}\n")
    sources = [f"src/{m}.c" for m in modules] + ["tests/run.c"]
    sh(["gcc", "--coverage", "-O0", "-o", "run_tests"] + sources, root)
    sh(["./run_tests"], root)
    return Run(["gcovr", "-r", "."], [
        S("stdout", r"^src/mod_(007|064|111)\.c +\d+ +0 +0%", "the untested files"),
        S("stdout", r"^TOTAL +\d+ +\d+ +\d+%$", "the total"),
    ], expect_exit=exits(0))


@recipe("seq-200000", "seq", "listing", ["seq", "--version"], needs=("seq",))
def _seq(root):
    return Run(["seq", "1", "200000"], [
        S("stdout", r"^200000$", "the last number"),
    ], expect_exit=exits(0))


@recipe("yes-head-300000", "head", "listing", ["head", "--version"], needs=("yes", "head"))
def _yes_head(root):
    # The agent typed `yes | head -n 300000`; the view is of head's output, so argv is head's.
    # Every line is the same `y`: there is nothing to find, only the size to bound, so no signals.
    return Run(["head", "-n", "300000"], [], command="yes | head -n 300000", expect_exit=exits(0))


@recipe("tar-tvf-truncated", "tar", "archive", ["tar", "--version"], needs=("tar", "gzip"))
def _tar(root):
    _tree(root, "backup/home", 200, 7000, 8)
    sh(["tar", "--mtime=2024-05-01 10:00:00", "--owner=deploy:1001", "--group=deploy:1001", "--sort=name",
        "-czf", "backup-2024-05-01.tar.gz", "-C", "backup", "home"], root)
    path = os.path.join(root, "backup-2024-05-01.tar.gz")
    with open(path, "r+b") as handle:
        handle.truncate(int(os.path.getsize(path) * 0.62))
    shutil.rmtree(os.path.join(root, "backup"))
    return Run(["tar", "-tvzf", "backup-2024-05-01.tar.gz"], [
        S("stderr", r"^gzip: stdin: unexpected end of file$", "the archive is cut short"),
        S("stderr", r"^tar: Unexpected EOF in archive$", "where tar stopped"),
        S("stderr", r"^tar: Error is not recoverable: exiting now$", "the result"),
    ], expect_exit=exits(2))


@recipe("apt-get-install-simulate", "apt-get", "package-manager", ["apt-get", "--version"], needs=("apt-get",))
def _apt_simulate(root):
    packages = ["texlive-latex-extra", "libreoffice-writer", "gimp", "inkscape"]
    return Run(["apt-get", "install", "-s"] + packages, [
        S("stdout", r"^\d+ upgraded, \d+ newly installed, \d+ to remove and \d+ not upgraded\.$", "the summary"),
    ], expect_exit=exits(0))


@recipe("dpkg-l-missing", "dpkg", "package-manager", ["dpkg", "--version"], needs=("dpkg",))
def _dpkg(root):
    return Run(["dpkg", "-l", "lib*", "frobnicate-utils"], [
        S("stderr", r"^dpkg-query: no packages found matching frobnicate-utils$", "the missing package"),
    ], env={"COLUMNS": "160"}, expect_exit=exits(1))


@recipe("docker-build-failure", "docker", "container", ["docker", "--version"], needs=("docker",))
def _docker(root):
    if sh(["docker", "info"], root, check=False).returncode != 0:
        raise Skip("the docker daemon is not reachable")
    write(root, "Dockerfile", """
        FROM debian:bookworm-slim
        RUN apt-get update && apt-get install -y --no-install-recommends frobnicate-utils
        COPY app /opt/app
        CMD ["/opt/app/run"]
        """)
    return Run(["docker", "build", "--progress=plain", "-t", "app:dev", "."], [
        S("stderr", r"E: Unable to locate package frobnicate-utils", "why the step failed"),
        S("stderr", r"^ERROR: ", "the build error"),
    ], expect_exit=failing)


if __name__ == "__main__":
    sys.exit(main())
