"""Masked recipes for compilers, build tools, test frameworks, profilers, sanitizers and crashes: DejaGnu's
runtest, Kyua, CxxTest, remake, rake, SWIG, callgrind_annotate, ms_print, LeakSanitizer, lldb, mono, SDCC,
hyperfine (its outlier warning comes and goes between runs, so it is no signal), elixir.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from masked_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "dejagnu": "1.6.3-1", "kyua": "0.13+git20190402+a685f911237e-1+b1", "atf-sh": "0.21-6",
    "cxxtest": "4.4+git171022-2", "remake": "4.3+dbg-1.6+dfsg-1", "swig": "4.1.0-0.2", "lldb-14": "1:14.0.6-12",
    "sdcc": "4.2.0+dfsg-1", "hyperfine": "1.15.0-2",
}


# --- DejaGnu: a calculator's testsuite run with --all; one failure among 2,400 checks --------------------

_CALC_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    long a = strtol(argv[2], NULL, 10), b = strtol(argv[3], NULL, 10);
    if (!strcmp(argv[1], "add")) printf("%ld\\n", a + b);
    else if (!strcmp(argv[1], "sub")) printf("%ld\\n", a - b);
    else if (!strcmp(argv[1], "mul")) printf("%ld\\n", a * b);
    else if (!strcmp(argv[1], "mod")) printf("%ld\\n", a % b);
    else return 2;
    return 0;
}
"""
_CALC_EXP = """\
# Checks of calc OP on generated operands, against Tcl's own arithmetic.
foreach a {A_VALUES} {
    foreach b {B_VALUES} {
        set got [exec ./calc OP $a $b]
        set want [expr {EXPR}]
        if {$got == $want} {
            pass "OP $a $b"
        } else {
            fail "OP $a $b: got $got, want $want"
        }
    }
}
"""


@recipe("runtest-calc-one-unexpected-failure", "runtest", "test-runner", ["runtest", "--version"],
        needs=("runtest", "gcc"))
def _runtest(root):
    """Write the `runtest-calc-one-unexpected-failure` project under `root`; return its command and signals."""
    write(root, "calc.c", _CALC_C)
    sh("gcc -O0 -o calc calc.c", root)
    write(root, "testsuite/config/unix.exp", "# calc runs as a plain program\n")
    write(root, "testsuite/lib/calc.exp", "proc calc_version {} { clone_output \"calc 1.0\" }\n")
    exprs = {"add": "$a + $b", "sub": "$a - $b", "mul": "$a * $b", "mod": "$a % $b"}
    a_values = " ".join(str(n * 7 + 1) for n in range(25))
    for op, expr in exprs.items():
        b_values = " ".join(str(n + 1) for n in range(24))
        write(root, f"testsuite/calc.{op}/{op}.exp", _CALC_EXP.replace("OP", op).replace("EXPR", expr)
              .replace("A_VALUES", a_values).replace("B_VALUES", b_values))
    write(root, "testsuite/calc.mod/negative.exp", _CALC_EXP.replace("OP", "mod").replace("EXPR", exprs["mod"])
          .replace("A_VALUES", "100 99").replace("B_VALUES", "-3"))
    return Run(["runtest", "--tool", "calc", "--srcdir", "testsuite", "--all"], [
        S("stdout", r"^FAIL: mod \d+ -3: got -?\d+, want -?\d+$", "the failure among 2,400 passes"),
        S("stdout", r"^Running testsuite/calc\.mod/negative\.exp \.\.\.$", "the test file the failure is in"),
        S("stdout", r"^# of unexpected failures\s+\d+$", "the failure count"),
        S("stdout", r"^# of expected passes\s+\d+$", "the pass count"),
    ], expect_exit=exits(1))


# --- Kyua running ATF shell tests of a key-value store's scripts: 400 cases, one fails ------------------

