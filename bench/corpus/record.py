"""Re-record the pruning corpus by running real commands in a scratch directory.

Each case stores the exact stdout and stderr bytes and the exit status of one
real command run on this machine; `manifest.json` lists the argv used. Outputs
are capped at 200 KB per stream so the corpus stays small. Cases whose tool is
not installed are skipped. Run: `python bench/corpus/record.py` (from the repo root).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_STREAM = 200 * 1024
PY = sys.executable


def _write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(textwrap.dedent(text))


def _pytest_project(root):
    for i in range(40):
        body = "\n".join(
            f"def test_case_{i}_{j}():\n    assert {j} * 2 == {j} + {j}\n" for j in range(12)
        )
        _write(root, f"tests/test_mod_{i:02d}.py", body)
    _write(root, "tests/test_broken.py", """
        import json

        def parse(text):
            return json.loads(text)

        def test_parse_ok():
            assert parse('{"a": 1}') == {"a": 1}

        def test_parse_fails():
            assert parse('{"a": 1}') == {"a": 2}

        def test_raises():
            parse("{not json")

        def test_zero_division():
            values = [1, 2, 0]
            assert [10 / v for v in values]
        """)


def _unittest_project(root):
    cases = "".join(f"    def test_{i}(self):\n        self.assertEqual({i} + 1, {i + 1 if i % 29 else i + 2})\n" for i in range(90))
    _write(root, "tests/test_units.py", "import unittest\n\nclass Units(unittest.TestCase):\n" + cases)
    _write(root, "tests/test_errors.py", """
        import unittest

        class Errors(unittest.TestCase):
            def test_missing_key(self):
                self.assertTrue({}["absent"])
        """)


def _git_repo(root):
    env = dict(os.environ, GIT_AUTHOR_NAME="Dev One", GIT_AUTHOR_EMAIL="dev@example.org",
               GIT_COMMITTER_NAME="Dev One", GIT_COMMITTER_EMAIL="dev@example.org")
    run = lambda *a: subprocess.run(a, cwd=root, env=env, check=True, capture_output=True)
    run("git", "init", "-q", "-b", "main")
    for i in range(220):
        name = f"src/module_{i % 17:02d}.py"
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"def feature_{i}(value):\n    return value * {i} + {i % 7}\n\n")
        run("git", "add", name)
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"2024-01-{1 + i % 28:02d}T10:{i % 60:02d}:00Z"
        run("git", "commit", "-q", "-m", f"Add feature {i} to module {i % 17}\n\nKeeps the {i}th case working.")
    for i in range(17):
        path = os.path.join(root, f"src/module_{i:02d}.py")
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text.replace("return value *", "return int(value) *"))
    with open(os.path.join(root, "NEW.txt"), "w") as handle:
        handle.write("untracked\n")


def _c_project(root):
    _write(root, "broken.c", """
        #include <stdio.h>
        struct point { int x; int y; };
        static int area(struct point p) { return p.x * p.z; }
        int main(void) {
            int unused;
            char *s = 42;
            printf("%d\\n", area((struct point){1, 2}), s);
            return undefined_function(3);
        }
        """)
    _write(root, "Makefile", "all:\n\t$(CC) -Wall -Wextra -c broken.c -o broken.o\n")


def _cargo_project(root):
    _write(root, "Cargo.toml", """
        [package]
        name = "demo"
        version = "0.1.0"
        edition = "2021"
        """)
    _write(root, "src/lib.rs", """
        pub fn add(a: i32, b: i32) -> i32 { a + b }
        #[cfg(test)]
        mod tests {
            use super::*;
        """ + "".join(f"    #[test] fn adds_{i}() {{ assert_eq!(add({i}, 1), {i + 1}); }}\n" for i in range(60)) + """
            #[test] fn broken() { assert_eq!(add(2, 2), 5, "arithmetic drifted"); }
        }
        """)


def _cargo_broken(root):
    _write(root, "Cargo.toml", '[package]\nname = "broken"\nversion = "0.1.0"\nedition = "2021"\n')
    _write(root, "src/main.rs", """
        fn main() {
            let value: u32 = "text";
            let unused = 3;
            println!("{}", missing_name);
        }
        """)


def _npm_project(root):
    for i in range(30):
        _write(root, f"deps/dep{i}/package.json", json.dumps({"name": f"dep{i}", "version": f"1.0.{i}"}))
    pkg = {"name": "demo", "version": "1.0.0",
           "dependencies": {f"dep{i}": f"file:deps/dep{i}" for i in range(30)},
           "scripts": {"test": "node test.js"}}
    _write(root, "package.json", json.dumps(pkg, indent=2))
    _write(root, "test.js", """
        const assert = require('node:assert');
        let passed = 0, failed = 0;
        for (let i = 0; i < 80; i++) {
          try { assert.strictEqual(i % 37 === 36 ? i + 1 : i, i); passed++; console.log(`ok ${i} case ${i}`); }
          catch (e) { failed++; console.log(`not ok ${i} case ${i}`); console.error(e.stack); }
        }
        console.log(`# pass ${passed}\\n# fail ${failed}`);
        process.exit(failed ? 1 : 0);
        """)


def _lint_project(root):
    for i in range(25):
        _write(root, f"pkg/m{i:02d}.py", f"import os, sys\nimport json\n\ndef f{i}(x):\n    y = 1\n    return x == None\n")


def _pip_project(root):
    _write(root, "pyproject.toml", """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "corpus-demo"
        version = "0.1.0"
        """)
    _write(root, "corpus_demo/__init__.py", "VALUE = 1\n")


CASES = [
    ("pytest-failures", _pytest_project, [PY, "-m", "pytest", "-p", "no:cacheprovider", "tests"]),
    ("pytest-verbose", _pytest_project, [PY, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"]),
    ("unittest-failures", _unittest_project, [PY, "-m", "unittest", "discover", "-s", "tests", "-p", "test_*.py", "-v"]),
    ("pip-install", _pip_project, [PY, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps", "--target", "out", "."]),
    ("git-log", _git_repo, ["git", "log", "-n", "150"]),
    ("git-log-stat", _git_repo, ["git", "log", "--stat", "-n", "60"]),
    ("git-diff", _git_repo, ["git", "diff"]),
    ("git-show", _git_repo, ["git", "show", "HEAD~3"]),
    ("git-status", _git_repo, ["git", "status"]),
    ("gcc-errors", _c_project, ["gcc", "-Wall", "-Wextra", "-c", "broken.c", "-o", "broken.o"]),
    ("make-errors", _c_project, ["make"]),
    ("cargo-test", _cargo_project, ["cargo", "test", "--offline"]),
    ("cargo-build-errors", _cargo_broken, ["cargo", "build", "--offline"]),
    ("npm-install", _npm_project, ["npm", "install", "--no-audit", "--no-fund", "--loglevel", "verbose"]),
    ("npm-test", _npm_project, ["npm", "test"]),
    ("ruff-check", _lint_project, ["ruff", "check", "--no-cache", "--output-format", "full", "pkg"]),
    ("find-tree", _git_repo, ["find", "."]),
    ("ls-recursive", _git_repo, ["ls", "-laR", "src", ".git/objects"]),
    ("grep-results", _git_repo, ["grep", "-rn", "return", "src"]),
]


def main() -> int:
    manifest = []
    for name, setup, argv in CASES:
        tool = argv[0]
        if shutil.which(tool) is None and not os.path.exists(tool):
            print(f"skip {name}: {tool} not installed")
            continue
        with tempfile.TemporaryDirectory() as root:
            setup(root)
            if name == "npm-test":
                subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=root, capture_output=True)
            env = dict(os.environ, NO_COLOR="1", TERM="dumb", CARGO_TERM_COLOR="never")
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True)
        for stream in ("stdout", "stderr"):
            data = getattr(done, stream)[:MAX_STREAM]
            with open(os.path.join(HERE, f"{name}.{stream}"), "wb") as handle:
                handle.write(data)
        shown = [os.path.basename(argv[0]) if argv[0] == PY else argv[0]] + argv[1:]
        if argv[0] == PY:
            shown[0] = "python"
        manifest.append({"name": name, "argv": shown, "exit_code": done.returncode})
        print(f"{name}: exit {done.returncode}, {len(done.stdout)} + {len(done.stderr)} bytes")
    with open(os.path.join(HERE, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
