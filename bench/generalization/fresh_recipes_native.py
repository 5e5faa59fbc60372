"""Fresh recipes for native tools: go build/test/mod, rustc, cargo, clang-tidy, cpplint, make -k, ctest -V, java.

Each signal is written from the raw output's meaning, before any view of it.
"""

from __future__ import annotations

import os

from fresh_common import Run, S, exits, recipe, sh, write

GO = ["go", "version"]
RUSTC = ["rustc", "--version"]
CARGO = ["cargo", "--version"]


def _go_env() -> dict[str, str]:
    work = "/tmp/yarp-gen/fresh/.go"
    return {"GOPATH": os.path.join(work, "path"), "GOCACHE": os.path.join(work, "cache"), "GOPROXY": "off",
            "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}


@recipe("go-build-type-errors", "go", "compiler", GO, needs=("go",))
def _go_build(root):
    write(root, "go.mod", "module example.com/ledger\n\ngo 1.19\n")
    write(root, "account/account.go", """
        package account

        import "fmt"

        type Account struct {
            ID      string
            Balance int64
        }

        func (a *Account) Deposit(amount float64) {
            a.Balance += amount
        }

        func (a *Account) String() string {
            return fmt.Sprintf("%s: %d", a.ID, a.Balance)
        }
        """)
    write(root, "report/report.go", """
        package report

        import (
            "os"
            "strings"
        )

        type Row struct{ ID, Name string }

        func Lines(accts []Row) []string {
            out := []string{}
            for _, a := range accts {
                out = append(out, a.Owner)
            }
            return out
        }
        """)
    write(root, "main.go", """
        package main

        import (
            "example.com/ledger/account"
            "example.com/ledger/report"
        )

        func main() { _ = report.Lines(nil); _ = account.Account{} }
        """)
    return Run(["go", "build", "./..."], [
        S("stderr", r"^# example\.com/ledger/(account|report)$", "each failing package's heading"),
        S("stderr", r"^(account/account|report/report)\.go:\d+:\d+: ", "each compile error with file:line:col"),
    ], env=_go_env(), expect_exit=exits(1, 2))


@recipe("go-test-v-subtest-failure", "go", "test-runner", GO, needs=("go",))
def _go_test_v(root):
    write(root, "go.mod", "module example.com/slug\n\ngo 1.19\n")
    write(root, "slug/slug.go", """
        package slug

        import "strings"

        // Make turns a title into a URL slug.
        func Make(title string) string {
            return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(title), " ", "-"))
        }
        """)
    cases = "".join(f'\t\t{{"title {i:03d}", "Title {i:03d}", "title-{i:03d}"}},\n' for i in range(120))
    cases += '\t\t{"double space", "New  Year", "new-year"},\n'
    write(root, "slug/slug_test.go",
          "package slug\n\nimport \"testing\"\n\nfunc TestMake(t *testing.T) {\n\tcases := []struct{ name, in, want "
          "string }{\n" + cases + "\t}\n\tfor _, c := range cases {\n\t\tc := c\n\t\tt.Run(c.name, func(t *testing.T) "
          "{\n\t\t\tif got := Make(c.in); got != c.want {\n\t\t\t\tt.Errorf(\"Make(%q) = %q, want %q\", c.in, got, "
          "c.want)\n\t\t\t}\n\t\t})\n\t}\n}\n\nfunc TestEmpty(t *testing.T) {\n\tif Make(\"\") != \"\" {\n\t\tt.Fatal"
          "(\"empty\")\n\t}\n}\n")
    return Run(["go", "test", "-v", "./..."], [
        S("stdout", r"^    slug_test\.go:\d+: Make\(\"New  Year\"\) = \"new--year\", want \"new-year\"$",
          "the failed check with the test's line, got and want"),
        S("stdout", r"^(    )?--- FAIL: TestMake(/double_space)? ", "the failing subtest and its parent, among 121 passing"),
        S("stdout", r"^FAIL\texample\.com/slug/slug\t", "the failing package"),
    ], env=_go_env(), expect_exit=exits(1))


@recipe("go-mod-tidy-offline", "go", "package-manager", GO, needs=("go",))
def _go_mod_tidy(root):
    write(root, "go.mod", "module example.com/api\n\ngo 1.19\n")
    write(root, "main.go", """
        package main

        import (
            "fmt"

            "github.com/google/uuid"
            "golang.org/x/sync/errgroup"
        )

        func main() {
            var g errgroup.Group
            g.Go(func() error { fmt.Println(uuid.NewString()); return nil })
            _ = g.Wait()
        }
        """)
    return Run(["go", "mod", "tidy"], [
        S("stderr", r"^\t(github\.com/google/uuid|golang\.org/x/sync/errgroup): cannot find module providing package",
          "each import that could not be resolved, and why"),
    ], env=_go_env(), expect_exit=exits(1))


@recipe("rustc-warnings-one-error", "rustc", "compiler", RUSTC, needs=("rustc",))
def _rustc(root):
    fns = "".join(f"""
        fn helper_{i}(input: &str, Unused_{i}: u32) -> usize {{
            let mut count = 0;
            let temp_{i} = input.len();
            for c in input.chars() {{ if c == ' ' {{ count += 1; }} }}
            count
        }}
        """ for i in range(22))
    write(root, "src/main.rs", "#![allow(dead_code)]\nuse std::collections::HashMap;\nuse std::fmt;\n" + fns + """
        fn total(prices: &Vec<f64>) -> f64 {
            prices.iter().sum()
        }

        fn main() {
            let prices = vec![1.0, 2.5];
            let count: u32 = helper_0("a b", 1);
            println!("{} {}", total(&prices), count);
        }
        """)
    return Run(["rustc", "--edition", "2021", "src/main.rs"], [
        S("stderr", r"^error\[E0308\]: mismatched types$", "the one error among 46 warnings"),
        S("stderr", r"^   --> src/main\.rs:165:30$", "its location"),
        S("stderr", r"expected `u32`, found `usize`$", "what is wrong there"),
        S("stderr", r"^error: aborting due to 1 previous error; 46 warnings emitted$", "the closing count"),
    ], expect_exit=exits(1))


def _crate(root: str, name: str, deps: list[str]) -> None:
    lines = "".join(f'{d} = {{ path = "../{d}" }}\n' for d in deps)
    write(root, f"{name}/Cargo.toml", f'[package]\nname = "{name}"\nversion = "0.3.1"\nedition = "2021"\n\n'
          f"[dependencies]\n{lines}")
    write(root, f"{name}/src/lib.rs", "".join(f"pub use {d.replace('-', '_')};\n" for d in deps)
          + "pub fn id() -> u32 { 1 }\n")


@recipe("cargo-tree-workspace", "cargo", "package-manager", CARGO, needs=("cargo",))
def _cargo_tree(root):
    graph = {"core-types": [], "codec": ["core-types"], "storage": ["core-types", "codec"],
             "net": ["core-types", "codec"], "auth": ["core-types", "net"], "cache": ["storage", "codec"],
             "search": ["storage", "cache", "codec"], "api": ["auth", "search", "cache", "net"],
             "cli": ["api", "storage"], "worker": ["search", "cache", "auth"], "server": ["api", "worker", "auth"]}
    for name, deps in graph.items():
        _crate(root, name, deps)
    write(root, "Cargo.toml", "[workspace]\nresolver = \"2\"\nmembers = [" + ", ".join(f'"{n}"' for n in graph)
          + "]\n")
    return Run(["cargo", "tree", "-p", "server"], [
        S("stdout", r"^server v0\.3\.1 \(", "the root of the tree: which crate this is"),
    ], env={"CARGO_NET_OFFLINE": "true"}, expect_exit=exits(0))


@recipe("cargo-build-offline-missing-crate", "cargo", "build", CARGO, needs=("cargo",))
def _cargo_offline(root):
    write(root, "Cargo.toml", '[package]\nname = "fetcher"\nversion = "0.1.0"\nedition = "2021"\n\n'
          '[dependencies]\nserde = { version = "1.0", features = ["derive"] }\nureq = "2"\n')
    write(root, "src/main.rs", "fn main() { println!(\"hi\"); }\n")
    return Run(["cargo", "build", "--offline"], [
        S("stderr", r"^error: no matching package named `serde` found$", "the error"),
        S("stderr", r"^required by package `fetcher v0\.1\.0 ", "which package asked for it"),
    ], env={"CARGO_HOME": os.path.join(root, ".cargo-home")},
               expect_exit=exits(101))


def _cpp_sources(root: str, count: int) -> None:
    for i in range(count):
        write(root, f"src/module{i:02d}.cpp", f"""
            #include <string>
            #include <vector>
            #include <iostream>
            using namespace std;

            class Buffer{i} {{
            public:
                Buffer{i}(int size) {{ data = new char[size]; len = size; }}
                ~Buffer{i}() {{ delete[] data; }}
                int size() {{ return len; }}
                char *data;
                int len;
            }};

            int sum{i}(vector<int> values) {{
                int total = 0;
                for (int i = 0; i < values.size(); i++) total += values[i];
                return total;
            }}

            string label{i}(string name) {{
                if (name.length() == 0) return string("none");
                return name + "-{i}";
            }}
            """)


@recipe("clang-tidy-checks", "clang-tidy", "linter", ["clang-tidy", "--version"], needs=("clang-tidy",))
def _clang_tidy(root):
    _cpp_sources(root, 6)
    write(root, "src/parser.cpp", """
        #include <cstring>
        #include <cstdio>

        int parse_port(const char *text) {
            char buf[8];
            strcpy(buf, text);
            int port = 0;
            sscanf(buf, "%d", &port);
            return port;
        }

        int *make_table(int n) {
            int *table = new int[n];
            if (n > 100) return nullptr;
            return table;
        }

        int first_digit(const char *s) {
            const char *p = nullptr;
            if (s[0] == '#') p = s + 1;
            return *p - '0';
        }
        """)
    files = [f"src/module{i:02d}.cpp" for i in range(6)] + ["src/parser.cpp"]
    checks = "-*,modernize-*,readability-*,performance-*,clang-analyzer-*,bugprone-*,cppcoreguidelines-owning-memory"
    return Run(["clang-tidy", f"-checks={checks}", *files, "--", "-std=c++17"], [
        S("stdout", r"warning: .*\[clang-analyzer-[\w.]+\]$", "the three real bugs (overflowing copy, leak, null "
          "dereference) among 71 style findings"),
    ], expect_exit=exits(0, 1))


@recipe("cpplint-style", "cpplint", "linter", ["cpplint", "--version"], needs=("cpplint",))
def _cpplint(root):
    _cpp_sources(root, 24)
    write(root, "src/config.h", """
        #include <string>
        struct Config { std::string name; int port; };
        """)
    return Run(["cpplint", "--recursive", "src"], [
        S("stderr", r"^src/config\.h:0:  No #ifndef header guard found", "the one finding of its kind: a header without a guard"),
        S("stdout", r"^Total errors found: \d+$", "the closing count"),
    ], expect_exit=exits(1))


def _c_file(index: int) -> str:
    return f"""
        #include <stdio.h>

        int step_{index}(int x) {{
            int y = x * {index + 1};
            return y + {index};
        }}
        """


@recipe("make-k-several-failures", "make", "build", ["make", "--version"], needs=("make", "gcc"))
def _make_k(root):
    objs = []
    for i in range(120):
        text = _c_file(i)
        if i == 7:
            text = text.replace("return y", "return undeclared_total + y")
        if i == 83:
            text = text.replace("int y = x", "int y = x +")
        write(root, f"src/step{i:02d}.c", text)
        objs.append(f"build/step{i:02d}.o")
    write(root, "src/main.c", "int main(void) { return 0; }\n")
    write(root, "Makefile", "CFLAGS = -O2 -Wall -Wextra\nOBJS = " + " ".join(objs) + " build/main.o\n\n"
          "all: bin/app docs\n\nbin/app: $(OBJS)\n\tmkdir -p bin\n\t$(CC) -o $@ $^\n\n"
          "build/%.o: src/%.c\n\tmkdir -p build\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\n"
          "docs: docs/manual.txt\n\ndocs/manual.txt: docs/manual.in\n\tsed s/VERSION/1.2/ $< > $@\n")
    return Run(["make", "-k"], [
        S("stderr", r"^src/step(07|83)\.c: In function ", "the heading of each failing file"),
        S("stderr", r"^src/step(07|83)\.c:\d+:\d+: error: ", "each compile error with file:line:col"),
        S("stderr", r"^make: \*\*\* ", "each target make gave up on: two objects and a missing input"),
        S("stderr", r"^make: Target 'all' not remade because of errors\.$", "the verdict"),
    ], expect_exit=exits(2))


@recipe("ctest-verbose-failure", "ctest", "test-runner", ["ctest", "--version"], needs=("cmake", "ctest", "gcc"))
def _ctest_v(root):
    tests = []
    for i in range(14):
        body = f'for (int k = 0; k < 12; k++) printf("case {i}.%d ok\\n", k);'
        if i == 9:
            body += ' fprintf(stderr, "checksum mismatch: expected 0x3fa2 got 0x3fa3\\n"); return 3;'
        write(root, f"tests/t{i:02d}.c", f"#include <stdio.h>\nint main(void) {{ {body} return 0; }}\n")
        tests.append(f"add_executable(t{i:02d} tests/t{i:02d}.c)\nadd_test(NAME codec_{i:02d} COMMAND t{i:02d})\n")
    write(root, "CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(codec C)\nenable_testing()\n"
          + "".join(tests))
    sh(["cmake", "-S", ".", "-B", "build"], root)
    sh(["cmake", "--build", "build"], root)
    return Run(["ctest", "-V"], [
        S("stdout", r"^10: checksum mismatch: expected 0x3fa2 got 0x3fa3$", "what the failing test said"),
        S("stdout", r"^10/14 Test #10: codec_09 \.+\*\*\*Failed", "the failing test, in place among 13 passing"),
        S("stdout", r"^\d+% tests passed, 1 tests failed out of 14$", "the closing count"),
        S("stdout", r"^\t 10 - codec_09 \(Failed\)$", "the list of failed tests"),
        S("stderr", r"^Errors while running CTest$", "the verdict"),
    ], cwd="build", expect_exit=exits(8))


@recipe("java-jul-log-severe", "java", "runtime", ["java", "-version"], needs=("java", "javac"))
def _java_jul(root):
    write(root, "src/shop/Importer.java", """
        package shop;

        import java.util.logging.Level;
        import java.util.logging.Logger;

        public class Importer {
            private static final Logger LOG = Logger.getLogger(Importer.class.getName());

            static int parseQuantity(String field) {
                return Integer.parseInt(field.trim());
            }

            static void importRow(int n, String[] row) {
                int qty = parseQuantity(row[2]);
                LOG.info("row " + n + ": sku=" + row[0] + " qty=" + qty);
            }

            public static void main(String[] args) {
                LOG.info("import started: 400 rows");
                for (int n = 1; n <= 400; n++) {
                    String[] row = {"SKU-" + n, "item " + n, n == 233 ? "12 pcs" : Integer.toString(n % 9)};
                    try {
                        importRow(n, row);
                    } catch (NumberFormatException e) {
                        LOG.log(Level.SEVERE, "row " + n + " rejected", e);
                    }
                    if (n == 120) LOG.warning("slow batch: rows 101-120 took 1.9s");
                }
                LOG.info("import finished: 399 rows imported, 1 rejected");
            }
        }
        """)
    sh(["javac", "-d", "classes", "src/shop/Importer.java"], root)
    write(root, "logging.properties", """
        handlers = java.util.logging.ConsoleHandler
        java.util.logging.ConsoleHandler.level = ALL
        java.util.logging.SimpleFormatter.format = %1$tFT%1$tT %4$s %2$s %5$s%6$s%n
        """)
    return Run(["java", "-Djava.util.logging.config.file=logging.properties", "-cp", "classes", "shop.Importer"],
               [
        S("stderr", r" SEVERE shop\.Importer main row 233 rejected$", "the one rejected row among 400 imported"),
        S("stderr", r"^java\.lang\.NumberFormatException: For input string: \"12 pcs\"$", "its exception"),
        S("stderr", r"^\tat shop\.Importer\.\w+\(Importer\.java:\d+\)$", "the project's own frames"),
        S("stderr", r" INFO shop\.Importer main import finished: 399 rows imported, 1 rejected$", "the closing tally"),
    ], expect_exit=exits(0))