def _atf_program(suite: str, count: int, broken: int | None) -> str:
    """An atf-sh test program of `count` cases; case `broken` expects a key the script stores elsewhere."""
    cases, adds = [], []
    for n in range(count):
        want = f"value_{n}" if n != broken else f"value_{n + 1}"
        cases.append(f"atf_test_case {suite}_{n:03d}\n{suite}_{n:03d}_body() {{\n"
                     f"    printf 'key_{n}=value_{n}\\n' > store.txt\n"
                     f"    atf_check -s exit:0 -o inline:'{want}\\n' sh -c \"sed -n 's/^key_{n}=//p' store.txt\"\n}}\n\n")
        adds.append(f"    atf_add_test_case {suite}_{n:03d}\n")
    return "#! /usr/bin/env atf-sh\n\n" + "".join(cases) + "atf_init_test_cases() {\n" + "".join(adds) + "}\n"


@recipe("kyua-test-one-failed-case", "kyua", "test-runner", ["sh", "-c", "kyua about | head -1"], needs=("kyua", "atf-sh"))
def _kyua(root):
    """Write the `kyua-test-one-failed-case` project under `root`; return its command and signals."""
    suites = ("put", "get", "delete", "scan")
    for suite in suites:
        write(root, f"tests/{suite}_test", _atf_program(suite, 100, 73 if suite == "scan" else None), mode=0o755)
    write(root, "tests/Kyuafile", "syntax(2)\ntest_suite('kvstore')\n"
          + "".join(f"atf_test_program{{name='{suite}_test'}}\n" for suite in suites))
    return Run(["kyua", "test", "--kyuafile", "tests/Kyuafile"], [
        S("stdout", r"scan_test:scan_073\s+->\s+failed", "the failed case among 400"),
        S("stdout", r"^399/400 passed \(1 failed\)$", "the totals"),
    ], expect_exit=exits(1))


# --- CxxTest: a money library's 480 generated tests, ErrorPrinter; two assertions fail -------------------

def _cxxtest_suite(name: str, bad: set) -> str:
    """One suite of 120 tests on `Money`; tests in `bad` expect the wrong rounding."""
    tests = []
    for n in range(120):
        want = n * 101 + (1 if n in bad else 0)
        tests.append(f"    void test_{name}_{n:03d}() {{ TS_ASSERT_EQUALS(Money({n}, {n}).cents(), {want}); }}\n")
    return (f"#include <cxxtest/TestSuite.h>\n#include \"money.h\"\n\nclass {name.capitalize()}Suite : "
            f"public CxxTest::TestSuite {{\npublic:\n" + "".join(tests) + "};\n")


@recipe("cxxtest-error-printer-two-failures", "cxxtest", "test-runner", ["cxxtestgen", "--version"],
        needs=("cxxtestgen", "g++"))
def _cxxtest(root):
    """Write the `cxxtest-error-printer-two-failures` project under `root`; return its command and signals."""
    write(root, "money.h", "#pragma once\nstruct Money {\n    long units, part;\n    Money(long u, long p) : units(u), part(p) {}\n"
          "    long cents() const { return units * 100 + part; }\n};\n")
    headers = []
    for name, bad in (("parse", set()), ("round", {44}), ("convert", set()), ("format", {97})):
        headers.append(f"tests/{name}_suite.h")
        write(root, headers[-1], _cxxtest_suite(name, bad))
    sh(["cxxtestgen", "--error-printer", "-o", "runner.cpp", *headers], root)
    sh(["g++", "-I.", "-o", "runner", "runner.cpp"], root)
    return Run(["./runner"], [
        S("stdout", r"^In (Round|Format)Suite::test_(round_044|format_097):$", "the failed tests' headings"),
        S("stdout", r"^tests/(round|format)_suite\.h:\d+: Error: Expected", "the failed assertions and their places"),
        S("stdout", r"^Failed 2 and Skipped 0 of 480 tests$", "the totals"),
    ], expect_exit=exits(2))


# --- remake -k: a 320-source C library built with warnings on; one source does not compile -----------

def _remake_source(n: int) -> str:
    """One source of the library; a few compare signed and unsigned, number 214 uses an undeclared field."""
    cmp = f"    if (v < {n}u)\n        return 0;\n" if n % 53 == 9 else ""
    body = "    return h->crc + v;\n" if n == 214 else f"    return h->size * {n + 1} + v;\n"
    return (f"#include \"lib.h\"\n\nint part_{n:03d}(const struct header *h, int v)\n{{\n{cmp}{body}}}\n")


