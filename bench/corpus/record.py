"""Re-record the pruning corpus by running real commands on small projects in a scratch directory.

Each case stores the exact stdout and stderr bytes and the exit status of one real command run on
this machine, and the signals: regexes for the lines a reader must see to act on that output (the
error with its `file:line`, the innermost frame and exception line, the test summary, each commit
subject), written from the output's meaning rather than from any reducer. `bench/corpus_cases.py`
loads them.

Storage: a stream over 200 KB is written zstandard-compressed as `NAME.STREAM.zst` (level 19; the
large logs are repetitive and shrink to a few KB) and the loader decompresses it; smaller streams
are stored raw. `manifest.json` lists the original cases, which the shell-reducer tests also read
raw; `manifest-added.json` lists the cases added for salience measurement.

Tools: a case whose tool is not installed is skipped and keeps its previous recording. The
JavaScript tools (tsc, eslint, jest, vitest, mocha) are looked up in `$CORPUS_NODE_MODULES`, a
`node_modules` directory installed outside the repository, e.g.
`npm install --prefix /tmp/corpus-js typescript eslint jest vitest mocha` and
`CORPUS_NODE_MODULES=/tmp/corpus-js/node_modules`; each project links it in.

Run from the repo root: `python bench/corpus/record.py [NAME ...]` re-records all or the named
cases; `--manifest-only` rewrites the manifests (signals) without running anything. The signals of
every re-recorded case are checked against its new bytes and a mismatch is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field, replace

HERE = os.path.dirname(os.path.abspath(__file__))
COMPRESS_OVER = 200 * 1024
PY = sys.executable
NODE_MODULES = os.environ.get("CORPUS_NODE_MODULES", "")
ORIGINAL = "manifest.json"
ADDED = "manifest-added.json"


def S(stream: str, pattern: str, why: str) -> dict:
    """One signal: lines of `stream` matching `pattern` are needed, for the reason `why`."""
    return {"stream": stream, "pattern": pattern, "why": why}


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


# ---- projects added for salience measurement -------------------------------------------------

_C_TEMPLATE = """\
#include <stdio.h>
#include <string.h>

struct point {{ int x; int z; }};

static int helper_{n}(int *values, unsigned count, int flag) {{
    int total = 0;
    int spare;
    for (int i = 0; i < count; i++)
        total += values[i];
    return total;
}}