@recipe("remake-keep-going-one-failure", "remake", "build", ["remake", "--version"], needs=("remake", "gcc"))
def _remake(root):
    """Write the `remake-keep-going-one-failure` project under `root`; return its command and signals."""
    write(root, "src/lib.h", "struct header { int size; int flags; };\n"
          + "".join(f"int part_{n:03d}(const struct header *h, int v);\n" for n in range(320)))
    for n in range(320):
        write(root, f"src/part_{n:03d}.c", _remake_source(n))
    write(root, "Makefile", "CFLAGS = -O1 -Wall -Wextra\nSRCS = $(wildcard src/*.c)\nOBJS = $(SRCS:src/%.c=build/%.o)\n\n"
          "libparts.a: $(OBJS)\n\tar rcs $@ $^\n\nbuild/%.o: src/%.c src/lib.h | build\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\n"
          "build:\n\tmkdir -p build\n")
    return Run(["remake", "-k"], [
        S("stderr", r"^src/part_214\.c:\d+:\d+: error: .const struct header. has no member named .crc.", "the error"),
        S("stderr", r"^src/part_214\.c: In function .part_214.:$", "its heading"),
        S("stderr", r"^Makefile:\d+: \*\*\* \[build/part_214\.o\] error 1$", "the failed target"),
        S("stderr", r"^remake: Target .libparts\.a. not remade because of errors\.$", "the library not built"),
    ], expect_exit=exits(2))


# --- rake --trace: a reports Rakefile renders 160 regions, then a pricing helper raises KeyError ---------

_PRICING_RB = """\
module Pricing
  RATES = { 'EU' => 0.2, 'US' => 0.08, 'APAC' => 0.1 }.freeze

  def self.tax(region, net)
    (net * RATES.fetch(region)).round(2)
  end

  def self.total(order)
    net = order[:lines].sum { |l| l[:qty] * l[:price] }
    net + tax(order[:region], net)
  end
end
"""

_RAKEFILE = """\
require_relative 'lib/pricing'

REGIONS = (1..160).map { |n| n == 131 ? 'LATAM' : %w[EU US APAC][n % 3] }

directory 'out'

REGIONS.each_with_index do |region, n|
  desc "report #{n}"
  task "report_#{n}" => 'out' do
    order = { region: region, lines: [{ qty: n % 4 + 1, price: 10.5 }, { qty: 2, price: n + 0.25 }] }
    File.write("out/report_#{n}.txt", "#{n} #{region} #{Pricing.total(order)}\\n")
    puts "report #{n}: #{region} #{Pricing.total(order)}"
  end
end

task reports: REGIONS.each_index.map { |n| "report_#{n}" }
task default: :reports
"""


@recipe("rake-trace-key-error", "rake", "build", ["rake", "--version"], needs=("rake",))
def _rake(root):
    """Write the `rake-trace-key-error` project under `root`; return its command and signals."""
    write(root, "lib/pricing.rb", _PRICING_RB)
    write(root, "Rakefile", _RAKEFILE)
    return Run(["rake", "--trace"], [
        S("stderr", r"^rake aborted!$", "the abort"),
        S("stderr", r"^KeyError: key not found: \"LATAM\"$", "the exception"),
        S("stderr", r"/lib/pricing\.rb:5:in .(Pricing\.)?tax.$", "the project's frame that raised"),
        S("stderr", r"/Rakefile:\d+:in .block \(2 levels\) in <top \(required\)>.$", "the Rakefile's task"),
        S("stderr", r"^Tasks: TOP => default => reports => report_130$", "the chain of tasks to the one that failed"),
    ], expect_exit=exits(1))


# --- SWIG: Python bindings of a 40-header C++ geometry library; many warnings and one syntax error ---------

def _swig_header(n: int) -> str:
    """One header: a class with an operator SWIG cannot wrap and a method named `print`; number 29 has a
    construct SWIG cannot parse."""
    extra = "    auto scaled(double f) const -> Shape%02d { return *this; }\n" % n
    bad = "    template <typename T> requires Numeric<T> void grow(T f);\n" if n == 29 else ""
    return (f"#pragma once\n#include <ostream>\n\nclass Shape{n:02d} {{\npublic:\n    Shape{n:02d}();\n"
            f"    double area() const;\n    void print() const;\n    Shape{n:02d} &operator=(const Shape{n:02d} &);\n"
            f"    friend std::ostream &operator<<(std::ostream &, const Shape{n:02d} &);\n"
            f"    bool operator==(const Shape{n:02d} &) const;\n{extra}{bad}}};\n")


@recipe("swig-python-warnings-one-error", "swig", "build", ["swig", "-version"], needs=("swig",))
def _swig(root):
    """Write the `swig-python-warnings-one-error` project under `root`; return its command and signals."""
    for n in range(40):
        write(root, f"include/shape{n:02d}.h", _swig_header(n))
    write(root, "geometry.i", "%module geometry\n%{\n" + "".join(f"#include \"shape{n:02d}.h\"\n" for n in range(40))
          + "%}\n\n" + "".join(f"%include \"shape{n:02d}.h\"\n" for n in range(40)))
    return Run(["swig", "-c++", "-python", "-Wall", "-Iinclude", "-outdir", "build", "-o", "build/geometry_wrap.cxx",
                "geometry.i"], [
        S("stderr", r"^include/shape29\.h:\d+: Error: ", "the error and its place"),
    ], command=["sh", "-c", "mkdir -p build && exec swig -c++ -python -Wall -Iinclude -outdir build "
                "-o build/geometry_wrap.cxx geometry.i"], expect_exit=exits(1))


# --- callgrind_annotate: a tokenizer's profile with its sources annotated; one function dominates ------

def _tokenizer_c() -> str:
    """A tokenizer: 120 small classifier functions called per token, and a hashing loop that dominates."""
    classes = "".join(f"static int class_{n:03d}(int c)\n{{\n    return (c * {n + 3} + {n}) & 0xff;\n}}\n\n"
                      for n in range(120))
    calls = "".join(f"        k ^= class_{n:03d}(c);\n" for n in range(120))
    return ("#include <stdio.h>\n\n" + classes
            + "static unsigned long hash_token(const char *s, int n)\n{\n    unsigned long h = 5381;\n"
            "    for (int r = 0; r < 64; r++)\n        for (int i = 0; i < n; i++)\n"
            "            h = h * 33 + (unsigned char)s[i];\n    return h;\n}\n\n"
            "int main(void)\n{\n    static char text[4096];\n    unsigned long h = 0;\n    int k = 0;\n"
            "    for (int i = 0; i < (int)sizeof text; i++)\n        text[i] = (char)('a' + i % 26);\n"
            "    for (int t = 0; t < 3000; t++) {\n        int c = text[t % 4096];\n" + calls
            + "        h ^= hash_token(text + t % 1024, 48);\n    }\n    printf(\"%d %lu\\n\", k, h);\n    return 0;\n}\n")


@recipe("callgrind-annotate-auto-hot-loop", "callgrind_annotate", "profiler", ["callgrind_annotate", "--version"],
        needs=("valgrind", "callgrind_annotate", "gcc"))
def _callgrind(root):
    """Write the `callgrind-annotate-auto-hot-loop` project under `root`; return its command and signals."""
    write(root, "tokenizer.c", _tokenizer_c())
    sh("gcc -g -O0 -o tokenizer tokenizer.c && valgrind --tool=callgrind --callgrind-out-file=callgrind.out "
       "./tokenizer", root)
    return Run(["callgrind_annotate", "--auto=yes", "callgrind.out"], [
        S("stdout", r"^\s*[\d,]+ \(\s*\d+\.\d+%\)\s+PROGRAM TOTALS$", "the total cost"),
        S("stdout", r"^\s*[\d,]+ \(\s*[4-9]\d\.\d+%\)\s+.*tokenizer\.c:hash_token", "the hot function, first"),
        S("stdout", r"^\s*[\d,]+ \(\s*[4-9]\d\.\d+%\)\s+h = h \* 33", "the hot line in the annotated source"),
    ], expect_exit=exits(0))