int api_{n}(const char *name, int mode) {{
    int values[3] = {{1, 2, 3}};
    struct point p = {{1, 2}};
    if (strlen(name) == -1)
        return 0;
    {body}
}}
"""
_C_BODIES = {
    5: "return helper_05(values, 3, 0) + missing_total;",
    6: "return helper_06(values, 3, 0) + p.y;",
    7: "return helper_07(values, 3);",
}


def _makefile(root, flags, count):
    """A Makefile building f00.c .. f{count-1}.c and main.c into `app`, one object per rule."""
    objs = " ".join(f"f{n:02d}.o" for n in range(count)) + " main.o"
    _write(root, "Makefile", f"CFLAGS = {flags}\nOBJS = {objs}\n\nall: app\n\napp: $(OBJS)\n"
           "\t$(CC) -o $@ $(OBJS)\n\n%.o: %.c\n\t$(CC) $(CFLAGS) -c $< -o $@\n")


def _c_multi(root):
    """Twelve C files full of warnings; three of them (in the middle) also have one error each."""
    for n in range(12):
        body = _C_BODIES.get(n) or f"return helper_{n:02d}(values, 3, 0) + p.x;"
        _write(root, f"f{n:02d}.c", _C_TEMPLATE.format(n=f"{n:02d}", body=body))
    _write(root, "main.c", "int api_00(const char *name, int mode);\nint main(void) { return api_00(\"x\", 0); }\n")
    _makefile(root, "-Wall -Wextra", 12)


def _c_clean(root):
    for n in range(6):
        _write(root, f"f{n:02d}.c", f"int api_{n:02d}(int v) {{ return v * {n + 1}; }}\n")
    _write(root, "main.c", "int api_00(int v);\nint main(void) { return api_00(0); }\n")
    _makefile(root, "-Wall -Wextra -O1", 6)


def _c_latin1(root):
    """A C file saved in Latin-1: the compiler echoes its source lines with those raw bytes."""
    text = ("/* Caf\xe9 r\xe9sum\xe9 \xa9 2024 */\n#include <stdio.h>\n"
            "static const char *greeting = \"Gr\xfc\xdfe aus M\xfcnchen\";\n"
            "int show(void) {\n    double ratio = greeting * 2.0; /* \xe9chec */\n"
            "    printf(\"%s\\n\", greeting);\n    return (int)ratio;\n}\n")
    with open(os.path.join(root, "legacy.c"), "wb") as handle:
        handle.write(text.encode("latin-1"))


def _cmake_project(root, broken=True, configure_error=False):
    need = "find_package(LibFrobnicate 2.1 REQUIRED)\n" if configure_error else ""
    _write(root, "CMakeLists.txt", "cmake_minimum_required(VERSION 3.10)\nproject(demo C)\n" + need +
           "add_executable(app main.c parse.c render.c store.c net.c)\n"
           "target_compile_options(app PRIVATE -Wall -Wextra)\n")
    _write(root, "main.c", "int parse(const char *s);\nint main(void) { return parse(\"1\"); }\n")
    _write(root, "render.c", "int render(int unused) { return 0; }\n")
    _write(root, "store.c", "int store(int *v, unsigned n) { int s = 0; for (int i = 0; i < n; i++) s += v[i]; return s; }\n")
    _write(root, "net.c", "int net(void) { return 1; }\n")
    if broken:
        _write(root, "parse.c", "#include <stdlib.h>\nint parse(const char *s) {\n"
               "    struct entry e = {0};\n    return atoi(s) + e.count;\n}\n")
    else:
        _write(root, "parse.c", "#include <stdlib.h>\nint parse(const char *s) { return atoi(s); }\n")


def _cmake_configure(root, broken=True):
    _cmake_project(root, broken=broken)
    subprocess.run(["cmake", "-G", "Ninja", "-S", ".", "-B", "build"], cwd=root, capture_output=True, check=True)


def _cargo_panics(root):
    _write(root, "Cargo.toml", '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n')
    tests = [f"    #[test] fn balance_{i}() {{ assert_eq!(balance(&[{i}, 1]), {i + 1}); }}\n" for i in range(80)]
    _write(root, "src/lib.rs", """
        pub fn balance(entries: &[i64]) -> i64 { entries.iter().sum() }
        pub fn nth_entry(entries: &[i64], n: usize) -> i64 { entries[n] }
        #[cfg(test)]
        mod tests {
            use super::*;
        """ + "".join(tests[:40]) + """
            #[test] fn rounding() { assert_eq!(balance(&[10, -3]), 8, "ledger rounding"); }
            #[test] fn reads_past_end() { assert_eq!(nth_entry(&[1, 2, 3], 5), 0); }
        """ + "".join(tests[40:]) + "}\n")


def _cargo_clean(root):
    _write(root, "Cargo.toml", '[package]\nname = "clean"\nversion = "0.1.0"\nedition = "2021"\n')
    _write(root, "src/main.rs", 'fn main() { println!("{}", 2 + 2); }\n')


def _rustc_errors(root):
    _write(root, "main.rs", """
        use std::collections::HashMap;

        fn longest(words: &Vec<String>) -> &String {
            let mut best = &words[0];
            for w in words { if w.len() > best.len() { best = w; } }
            best
        }

        fn main() {
            let unused_map: HashMap<u8, u8> = HashMap::new();
            let mut words = vec![String::from("a"), String::from("bb")];
            let first = &words[0];
            words.push(String::from("ccc"));
            println!("{} {}", first, longest(&words));
        }
        """)


def _go_env_project(root, files):
    _write(root, "go.mod", "module example.com/demo\n\ngo 1.19\n")
    for rel, text in files.items():
        _write(root, rel, text)


def _go_broken(root):
    _go_env_project(root, {
        "main.go": 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/demo/store"\n)\n\n'
                   'func main() { fmt.Println(store.Open("db")) }\n',
        "store/store.go": 'package store\n\nimport "os"\n\nfunc Open(path string) int {\n'
                          '\tvar size int = "large"\n\treturn size + Missing(path)\n}\n',
        "util/util.go": "package util\n\nfunc Twice(v int) int { return v * 2 }\n",
    })


def _go_tests(root, fail=True):
    cases = "".join(f'\t\t{{"{i}", {i + 1 if (fail and i == 37) else i}}},\n' for i in range(70))
    _go_env_project(root, {
        "parse.go": 'package demo\n\nimport "strconv"\n\nfunc Parse(s string) int { v, _ := strconv.Atoi(s); return v }\n',
        "parse_test.go": 'package demo\n\nimport "testing"\n\nfunc TestParse(t *testing.T) {\n'
                         '\tcases := []struct {\n\t\tin   string\n\t\twant int\n\t}{\n' + cases + '\t}\n'
                         '\tfor _, c := range cases {\n\t\tt.Run("case_"+c.in, func(t *testing.T) {\n'
                         '\t\t\tif got := Parse(c.in); got != c.want {\n'
                         '\t\t\t\tt.Errorf("Parse(%q) = %d, want %d", c.in, got, c.want)\n'
                         '\t\t\t}\n\t\t})\n\t}\n}\n',
    })


def _go_panic(root):
    _go_env_project(root, {"cmd/app/main.go": """\
package main

import "log"

func pick(items []string, i int) string {
	return items[i]
}

func main() {
	items := []string{"alpha", "beta", "gamma"}
	for i := 0; i < 40; i++ {
		log.Printf("worker %d: processed batch of %d items", i, len(items))
	}
	log.Printf("selected %s", pick(items, 5))
}
"""})


def _node_link(root):
    if NODE_MODULES:
        os.symlink(NODE_MODULES, os.path.join(root, "node_modules"))


def _ts_project(root):
    _node_link(root)
    _write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "target": "es2020",
           "module": "commonjs", "noEmit": True}, "include": ["src"]}))
    for i in range(10):
        _write(root, f"src/mod{i}.ts", f"export function f{i}(v: number): number {{\n  return v * {i};\n}}\n")
    _write(root, "src/config.ts", """\
        export interface Config { port: number; host: string }
        export function load(raw: Record<string, string>): Config {
          const port: number = raw["port"];
          return { port, host: raw.host, debug: true };
        }
        """)
    _write(root, "src/server.ts", """\
        import { load } from "./config";
        export function start() {
          const cfg = load({ port: "80" });
          return cfg.hostname.toUpperCase();
        }
        """)


def _eslint_project(root):
    _node_link(root)
    _write(root, "eslint.config.js", """\
        module.exports = [{
          files: ["src/**/*.js"],
          languageOptions: { ecmaVersion: 2022, sourceType: "commonjs",
                             globals: { require: "readonly", module: "writable", console: "readonly" } },
          rules: { "no-unused-vars": "error", "no-undef": "error", "eqeqeq": "warn", "no-console": "warn",
                   "prefer-const": "warn" },
        }];
        """)
    for i in range(14):
        _write(root, f"src/view{i:02d}.js", f"""\
            function render{i}(items) {{
              let count = items.length;
              console.log("rendering", count);
              if (count == 0) console.log("empty");
              return count;
            }}
            module.exports = {{ render{i} }};
            """)
    _write(root, "src/handler.js", """\
        function handle(req) {
          const unusedToken = req.headers.token;
          return respond(req.body);
        }
        module.exports = { handle };
        """)


def _js_tests(root, style):
    """Five test files of passing cases plus one failing parse test, for jest, vitest or mocha."""
    _node_link(root)
    _write(root, "package.json", json.dumps({"name": "jsdemo", "version": "1.0.0"}))
    _write(root, "src/parse.js", "function parse(s) { return Math.abs(parseInt(s, 10)); }\nmodule.exports = { parse };\n")
    head = {"jest": "", "vitest": "import { describe, it, expect } from 'vitest';\n",
            "mocha": "const assert = require('node:assert');\n"}[style]
    ext = "test.mjs" if style == "vitest" else "test.js"
    imp = ("import { parse } from '../src/parse.js';\n" if style == "vitest"
           else "const { parse } = require('../src/parse.js');\n")
    check = (lambda got, want: f"assert.strictEqual({got}, {want})") if style == "mocha" else \
        (lambda got, want: f"expect({got}).toBe({want})")
    for f in range(5):
        body = ""
        for i in range(10):
            value = f * 10 + i
            call = 'parse("%d")' % value
            body += f"  it('parses {value}', () => {{ {check(call, value)}; }});\n"
        if f == 2:
            body += "  it('keeps the sign of negatives', () => { " + check('parse("-3")', -3) + "; });\n"
        _write(root, f"test/group{f}.{ext}", head + imp + f"describe('group {f}', () => {{\n" + body + "});\n")


def _node_tap(root):
    _write(root, "src/slug.js", "exports.slug = (s) => s.toLowerCase().replace(/ /g, '-');\n")
    tests = [f"test('slug {i}', () => assert.strictEqual(slug('Item {i}'), 'item-{i}'));\n" for i in range(45)]
    _write(root, "test/slug.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\n"
           "const { slug } = require('../src/slug.js');\n" + "".join(tests[:22])
           + "test('slug trims spaces', () => assert.strictEqual(slug('  Big Item '), 'big-item'));\n"
           + "".join(tests[22:]))


def _node_uncaught(root):
    _write(root, "config.js", """\
        function loadConfig(raw) {
          const cfg = JSON.parse(raw);
          return cfg.server.port;
        }
        module.exports = { loadConfig };
        """)
    _write(root, "server.js", """\
        const { loadConfig } = require('./config');
        for (let i = 0; i < 30; i++) console.log(`[boot] step ${i}: ok`);
        const port = loadConfig('{"listen": 8080}');
        console.log('listening on', port);
        """)


def _java_project(root, broken=True):
    files = {
        "Store.java": "package app;\nimport java.util.*;\npublic class Store {\n"
                      "    private List items = new ArrayList();\n"
                      "    public void add(String s) { items.add(s); }\n"
                      "    public int size() { return items.size(); }\n}\n",
        "Config.java": "package app;\npublic class Config {\n    public static int port(String raw) {\n"
                       "        return Integer.parseInt(raw.trim());\n    }\n}\n",
        "Main.java": "package app;\npublic class Main {\n"
                     "    static int load(String raw) {\n        try {\n            return Config.port(raw);\n"
                     "        } catch (NumberFormatException e) {\n"
                     "            throw new IllegalStateException(\"could not load config\", e);\n        }\n    }\n"
                     "    public static void main(String[] args) {\n"
                     "        for (int i = 0; i < 25; i++) System.out.println(\"INFO boot step \" + i);\n"
                     "        Store s = new Store();\n        s.add(\"x\");\n"
                     "        System.out.println(\"port=\" + load(\"eighty\"));\n    }\n}\n",
    }
    for i in range(5):
        files[f"Util{i}.java"] = (f"package app;\nimport java.util.*;\npublic class Util{i} {{\n"
                                  f"    public static List names() {{ List l = new ArrayList(); l.add(\"n{i}\"); return l; }}\n}}\n")
    if broken:
        files["Report.java"] = ("package app;\npublic class Report {\n    public String title(int n) {\n"
                                "        String count = n;\n        return heading + count;\n    }\n"
                                "    public int total() {\n        int sum = 0;\n    }\n}\n")
    for name, text in files.items():
        _write(root, f"src/app/{name}", text)


def _java_run(root):
    _java_project(root, broken=False)
    sources = sorted(os.path.join("src/app", n) for n in os.listdir(os.path.join(root, "src/app")))
    subprocess.run(["javac", "-d", "out", *sources], cwd=root, capture_output=True, check=True)


def _gradle_project(root):
    """The Java sources with compile errors, built by Gradle's java plugin (no dependencies)."""
    _java_project(root)
    os.rename(os.path.join(root, "src", "app"), os.path.join(root, "src", "app_tmp"))
    os.makedirs(os.path.join(root, "src", "main", "java"))
    os.rename(os.path.join(root, "src", "app_tmp"), os.path.join(root, "src", "main", "java", "app"))
    _write(root, "build.gradle", "apply plugin: 'java'\ncompileJava.options.compilerArgs << '-Xlint:all'\n")
    _write(root, "settings.gradle", "rootProject.name = 'demo'\n")


def _maven_project(root):
    _write(root, "pom.xml", """\
        <project xmlns="http://maven.apache.org/POM/4.0.0">
          <modelVersion>4.0.0</modelVersion>
          <groupId>org.example</groupId><artifactId>demo</artifactId><version>1.0</version>
          <properties><maven.compiler.release>17</maven.compiler.release></properties>
        </project>
        """)
    _write(root, "src/main/java/org/example/App.java",
           "package org.example;\npublic class App { public static void main(String[] a) {} }\n")


def _pytest_prints(root):
    """400 tests that print as they go; two fail, in the middle of the run."""
    _write(root, "tests/helpers.py", """
        def normalise(record):
            return {key.lower(): value for key, value in record.items()}

        def price(order):
            return order["qty"] * order["unit_price"]
        """)
    for i in range(20):
        body = "from helpers import normalise, price\n\n" + "".join(
            f"def test_case_{i}_{j}():\n    print('checking record {i}-{j} with payload', {{'id': {j}}})\n"
            f"    assert normalise({{'ID': {j}}}) == {{'id': {j}}}\n\n" for j in range(20))
        if i == 7:
            body += ("def test_totals():\n    print('computing totals for 3 orders')\n"
                     "    orders = [{'qty': 2, 'unit_price': 5}, {'qty': 1, 'unit_price': 7}]\n"
                     "    assert {'total': sum(price(o) for o in orders), 'count': 2} == {'total': 18, 'count': 2}\n\n")
        if i == 13:
            body += ("def test_missing_price():\n    print('pricing an order without unit price')\n"
                     "    assert price({'qty': 3, 'unit': 4}) == 12\n\n")
        _write(root, f"tests/test_batch_{i:02d}.py", body)
    _write(root, "tests/conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n")


def _pytest_chained(root):
    _write(root, "settings.py", """
        import json

        class ConfigError(Exception):
            pass

        def read(text):
            data = json.loads(text)
            try:
                return int(data["timeout"])
            except KeyError as exc:
                raise ConfigError("timeout missing from settings") from exc
        """)
    for i in range(6):
        _write(root, f"tests/test_misc_{i}.py", "".join(f"def test_{i}_{j}():\n    assert {j} >= 0\n" for j in range(15)))
    _write(root, "tests/test_settings.py", """
        import settings

        def test_reads_timeout():
            assert settings.read('{"timeout": "5"}') == 5

        def test_missing_timeout():
            assert settings.read('{"retries": 3}') == 30
        """)
    _write(root, "tests/conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n")


def _pytest_green(root):
    for i in range(15):
        _write(root, f"tests/test_ok_{i:02d}.py", "".join(f"def test_{i}_{j}():\n    assert {j} + 0 == {j}\n" for j in range(20)))


def _python_app(root):
    _write(root, "app.py", """
        import logging
        import sys

        logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        log = logging.getLogger("ingest")

        def load(settings):
            try:
                return settings["database"]["url"]
            except KeyError as exc:
                raise RuntimeError("database settings incomplete") from exc

        def main():
            for i in range(150):
                log.info("processed chunk %d (%d rows)", i, 1000 + i)
            log.warning("falling back to defaults for 'cache'")
            url = load({"cache": {"size": 10}})
            log.info("connected to %s", url)

        main()
        """)


def _pipeline(root):
    """A batch job that logs every record, logs one caught exception mid-run and finishes."""
    _write(root, "pipeline.py", """
        import logging
        import sys

        logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        log = logging.getLogger("pipeline")

        def convert(record):
            return {"id": record["id"], "amount": round(float(record["amount"]) * 1.2, 2)}

        def main():
            failed = 0
            for i in range(22000):
                record = {"id": i, "amount": "n/a" if i == 11061 else str(i % 97)}
                try:
                    out = convert(record)
                except ValueError:
                    failed += 1
                    log.exception("record %d could not be converted, skipped", i)
                    continue
                log.info("record %d converted: amount=%s currency=EUR batch=%d", i, out["amount"], i // 500)
            log.info("done: %d records, %d failed", 22000, failed)

        main()
        """)


def _app_log(root, size=1_300_000):
    """A service log of `size` bytes with one ERROR line in the middle; regular so it compresses well."""
    lines, total, error_at = [], 0, size // 2
    endpoints = ["/api/orders", "/api/users", "/health", "/api/cart", "/static/app.js"]
    n = 0
    while total < size:
        n += 1
        stamp = f"2024-03-11T10:{(n // 600) % 60:02d}:{(n // 10) % 60:02d}.{n % 1000:03d}Z"
        if error_at is not None and total >= error_at:
            line = (f"{stamp} ERROR [worker-3] order-service: payment capture failed for order 88412: "
                    f"upstream timeout after 30000 ms (gateway=stripe-eu, attempt=3)")
            error_at = None
        else:
            line = (f"{stamp} INFO  [worker-{n % 7}] http: {('GET', 'POST', 'GET')[n % 3]} {endpoints[n % 5]} "
                    f"200 {(3, 4, 7, 12)[n % 4]}ms bytes={(512, 1024, 2048, 8192, 640, 300)[n % 6]}")
        lines.append(line)
        total += len(line) + 1
    _write(root, "app.log", "\n".join(lines) + "\n")


def _fatal_log(root):
    rng = random.Random(2)
    lines = []
    for n in range(3000):
        stamp = f"2024-03-12 04:{(n // 60) % 60:02d}:{n % 60:02d}"
        if n == 2210:
            lines.append(f"{stamp} CRITICAL db.pool: connection pool exhausted (64/64 in use, 212 waiting)")
        elif n == 2960:
            lines.append(f"{stamp} FATAL main: shutting down after 3 consecutive health check failures")
        elif n % 97 == 5:
            lines.append(f"{stamp} WARN  db.pool: slow checkout {rng.randrange(200, 900)}ms")
        else:
            lines.append(f"{stamp} INFO  scheduler: job {rng.randrange(10_000)} finished in {rng.randrange(5, 400)}ms")
    _write(root, "service.log", "\n".join(lines) + "\n")


def _latin1_tree(root):
    """Legacy notes saved in Latin-1 (non-UTF-8 bytes), one TODO per file among plain lines."""
    for i in range(8):
        rows = [f"Zeile {j}: Stra\xdfe {j}, M\xfcller & S\xf6hne" for j in range(20)]
        rows.insert(9 + i, f"TODO({i}): Pr\xfcfung der Geb\xfchren f\xfcr Kunde {i} \xa7 4")
        with open(os.path.join(root, f"notes_{i}.txt"), "wb") as handle:
            handle.write(("\n".join(rows) + "\n").encode("latin-1"))


def _git_small(root):
    env = dict(os.environ, GIT_AUTHOR_NAME="Dev Two", GIT_AUTHOR_EMAIL="two@example.org",
               GIT_COMMITTER_NAME="Dev Two", GIT_COMMITTER_EMAIL="two@example.org")
    run = lambda *a: subprocess.run(a, cwd=root, env=env, check=True, capture_output=True)
    run("git", "init", "-q", "-b", "main")
    subjects = ["Create the order model", "Validate quantities before saving", "Add price rounding helper",
                "Fix off-by-one in pagination", "Cache product lookups", "Log slow queries",
                "Rename cart service to basket", "Drop the legacy CSV exporter", "Retry payment capture once",
                "Guard against empty baskets", "Document the refund flow", "Speed up order listing",
                "Reject negative discounts", "Move settings into one module", "Bump the schema version"]
    for i, subject in enumerate(subjects):
        for k in range(14):
            if k == i % 14 or i == 14:
                with open(os.path.join(root, f"file_{k:02d}.py"), "a", encoding="utf-8") as handle:
                    handle.write(f"VALUE_{i}_{k} = {i * k}\n" + "".join(f"# note {i}.{k}.{r}\n" for r in range(6)))
        run("git", "add", "-A")
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"2024-02-{1 + i:02d}T09:00:00Z"
        run("git", "commit", "-q", "-m", f"{subject}\n\nPart of the order pipeline work, step {i}.")
    for k in range(14):
        with open(os.path.join(root, f"file_{k:02d}.py"), "a", encoding="utf-8") as handle:
            handle.write(f"EXTRA_{k} = {k}\n")


def _two_trees(root):
    for side in ("old", "new"):
        for i in range(10):
            lines = [f"key_{j} = {j}" for j in range(30)]
            if side == "new" and i in (2, 6):
                lines[15] = f"key_15 = {150 + i}"
            _write(root, f"{side}/conf_{i}.ini", "\n".join(lines) + "\n")
    _write(root, "new/extra.ini", "added = 1\n")
    os.remove(os.path.join(root, "new/conf_9.ini"))


def _py_tree(root):
    for i in range(12):
        _write(root, f"src/pkg_{i % 3}/mod_{i}.py", "x = 1\n")


def _npm_broken(root):
    """A package.json with a stray trailing comma, as left by a hand edit."""
    _write(root, "package.json", '{\n  "name": "brokendeps",\n  "version": "1.0.0",\n'
           '  "dependencies": {\n    "left-pad-local": "file:deps/left-pad-local",\n  }\n}\n')
    _write(root, "deps/left-pad-local/package.json", json.dumps({"name": "left-pad-local", "version": "1.0.0"}))


def _sqlite_project(root):
    _write(root, "migrate.sql", """\
        CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE);
        INSERT INTO users (email) VALUES ('a@example.org');
        INSERT INTO users (email) VALUES ('b@example.org');
        CREATE INDEX users_email ON users (email);
        INSERT INTO orders (user_id, total) VALUES (1, 20);
        SELECT count(*) FROM users;
        """)


# ---- signals: the lines a reader needs, written from what each output means -------------------

#: Original cases.
PYTEST_FAILURES = (
        S('stdout', r"^E\s+\S", 'assertion and exception detail'),
        S('stdout', r"^>\s", 'the failing statement'),
        S('stdout', r"^\S+\.py:\d+: \w+$", 'file:line of each raised exception'),
        S('stdout', r"^tests/\S+\.py:\d+: ", 'file:line in the test that failed'),
        S('stdout', r"^FAILED tests/", 'which tests failed'),
        S('stdout', r"^=+ \d+ failed, \d+ passed", 'test summary'),
)
BROKEN_C_ERROR = (
        S('stderr', r"^broken\.c:\d+:\d+: error: ", 'compiler error with file:line'),
        S('stderr', r"^\s+\d+ \| .*p\.z", 'source line of the error'),
)
LEGACY = {
    "pytest-failures": PYTEST_FAILURES,
    "pytest-verbose": PYTEST_FAILURES + (
        S('stdout', r"::\w+ FAILED\b", 'which tests failed, in progress order'),
    ),
    "unittest-failures": (
        S('stderr', r"^(ERROR|FAIL): test_", 'which tests failed or errored'),
        S('stderr', r'^  File ".*/tests/test_\w+\.py", line \d+, in ', 'file:line of each failure'),
        S('stderr', r"^(KeyError|AssertionError): ", 'exception and assertion detail'),
        S('stderr', r"^Ran \d+ tests", 'how many tests ran'),
        S('stderr', r"^FAILED \(failures=\d+, errors=\d+\)$", 'overall result'),
    ),
    "pip-install": (
        S('stdout', r"^Successfully installed ", 'what got installed'),
        S('stdout', r"^Successfully built ", 'the build succeeded'),
    ),
    "git-log": (
        S('stdout', r"^commit 9a86aae1", "the newest commit's id"),
        S('stdout', r"^    Add feature (1[89]\d|2[01]\d) to module", 'subjects of the recent commits'),
    ),
    "git-log-stat": (
        S('stdout', r"^    Add feature \d+ to module \d+$", "each shown commit's subject"),
    ),
    "git-diff": (
        S('stdout', r"^diff --git ", 'each changed file'),
    ),
    "git-show": (
        S('stdout', r"^commit [0-9a-f]{40}$", 'which commit'),
        S('stdout', r"^    Add feature 216 to module 12$", 'commit subject'),
        S('stdout', r"^diff --git ", 'changed file'),
        S('stdout', r"^\+def feature_216", 'the added code'),
    ),
    "git-status": (
        S('stdout', r"^On branch ", 'current branch'),
        S('stdout', r"^\tmodified:   ", 'each modified file'),
        S('stdout', r"^\tNEW\.txt$", 'the untracked file'),
    ),
    "gcc-errors": BROKEN_C_ERROR,
    "make-errors": BROKEN_C_ERROR + (
        S('stderr', r"^make: \*\*\* \[.*\] Error \d+$", 'which make target failed'),
    ),
    "cargo-test": (
        S('stdout', r"^test tests::broken \.\.\. FAILED$", 'which test failed'),
        S('stdout', r"panicked at src/lib\.rs:\d+:\d+:$", 'panic location'),
        S('stdout', r"^assertion `left == right` failed: arithmetic drifted$", 'assertion message'),
        S('stdout', r"^\s+(left|right): ", 'the compared values'),
        S('stdout', r"^test result: FAILED\.", 'test summary'),
        S('stderr', r"^error: test failed", "cargo's failure line"),
    ),
    "cargo-build-errors": (
        S('stderr', r"^error\[E\d+\]: ", 'each compiler error'),
        S('stderr', r"^ --> src/main\.rs:\d+:\d+$", 'file:line of each error'),
        S('stderr', r'^\d+ \|.*(missing_name|"text")', 'source line of each error'),
        S('stderr', r"\^+ (not found in this scope|expected `u32`, found `&str`)$", 'what the compiler expected'),
        S('stderr', r"^error: could not compile ", 'build result'),
    ),
    "npm-install": (
        S('stdout', r"^added \d+ packages in ", 'install summary'),
        S('stderr', r"^npm info ok$", 'npm finished cleanly'),
    ),
    "npm-test": (
        S('stdout', r"^not ok \d+ ", 'which cases failed'),
        S('stdout', r"^# (pass|fail) \d+$", 'test summary'),
        S('stderr', r"^AssertionError \[ERR_ASSERTION\]", 'assertion message'),
        S('stderr', r"^\d+ !== \d+$", 'the compared values'),
        S('stderr', r"^    at Object\.<anonymous> \(.*/test\.js:\d+:\d+\)$", 'file:line of the failing assertion'),
    ),
    "ruff-check": (
        S('stdout', r"^F841 ", 'diagnostics --fix will not repair'),
        S('stdout', r"^ --> pkg/m\d+\.py:5:5$", 'file:line of each unrepaired diagnostic'),
        S('stdout', r"^Found \d+ errors\.$", 'lint summary'),
        S('stdout', r"fixable with `--fix`", 'how to fix the rest'),
    ),
    "find-tree": (
        S('stdout', r"^\./src/module_\d+\.py$", "the project's source files"),
        S('stdout', r"^\./NEW\.txt$", "the project's top-level file"),
    ),
    "ls-recursive": (
        S('stdout', r"^src:$", "the source directory's listing header"),
        S('stdout', r" module_\d+\.py$", 'each source file with its size'),
    ),
    "grep-results": (
        S('stdout', r"^src/module_\d+\.py:2:", 'each file that matches, at its first match'),
    ),
}

#: Added cases.
ADDED_SIGNALS = {
    "gcc-multi-errors": (
        S("stderr", r"^f\d\d\.c:\d+:\d+: error: ", "each compiler error with file:line"),
        S("stderr", r"^\s+19 \| .*(missing_total|p\.y;|helper_07\(values, 3\))", "source line of each error"),
        S("stderr", r"^f07\.c:\d+:\d+: note: declared here$", "where the miscalled function is declared"),
    ),
    "clang-multi-errors": (
        S("stderr", r"^f\d\d\.c:\d+:\d+: error: ", "each compiler error with file:line"),
        S("stderr", r"^\s+return helper_0[5-7]\(", "source line of each error"),
        S("stderr", r"^f07\.c:\d+:\d+: note: 'helper_07' declared here$", "where the miscalled function is declared"),
        S("stderr", r"\d+ errors? generated\.$", "per-file error counts"),
    ),
    "make-k-errors": (
        S("stderr", r"^f\d\d\.c:\d+:\d+: error: ", "each compiler error with file:line"),
        S("stderr", r"^\s+19 \| .*(missing_total|p\.y;|helper_07\(values, 3\))", "source line of each error"),
        S("stderr", r"^make: \*\*\* \[Makefile:\d+: f\d\d\.o\] Error 1$", "each make target that failed"),
        S("stderr", r"^make: Target 'all' not remade because of errors\.$", "overall build result"),
    ),
    "make-clean-build": (
        S("stdout", r"^cc -o app ", "the final link ran: the build completed"),
    ),
    "gcc-latin1-source": (
        S("stderr", r"^legacy\.c:\d+:\d+: error: invalid operands", "compiler error with file:line"),
        S("stderr", r"^\s+5 \| .*greeting \* 2\.0", "source line of the error"),
    ),
    "cmake-configure-error": (
        S("stderr", r"^CMake Error at CMakeLists\.txt:3 \(find_package\):$", "configure error with file:line"),
        S("stderr", r'^  Could not find a package configuration file provided by "LibFrobnicate"$', "what is missing"),
        S("stderr", r'"LibFrobnicate_DIR" to a directory', "how to point CMake at it"),
        S("stdout", r"^-- Configuring incomplete, errors occurred!$", "configure result"),
    ),
    "ninja-build-error": (
        S("stdout", r"^FAILED: CMakeFiles/app\.dir/parse\.c\.o", "which build edge failed"),
        S("stdout", r"/parse\.c:\d+:\d+: error: ", "each compiler error with file:line"),
        S("stdout", r"^ninja: build stopped: subcommand failed\.$", "build result"),
    ),
    "ninja-build-ok": (
        S("stdout", r"^\[6/6\] Linking C executable app$", "last build step: the build completed"),
    ),
    "cargo-test-panics": (
        S("stdout", r"^test tests::\w+ \.\.\. FAILED$", "which tests failed"),
        S("stdout", r"panicked at src/lib\.rs:\d+:\d+:$", "panic locations"),
        S("stdout", r"^index out of bounds: the len is 3 but the index is 5$", "panic message"),
        S("stdout", r"^assertion `left == right` failed: ledger rounding$", "assertion message"),
        S("stdout", r"^\s+(left|right): -?\d+$", "the compared values"),
        S("stdout", r"^test result: FAILED\. \d+ passed; \d+ failed", "test summary"),
        S("stderr", r"^error: test failed", "cargo's failure line"),
    ),
    "cargo-build-ok": (
        S("stderr", r"^\s+Finished `dev` profile", "build result"),
    ),
    "rustc-errors": (
        S("stderr", r"^error\[E0502\]: cannot borrow `words` as mutable", "the borrow error"),
        S("stderr", r"^  --> main\.rs:14:5$", "file:line of the error"),
        S("stderr", r"^1[345] \|\s+(let first = &words\[0\];|words\.push|println!)", "source lines of the conflicting borrows"),
        S("stderr", r"(immutable borrow occurs here|mutable borrow occurs here|immutable borrow later used here)$", "which borrow is which"),
        S("stderr", r"^error: aborting due to 1 previous error", "compile result"),
    ),
    "go-build-errors": (
        S("stderr", r"^# example\.com/demo/store$", "which package failed"),
        S("stderr", r"^store/store\.go:\d+:\d+: ", "each compile error with file:line"),
    ),
    "go-test-failure": (
        S("stdout", r"^\s+parse_test\.go:\d+: Parse\(\"37\"\) = 37, want 38$", "assertion detail with file:line"),
        S("stdout", r"^\s*--- FAIL: TestParse", "which tests failed"),
        S("stdout", r"^FAIL\texample\.com/demo\t", "package result"),
    ),
    "go-test-ok": (
        S("stdout", r"^ok  \texample\.com/demo\t", "package result"),
    ),
    "go-run-panic": (
        S("stderr", r"^panic: runtime error: index out of range \[5\] with length 3$", "panic message"),
        S("stderr", r"^goroutine 1 \[running\]:$", "the panicking goroutine"),
        S("stderr", r"^main\.(pick|main)\(", "functions on the panicking stack"),
        S("stderr", r"^\t/.*/cmd/app/main\.go:\d+", "file:line of each frame"),
        S("stderr", r"^exit status 2$", "exit status"),
    ),
    "tsc-errors": (
        S("stdout", r"^src/\w+\.ts\(\d+,\d+\): error TS\d+: ", "each type error with file:line"),
    ),
    "eslint-errors": (
        S("stdout", r"/src/handler\.js$", "the file with errors"),
        S("stdout", r"^\s+\d+:\d+\s+error\s", "each lint error with line:col"),
        S("stdout", r"^✖ \d+ problems \(\d+ errors, \d+ warnings\)$", "lint summary"),
    ),
    "jest-failure": (
        S("stderr", r"^FAIL test/group2\.test\.js$", "the failing test file"),
        S("stderr", r"● group 2 › keeps the sign of negatives$", "the failing test"),
        S("stderr", r"^\s+(Expected|Received): -?\d+$", "the compared values"),
        S("stderr", r"^\s+> \d+ \|", "the failing source line"),
        S("stderr", r"^\s+at Object\.toBe \(test/group2\.test\.js:\d+:\d+\)$", "file:line of the failing assertion"),
        S("stderr", r"^Tests:\s+1 failed, 50 passed", "test summary"),
    ),
    "vitest-failure": (
        S("stdout", r"× keeps the sign of negatives", "the failing test"),
        S("stdout", r"^\s+Tests\s+1 failed \| 50 passed", "test summary"),
        S("stderr", r"^ FAIL  test/group2\.test\.mjs > group 2 > keeps the sign of negatives$", "the failing test"),
        S("stderr", r"^AssertionError: expected 3 to be -3", "assertion message"),
        S("stderr", r"^(- -3|\+ 3)$", "the compared values"),
        S("stderr", r"^ ❯ test/group2\.test\.mjs:\d+:\d+$", "file:line of the failing assertion"),
    ),
    "mocha-failure": (
        S("stdout", r"^\s+\d+ passing", "test summary"),
        S("stdout", r"^\s+\d+ failing$", "test summary"),
        S("stdout", r"^\s+1\) (group 2|keeps the sign of negatives)", "the failing test"),
        S("stdout", r"AssertionError \[ERR_ASSERTION\]", "assertion message"),
        S("stdout", r"^3 !== -3$", "the compared values"),
        S("stdout", r"at Context\.<anonymous> \(test/group2\.test\.js:\d+:\d+\)$", "file:line of the failing assertion"),
    ),
    "node-test-tap": (
        S("stdout", r"^not ok \d+ - slug trims spaces$", "the failing test"),
        S("stdout", r"^\s+location: '.*/test/slug\.test\.js:\d+:\d+'$", "where the test is"),
        S("stdout", r"^\s+Expected values to be strictly equal:$", "assertion message"),
        S("stdout", r"^\s+[+-] '(--big-item-|big-item)'$", "the compared values"),
        S("stdout", r"TestContext\.<anonymous> \(.*/test/slug\.test\.js:\d+:\d+\)$", "file:line of the failing assertion"),
        S("stdout", r"^# (pass|fail) \d+$", "test summary"),
    ),
    "node-uncaught-error": (
        S("stderr", r"/config\.js:3$", "file:line where it threw"),
        S("stderr", r"^\s+return cfg\.server\.port;$", "the throwing source line"),
        S("stderr", r"^TypeError: Cannot read properties of undefined \(reading 'port'\)$", "the error"),
        S("stderr", r"^\s+at (loadConfig|Object\.<anonymous>) \(/.*/(config|server)\.js:\d+:\d+\)$", "the project's own frames"),
    ),
    "javac-errors": (
        S("stderr", r"^src/app/Report\.java:\d+: error: ", "each compile error with file:line"),
        S("stderr", r"^\s+(String count = n;|return heading \+ count;)$", "source line of each error"),
        S("stderr", r"^\s+symbol:\s+variable heading$", "the unresolved symbol"),
        S("stderr", r"^\d+ errors$", "error count"),
    ),
    "java-exception": (
        S("stderr", r'^Exception in thread "main" java\.lang\.IllegalStateException: could not load config$', "the exception"),
        S("stderr", r"^Caused by: java\.lang\.NumberFormatException: For input string: \"eighty\"$", "the root cause"),
        S("stderr", r"^\tat app\.", "the project's own frames with file:line"),
    ),
    "gradle-compile-error": (
        S("stdout", r"^:compileJava FAILED$", "which task failed"),
        S("stderr", r"/src/main/java/app/Report\.java:\d+: error: ", "each compile error with file:line"),
        S("stderr", r"^\s+(String count = n;|return heading \+ count;)$", "source line of each error"),
        S("stderr", r"^\s+symbol:\s+variable heading$", "the unresolved symbol"),
        S("stderr", r"^\d+ errors$", "error count"),
        S("stderr", r"^Execution failed for task ':compileJava'\.$", "what went wrong"),
        S("stderr", r"^BUILD FAILED in ", "build result"),
    ),
    "mvn-offline-package": (
        S("stdout", r"\[INFO\] BUILD FAILURE$", "build result"),
        S("stdout", r"\[ERROR\] Failed to execute goal ", "why the build failed"),
    ),
    "pytest-verbose-prints": (
        S("stdout", r"::test_\w+ FAILED\b", "which tests failed, in progress order"),
        S("stdout", r"^E\s+\S", "assertion diff and exception detail"),
        S("stdout", r"^>\s", "the failing statements"),
        S("stdout", r"^\S+\.py:\d+: \w+$", "file:line of each raised exception"),
        S("stdout", r"^tests/test_batch_13\.py:\d+: $", "file:line in the test that called the failing helper"),
        S("stdout", r"^FAILED tests/", "which tests failed"),
        S("stdout", r"^=+ 2 failed, 400 passed", "test summary"),
    ),
    "pytest-chained": (
        S("stdout", r"^E\s+\S", "both exceptions of the chain"),
        S("stdout", r"^>\s", "the failing statements"),
        S("stdout", r"^settings\.py:\d+: \w+$", "file:line of each raised exception"),
        S("stdout", r"^The above exception was the direct cause of the following exception:$", "the chain link"),
        S("stdout", r"^FAILED tests/test_settings\.py::test_missing_timeout", "which test failed"),
        S("stdout", r"^=+ 1 failed, 91 passed", "test summary"),
    ),
    "pytest-all-pass": (
        S("stdout", r"^=+ 300 passed in ", "test summary"),
    ),
    "python-logs-traceback": (
        S("stderr", r"WARNING ingest: falling back to defaults", "the warning just before the failure"),
        S("stderr", r'^  File ".*/app\.py", line \d+, in load$', "innermost frames with file:line"),
        S("stderr", r'^    (return settings\["database"\]\["url"\]|raise RuntimeError)', "the failing source lines"),
        S("stderr", r"^KeyError: 'database'$", "the original exception"),
        S("stderr", r"^The above exception was the direct cause of the following exception:$", "the chain link"),
        S("stderr", r"^RuntimeError: database settings incomplete$", "the final exception"),
    ),
    "cat-app-log": (
        S("stdout", r" ERROR \[worker-3\] order-service: payment capture failed", "the one error in the log"),
    ),
    "python-pipeline-log": (
        S("stdout", r"^ERROR pipeline: record 11061 could not be converted", "the one failed record"),
        S("stdout", r'^  File ".*/pipeline\.py", line \d+, in convert$', "innermost frame with file:line"),
        S("stdout", r'^    return \{"id": record\["id"\], "amount": round\(float', "the failing source line"),
        S("stdout", r"^ValueError: could not convert string to float: 'n/a'$", "the exception"),
        S("stdout", r"^INFO pipeline: done: \d+ records, 1 failed$", "run summary"),
    ),
    "tail-fatal-log": (
        S("stdout", r" CRITICAL db\.pool: ", "the critical event"),
        S("stdout", r" FATAL main: ", "why the service stopped"),
    ),
    "grep-latin1": (
        S("stdout", r"^\./notes_\d\.txt:\d+:TODO\(\d\)", "each match with file:line"),
    ),
    "git-log-short": (
        S("stdout", r"^commit [0-9a-f]{40}$", "each commit id"),
        S("stdout", r"^    (?!Part of the order pipeline)\S", "each commit subject"),
    ),
    "git-diff-stat": (
        S("stdout", r"^ file_\d+\.py \| ", "each changed file"),
        S("stdout", r"^ 14 files changed", "diff summary"),
    ),
    "git-show-stat": (
        S("stdout", r"^commit [0-9a-f]{40}$", "which commit"),
        S("stdout", r"^    Bump the schema version$", "commit subject"),
        S("stdout", r"^ file_\d+\.py \| ", "each changed file"),
        S("stdout", r"^ 14 files changed", "diff summary"),
    ),
    "pip-install-missing": (
        S("stderr", r"^ERROR: Could not find a version that satisfies the requirement frobnicate-toolkit", "why it failed"),
        S("stderr", r"^ERROR: No matching distribution found for ", "what could not be installed"),
    ),
    "npm-install-missing": (
        S("stderr", r"^npm error code EJSONPARSE$", "error code"),
        S("stderr", r"^npm error JSON\.parse Invalid package\.json: ", "what is wrong and where"),
    ),
    "diff-trees": (
        S("stdout", r"^diff -ru ", "each changed file"),
        S("stdout", r"^Only in ", "files on one side only"),
        S("stdout", r"^[-+]key_15 = ", "the changed lines"),
    ),
    "find-missing-dir": (
        S("stdout", r"^src/pkg_\d/mod_\d+\.py$", "each found file"),
        S("stderr", r"^find: ‘tests’: No such file or directory$", "the missing start directory"),
    ),
    "sqlite3-migration-error": (
        S("stderr", r"^Parse error near line 5: no such table: orders$", "the failing statement's line and cause"),
    ),
}


@dataclass(frozen=True)
class Spec:
    """How to record one case: project setup, command, signals and the manifest that lists it."""

    name: str
    tool: str
    setup: object
    argv: tuple
    signals: tuple = ()
    manifest: str = ADDED
    env: dict = field(default_factory=dict)


def _node(tool):
    return os.path.join(NODE_MODULES, ".bin", tool) if NODE_MODULES else tool


C_FILES = tuple(f"f{n:02d}.c" for n in range(12))
GO_ENV = {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "GOTELEMETRY": "off"}


def _specs() -> list[Spec]:
    o = ORIGINAL
    legacy = [
        Spec("pytest-failures", "pytest", _pytest_project, (PY, "-m", "pytest", "-p", "no:cacheprovider", "tests"), LEGACY["pytest-failures"], o),
        Spec("pytest-verbose", "pytest", _pytest_project, (PY, "-m", "pytest", "-v", "-p", "no:cacheprovider", "tests"), LEGACY["pytest-verbose"], o),
        Spec("unittest-failures", "unittest", _unittest_project, (PY, "-m", "unittest", "discover", "-s", "tests", "-p", "test_*.py", "-v"), LEGACY["unittest-failures"], o),
        Spec("pip-install", "pip", _pip_project, (PY, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps", "--target", "out", "."), LEGACY["pip-install"], o),
        Spec("git-log", "git", _git_repo, ("git", "log", "-n", "150"), LEGACY["git-log"], o),
        Spec("git-log-stat", "git", _git_repo, ("git", "log", "--stat", "-n", "60"), LEGACY["git-log-stat"], o),
        Spec("git-diff", "git", _git_repo, ("git", "diff"), LEGACY["git-diff"], o),
        Spec("git-show", "git", _git_repo, ("git", "show", "HEAD~3"), LEGACY["git-show"], o),
        Spec("git-status", "git", _git_repo, ("git", "status"), LEGACY["git-status"], o),
        Spec("gcc-errors", "gcc", _c_project, ("gcc", "-Wall", "-Wextra", "-c", "broken.c", "-o", "broken.o"), LEGACY["gcc-errors"], o),
        Spec("make-errors", "make", _c_project, ("make",), LEGACY["make-errors"], o),
        Spec("cargo-test", "cargo", _cargo_project, ("cargo", "test", "--offline"), LEGACY["cargo-test"], o),
        Spec("cargo-build-errors", "cargo", _cargo_broken, ("cargo", "build", "--offline"), LEGACY["cargo-build-errors"], o),
        Spec("npm-install", "npm", _npm_project, ("npm", "install", "--no-audit", "--no-fund", "--loglevel", "verbose"), LEGACY["npm-install"], o),
        Spec("npm-test", "npm", _npm_project, ("npm", "test"), LEGACY["npm-test"], o),
        Spec("ruff-check", "ruff", _lint_project, ("ruff", "check", "--no-cache", "--output-format", "full", "pkg"), LEGACY["ruff-check"], o),
        Spec("find-tree", "find", _git_repo, ("find", "."), LEGACY["find-tree"], o),
        Spec("ls-recursive", "ls", _git_repo, ("ls", "-laR", "src", ".git/objects"), LEGACY["ls-recursive"], o),
        Spec("grep-results", "grep", _git_repo, ("grep", "-rn", "return", "src"), LEGACY["grep-results"], o),
    ]
    added = [
        Spec("gcc-multi-errors", "gcc", _c_multi, ("gcc", "-Wall", "-Wextra", "-c", *C_FILES)),
        Spec("clang-multi-errors", "clang", _c_multi, ("clang", "-Wall", "-Wextra", "-c", *C_FILES)),
        Spec("make-k-errors", "make", _c_multi, ("make", "-k")),
        Spec("make-clean-build", "make", _c_clean, ("make",)),
        Spec("gcc-latin1-source", "gcc", _c_latin1, ("gcc", "-Wall", "-c", "legacy.c")),
        Spec("cmake-configure-error", "cmake", lambda r: _cmake_project(r, configure_error=True),
             ("cmake", "-G", "Ninja", "-S", ".", "-B", "build")),
        Spec("ninja-build-error", "ninja", _cmake_configure, ("ninja", "-C", "build")),
        Spec("ninja-build-ok", "ninja", lambda r: _cmake_configure(r, broken=False), ("ninja", "-C", "build")),
        Spec("cargo-test-panics", "cargo", _cargo_panics, ("cargo", "test", "--offline"), env={"RUST_BACKTRACE": "0"}),
        Spec("cargo-build-ok", "cargo", _cargo_clean, ("cargo", "build", "--offline")),
        Spec("rustc-errors", "rustc", _rustc_errors, ("rustc", "--edition", "2021", "main.rs")),
        Spec("go-build-errors", "go", _go_broken, ("go", "build", "./..."), env=GO_ENV),
        Spec("go-test-failure", "go", _go_tests, ("go", "test", "-v", "./..."), env=GO_ENV),
        Spec("go-test-ok", "go", lambda r: _go_tests(r, fail=False), ("go", "test", "./..."), env=GO_ENV),
        Spec("go-run-panic", "go", _go_panic, ("go", "run", "./cmd/app"), env=GO_ENV),
        Spec("tsc-errors", "tsc", _ts_project, (_node("tsc"), "-p", ".")),
        Spec("eslint-errors", "eslint", _eslint_project, (_node("eslint"), "src")),
        Spec("jest-failure", "jest", lambda r: _js_tests(r, "jest"), (_node("jest"), "--ci")),
        Spec("vitest-failure", "vitest", lambda r: _js_tests(r, "vitest"), (_node("vitest"), "run")),
        Spec("mocha-failure", "mocha", lambda r: _js_tests(r, "mocha"), (_node("mocha"),)),
        Spec("node-test-tap", "node", _node_tap, ("node", "--test", "--test-reporter=tap", "test/")),
        Spec("node-uncaught-error", "node", _node_uncaught, ("node", "server.js")),
        Spec("javac-errors", "javac", _java_project, ("javac", "-Xlint:all", "-d", "out", "src/app/Config.java",
             "src/app/Main.java", "src/app/Report.java", "src/app/Store.java",
             *(f"src/app/Util{i}.java" for i in range(5)))),
        Spec("java-exception", "java", _java_run, ("java", "-cp", "out", "app.Main")),
        Spec("gradle-compile-error", "gradle", _gradle_project,
             ("gradle", "--offline", "--no-daemon", "--console=plain", "build")),
        Spec("mvn-offline-package", "mvn", _maven_project, ("mvn", "-o", "-B", "package")),
        Spec("pytest-verbose-prints", "pytest", _pytest_prints, (PY, "-m", "pytest", "-v", "-rA", "-p", "no:cacheprovider", "tests")),
        Spec("pytest-chained", "pytest", _pytest_chained, (PY, "-m", "pytest", "-p", "no:cacheprovider", "tests")),
        Spec("pytest-all-pass", "pytest", _pytest_green, (PY, "-m", "pytest", "-p", "no:cacheprovider", "tests")),
        Spec("python-logs-traceback", "python", _python_app, (PY, "app.py")),
        Spec("cat-app-log", "cat", _app_log, ("cat", "app.log")),
        Spec("python-pipeline-log", "python", _pipeline, (PY, "pipeline.py")),
        Spec("tail-fatal-log", "tail", _fatal_log, ("tail", "-n", "2500", "service.log")),
        Spec("grep-latin1", "grep", _latin1_tree, ("grep", "-rn", "-a", "TODO", ".")),
        Spec("git-log-short", "git", _git_small, ("git", "log", "-n", "15")),
        Spec("git-diff-stat", "git", _git_small, ("git", "diff", "--stat")),
        Spec("git-show-stat", "git", _git_small, ("git", "show", "--stat", "HEAD")),
        Spec("pip-install-missing", "pip", _pip_project, (PY, "-m", "pip", "install", "--no-index", "--no-cache-dir",
             "frobnicate-toolkit==9.9")),
        Spec("npm-install-missing", "npm", _npm_broken, ("npm", "install", "--no-audit", "--no-fund")),
        Spec("diff-trees", "diff", _two_trees, ("diff", "-ru", "old", "new")),
        Spec("find-missing-dir", "find", _py_tree, ("find", "src", "tests", "-name", "*.py")),
        Spec("sqlite3-migration-error", "sqlite3", _sqlite_project, ("sqlite3", "-bail", "app.db", ".read migrate.sql")),
    ]
    return legacy + [replace(spec, signals=tuple(ADDED_SIGNALS.get(spec.name, ()))) for spec in added]


def _shown_argv(argv) -> list[str]:
    """The argv as the manifest records it: no machine-specific interpreter or tool paths."""
    shown = []
    for index, arg in enumerate(argv):
        if arg == PY:
            arg = "python"
        elif index == 0:
            arg = os.path.basename(arg)
        shown.append(arg)
    return shown


def _store(name: str, stream: str, data: bytes) -> None:
    raw = os.path.join(HERE, f"{name}.{stream}")
    for stale in (raw, raw + ".zst"):
        if os.path.exists(stale):
            os.remove(stale)
    if len(data) > COMPRESS_OVER:
        import zstandard

        with open(raw + ".zst", "wb") as handle:
            handle.write(zstandard.ZstdCompressor(level=19).compress(data))
    else:
        with open(raw, "wb") as handle:
            handle.write(data)


def _available(argv) -> bool:
    tool = argv[0]
    return os.path.exists(tool) if os.sep in tool else shutil.which(tool) is not None


def _record(spec: Spec) -> int:
    env = dict(os.environ, NO_COLOR="1", TERM="dumb", CARGO_TERM_COLOR="never", FORCE_COLOR="0")
    env.update(spec.env)
    with tempfile.TemporaryDirectory(prefix="corpus-") as root:
        spec.setup(root)
        if spec.name == "npm-test":
            subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=root, capture_output=True)
        done = subprocess.run(list(spec.argv), cwd=root, env=env, capture_output=True)
    _store(spec.name, "stdout", done.stdout)
    _store(spec.name, "stderr", done.stderr)
    print(f"{spec.name}: exit {done.returncode}, {len(done.stdout)} + {len(done.stderr)} bytes")
    return done.returncode


def _check_signals(spec: Spec) -> list[str]:
    sys.path.insert(0, os.path.dirname(HERE))
    from corpus_cases import read_stream, split_lines

    problems = []
    for signal in spec.signals:
        lines = split_lines(read_stream(spec.name, signal["stream"], HERE))
        if not any(re.search(signal["pattern"], line) for line in lines):
            problems.append(f"{spec.name}: signal {signal['pattern']!r} matches no {signal['stream']} line")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Re-record the pruning corpus from real tools.")
    parser.add_argument("names", nargs="*", help="cases to re-record (default: all)")
    parser.add_argument("--manifest-only", action="store_true", help="rewrite the manifests without running tools")
    args = parser.parse_args(argv)
    previous = {}
    for manifest in (ORIGINAL, ADDED):
        path = os.path.join(HERE, manifest)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                previous.update({entry["name"]: entry for entry in json.load(handle)})
    written: dict[str, list] = {ORIGINAL: [], ADDED: []}
    problems = []
    for spec in _specs():
        wanted = not args.manifest_only and (not args.names or spec.name in args.names)
        if wanted and _available(spec.argv):
            exit_code = _record(spec)
        elif spec.name in previous:
            if wanted:
                print(f"skip {spec.name}: {spec.argv[0]} not installed; keeping the previous recording")
            exit_code = previous[spec.name]["exit_code"]
        else:
            if wanted:
                print(f"skip {spec.name}: {os.path.basename(spec.argv[0])} not installed")
            continue
        written[spec.manifest].append({"name": spec.name, "tool": spec.tool, "argv": _shown_argv(spec.argv),
                                       "exit_code": exit_code, "signals": list(spec.signals)})
        problems += _check_signals(spec)
    for manifest, entries in written.items():
        with open(os.path.join(HERE, manifest), "w", encoding="utf-8") as handle:
            json.dump(entries, handle, indent=2)
            handle.write("\n")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