# --- ms_print: massif's heap profile of a cache that keeps every entry; the peak's allocation tree -------

_CACHE_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry { char *key; char *value; struct entry *next; };

static struct entry *cache_put(struct entry *head, int n)
{
    struct entry *e = malloc(sizeof *e);
    e->key = malloc(32);
    snprintf(e->key, 32, "session-%d", n);
    e->value = malloc(512 + n % 256);
    memset(e->value, 'x', 512);
    e->next = head;
    return e;
}

static char *render_row(int n)
{
    char *row = malloc(96);
    snprintf(row, 96, "row %d", n);
    return row;
}

int main(void)
{
    struct entry *head = NULL;
    long total = 0;
    for (int n = 0; n < 20000; n++) {
        head = cache_put(head, n);
        char *row = render_row(n);
        total += strlen(row);
        free(row);
    }
    printf("%ld\\n", total);
    return 0;
}
"""


@recipe("ms-print-massif-cache-growth", "ms_print", "profiler", ["ms_print", "--version"],
        needs=("valgrind", "ms_print", "gcc"))
def _ms_print(root):
    """Write the `ms-print-massif-cache-growth` project under `root`; return its command and signals."""
    write(root, "cache.c", _CACHE_C)
    sh("gcc -g -O0 -o cache cache.c && valgrind --tool=massif --massif-out-file=massif.out ./cache", root)
    return Run(["ms_print", "massif.out"], [
        S("stdout", r"^ Detailed snapshots: \[.*\(peak\)", "which snapshot is the peak"),
        S("stdout", r"^ 53 +[\d,]+ +14,625,000 ", "the peak snapshot's row"),
        S("stdout", r"^->87\.00% \(12,723,873B\) 0x[0-9A-F]+: cache_put \(cache\.c:12\)$", "the peak's biggest site"),
    ], expect_exit=exits(0))


# --- LeakSanitizer: a config loader built with -fsanitize=leak; one parse path forgets to free -----------

_LOADER_LSAN_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct option { char *name; char *value; };

static char *dup_range(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    memcpy(out, s, n);
    out[n] = 0;
    return out;
}

static int parse_line(const char *line, struct option *opt)
{
    const char *eq = strchr(line, '=');
    if (!eq)
        return -1;
    opt->name = dup_range(line, (size_t)(eq - line));
    opt->value = dup_range(eq + 1, strlen(eq + 1));
    if (opt->value[0] == '@')
        return 1;
    return 0;
}

int main(void)
{
    char line[64];
    int kept = 0;
    for (int n = 0; n < 400; n++) {
        struct option opt;
        snprintf(line, sizeof line, "key%d=%svalue%d", n, n % 40 == 7 ? "@" : "", n);
        int rc = parse_line(line, &opt);
        if (rc == 1) {
            printf("option %s is an include, skipped\\n", opt.name);
            continue;
        }
        kept++;
        free(opt.name);
        free(opt.value);
    }
    printf("%d options loaded\\n", kept);
    return 0;
}
"""


@recipe("lsan-config-loader-leaks", "lsan", "crash", ["clang-14", "--version"], needs=("clang-14",))
def _lsan(root):
    """Write the `lsan-config-loader-leaks` project under `root`; return its command and signals."""
    write(root, "loader.c", _LOADER_LSAN_C)
    sh("clang-14 -g -O0 -fsanitize=leak -fno-omit-frame-pointer -o loader loader.c", root)
    return Run(["./loader"], [
        S("stderr", r"ERROR: LeakSanitizer: detected memory leaks$", "the verdict"),
        S("stderr", r"^Direct leak of \d+ byte\(s\) in 10 object\(s\) allocated from:$", "the two leaks"),
        S("stderr", r"^    #2 0x[0-9a-f]+ in parse_line .*/loader\.c:2[01]:", "the project's frames that allocated"),
        S("stderr", r"^SUMMARY: LeakSanitizer: \d+ byte\(s\) leaked in 20 allocation\(s\)\.$", "the total"),
    ], expect_exit=exits(23))


# --- lldb in batch mode: a CSV summarizer crashes on a short row; the backtrace --------------------------

_SUMMARIZE_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row { char *fields[4]; };

static void split(char *line, struct row *r)
{
    int i = 0;
    for (char *tok = strtok(line, ","); tok && i < 4; tok = strtok(NULL, ","))
        r->fields[i++] = tok;
}

static long amount(const struct row *r)
{
    return strtol(r->fields[3], NULL, 10) + (long)strlen(r->fields[3]);
}

int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "r");
    char line[256];
    long total = 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        struct row r = { { NULL, NULL, NULL, NULL } };
        split(line, &r);
        total += amount(&r);
        n++;
    }
    printf("%d rows, total %ld\\n", n, total);
    return 0;
}
"""


@recipe("lldb-batch-null-field-backtrace", "lldb", "crash", ["lldb-14", "--version"], needs=("lldb-14", "gcc"))
def _lldb(root):
    """Write the `lldb-batch-null-field-backtrace` project under `root`; return its command and signals."""
    write(root, "summarize.c", _SUMMARIZE_C)
    write(root, "sales.csv", "".join(f"{n},store{n % 7},sku{n},{n * 3}\n" if n != 41 else f"{n},store{n % 7},sku{n}\n"
                                     for n in range(60)))
    sh("gcc -g -O0 -o summarize summarize.c", root)
    return Run(["lldb-14", "--batch", "-o", "run", "-k", "bt", "-k", "quit", "--", "./summarize", "sales.csv"], [
        S("stdout", r"stop reason = signal SIGSEGV", "the crash, at the stop and atop the backtrace"),
        S("stdout", r"frame #\d+: 0x[0-9a-f]+ summarize`amount\(r=0x[0-9a-f]+\) at summarize\.c:16", "the project's "
          "frame that crashed"),
        S("stdout", r"frame #\d+: 0x[0-9a-f]+ summarize`main\(argc=2, argv=0x[0-9a-f]+\) at summarize\.c:28", "its caller"),
    ], expect_exit=exits(0, 1))


# --- mono: an inventory tool prints 300 stock lines, then a ledger post throws; the unhandled exception --

_LEDGER_CS = """\
using System;
using System.Collections.Generic;

namespace Inventory {
    public class Ledger {
        readonly Dictionary<string, int> stock = new Dictionary<string, int>();

        public void Receive(string sku, int count) {
            stock[sku] = (stock.ContainsKey(sku) ? stock[sku] : 0) + count;
        }

        public int Post(string sku, int count) {
            int have = stock[sku];
            if (have < count)
                throw new InvalidOperationException($"cannot ship {count} of {sku}: {have} in stock");
            stock[sku] = have - count;
            return stock[sku];
        }
    }

    public static class Program {
        static void Ship(Ledger ledger, int n) {
            int left = ledger.Post($"SKU-{n % 50}", n == 283 ? 999 : 1);
            Console.WriteLine($"order {1000 + n}: shipped SKU-{n % 50}, {left} left");
        }

        public static void Main() {
            var ledger = new Ledger();
            for (int k = 0; k < 50; k++)
                ledger.Receive($"SKU-{k}", 40);
            for (int n = 0; n < 300; n++)
                Ship(ledger, n);
        }
    }
}
"""


@recipe("mono-unhandled-invalid-operation", "mono", "crash", ["mono", "--version"], needs=("mono", "mcs"))
def _mono(root):
    """Write the `mono-unhandled-invalid-operation` project under `root`; return its command and signals."""
    write(root, "src/Ledger.cs", _LEDGER_CS)
    sh("mcs -debug -out:inventory.exe src/Ledger.cs", root)
    return Run(["mono", "--debug", "inventory.exe"], [
        S("stderr", r"^Unhandled Exception:$", "the start of the trace"),
        S("stderr", r"^System\.InvalidOperationException: cannot ship 999 of SKU-33: \d+ in stock$", "the exception"),
        S("stderr", r"^\s+at Inventory\.Ledger\.Post .* in .*src/Ledger\.cs:18 $", "the frame that threw, in both traces"),
        S("stderr", r"^\[ERROR\] FATAL UNHANDLED EXCEPTION: System\.InvalidOperationException", "mono's verdict"),
    ], expect_exit=exits(1))


# --- SDCC: firmware for an 8051 board; the compile stops on two errors ------------------------------------

_FIRMWARE_C = """\
#include <8051.h>

#define LED_PORT P1

static unsigned char ticks;

void timer0_isr(void) __interrupt(1)
{
    ticks++;
    if (ticks == 200) {
        LED_PORT ^= led_mask;
        ticks = 0;
    }
}

unsigned int read_adc(unsigned char channel)
{
    return P2 + channel;
}

void main(void)
{
    struct reading r;
    TMOD = 0x01;
    ET0 = 1;
    EA = 1;
    TR0 = 1;
    while (1) {
        r.value = read_adc(3, 1);
    }
}
"""


@recipe("sdcc-firmware-compile-errors", "sdcc", "compiler", ["sdcc", "--version"], needs=("sdcc",))
def _sdcc(root):
    """Write the `sdcc-firmware-compile-errors` project under `root`; return its command and signals."""
    write(root, "firmware.c", _FIRMWARE_C)
    return Run(["sdcc", "-mmcs51", "firmware.c"], [
        S("stderr", r"^firmware\.c:11: error \d+: .*led_mask", "the undeclared name"),
        S("stderr", r"^firmware\.c:29: error \d+: ", "the unknown struct member and the call with too many arguments"),
    ], expect_exit=exits(1))


# --- hyperfine: three ways to sort a 200,000-line file compared; the summary ranks them ------------------

@recipe("hyperfine-compare-sort-modes", "hyperfine", "profiler", ["hyperfine", "--version"], needs=("hyperfine",))
def _hyperfine(root):
    """Write the `hyperfine-compare-sort-modes` project under `root`; return its command and signals."""
    write(root, "numbers.txt", "".join(f"{(n * 2654435761) % 1000003}.{n % 97:02d}\n" for n in range(200000)))
    return Run(["hyperfine", "--style", "basic", "--warmup", "2", "--runs", "10", "-N", "sort -n numbers.txt",
                "sort -g numbers.txt", "sort -n --parallel=1 -S 64K numbers.txt"], [
        S("stdout", r"^Summary$", "the summary"),
        S("stdout", r"^  '.*' ran$", "the fastest command"),
        S("stdout", r"times faster than '", "how much faster than each other"),
    ], expect_exit=exits(0))


# --- elixir: a billing script prints 400 invoices, then one customer has no region; the raised error ----

_BILLING_EXS = """\
defmodule Billing do
  @rates %{"EU" => 0.2, "US" => 0.08, "APAC" => 0.1}

  def total(invoice) do
    net = Enum.reduce(invoice.lines, 0, fn {qty, price}, acc -> acc + qty * price end)
    net + tax(invoice.customer, net)
  end

  defp tax(customer, net) do
    rate = Map.fetch!(@rates, customer.region)
    Float.round(net * rate, 2)
  end
end

regions = ["EU", "US", "APAC"]

for n <- 1..400 do
  region = if n == 356, do: "LATAM", else: Enum.at(regions, rem(n, 3))
  invoice = %{id: "INV-#{1000 + n}", customer: %{name: "Customer #{n}", region: region},
              lines: for(k <- 1..(rem(n, 4) + 1), do: {k, rem(n, 50) + 0.25})}
  IO.puts("#{invoice.id}  #{length(invoice.lines)} lines  total #{Billing.total(invoice)}")
end
"""


@recipe("elixir-script-key-error", "elixir", "crash", ["elixir", "--short-version"], needs=("elixir",))
def _elixir(root):
    """Write the `elixir-script-key-error` project under `root`; return its command and signals."""
    write(root, "billing.exs", _BILLING_EXS)
    return Run(["elixir", "billing.exs"], [
        S("stderr", r"^\*\* \(KeyError\) key \"LATAM\" not found in:", "the exception"),
        S("stderr", r"^\s+billing\.exs:10: Billing\.tax/2$", "the project's frame that raised"),
    ], expect_exit=exits(1))
