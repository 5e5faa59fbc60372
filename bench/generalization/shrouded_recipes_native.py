"""Shrouded recipes for compilers, build tools, test frameworks, static checkers, profilers and crashes: Criterion,
Boost.Test, jam, uncrustify, yosys, groovy, gprof, Emacs ERT, raku, haxe, clisp, scan-build, ltrace, heaptrack_print.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from shrouded_common import Run, S, exits, recipe, sh, write

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "libcriterion-dev": "2.4.1-2", "libboost-test-dev": "1.74.0.3", "jam": "2.6.1-2", "uncrustify": "0.72.0+dfsg1-2",
    "yosys": "0.23-6", "groovy": "2.4.21-8", "emacs-nox": "1:28.2+1-15+deb12u4", "rakudo": "2022.12-1",
    "haxe": "1:4.2.5-1", "clisp": "1:2.49.20210628.gitde01f0f-3",
}


# --- Criterion: a C parser library's suite, verbose, one failing test among 640 ------------------------

_CRIT_SUITES = ("tokenize", "number", "string", "escape", "array", "object", "nesting", "unicode")


def _criterion_suite(suite: str) -> str:
    """80 tests of one suite; `number` test 57 expects the wrong rounding of a long fraction."""
    tests = []
    for n in range(80):
        value, expect = n * 3 + 1, n * 3 + 1
        if suite == "number" and n == 57:
            expect = value + 1
        tests.append(f"Test({suite}, accepts_input_{n:02d}) {{\n    struct doc d = parse_count(\"{value}\", {n % 5});\n"
                     f"    cr_assert_eq(d.value, {expect}, \"{suite} input {n} parsed as %ld\", d.value);\n"
                     f"    cr_expect(d.ok);\n}}\n\n")
    return "#include <criterion/criterion.h>\n#include \"doc.h\"\n\n" + "".join(tests)


@recipe("criterion-verbose-one-failure", "criterion", "test-runner",
        ["dpkg-query", "-W", "-f", "${Version}\\n", "libcriterion-dev"], needs=("gcc",))
def _criterion(root):
    """Write the `criterion-verbose-one-failure` project under `root`; return its command and signals."""
    write(root, "src/doc.h", "struct doc { long value; int ok; };\nstruct doc parse_count(const char *s, int depth);\n")
    write(root, "src/doc.c", "#include <stdlib.h>\n#include \"doc.h\"\n\nstruct doc parse_count(const char *s, int depth) {\n"
          "    struct doc d = { strtol(s, NULL, 10), depth < 8 };\n    return d;\n}\n")
    for suite in _CRIT_SUITES:
        write(root, f"tests/test_{suite}.c", _criterion_suite(suite))
    sh("gcc -Isrc -o parser_tests src/doc.c tests/*.c -lcriterion", root)
    return Run(["./parser_tests", "--verbose", "--jobs", "1"], [
        S("stderr", r"tests/test_number\.c:\d+: Assertion Failed", "the failed assertion and its place"),
        S("stderr", r"number input 57 parsed as 172", "the assertion's message"),
        S("stderr", r"\[FAIL\] number::accepts_input_57", "the failed test among 640"),
        S("stderr", r"Synthesis: Tested: 640 \| Passing: 639 \| Failing: 1 \| Crashing: 0", "the totals"),
    ], expect_exit=exits(1))


# --- Boost.Test: a ledger module's suites logged at test_suite level, one failed check among 720 -------

def _boost_suite(k: int, name: str) -> str:
    """One suite of 90 cases; `rounding` case 61 checks the wrong half-cent."""
    cases = []
    for n in range(90):
        expect = f"{n * 100 + k}" if not (name == "rounding" and n == 61) else f"{n * 100 + k + 1}"
        cases.append(f"BOOST_AUTO_TEST_CASE(case_{n:02d}_keeps_cents)\n{{\n"
                     f"    BOOST_TEST(to_cents({n}, {k}) == {expect});\n}}\n\n")
    return f"BOOST_AUTO_TEST_SUITE({name})\n\n" + "".join(cases) + "BOOST_AUTO_TEST_SUITE_END()\n\n"


_BOOST_SUITES = ("parsing", "rounding", "currency", "ledger", "accounts", "reports", "transfers", "taxes")


@recipe("boost-test-log-one-failure", "boost-test", "test-runner",
        ["dpkg-query", "-W", "-f", "${Version}\\n", "libboost-test-dev"], needs=("g++",))
def _boost_test(root):
    """Write the `boost-test-log-one-failure` project under `root`; return its command and signals."""
    write(root, "tests/ledger_tests.cpp", "#define BOOST_TEST_MODULE ledger\n#include <boost/test/included/unit_test.hpp>\n\n"
          "static long to_cents(long units, long extra) { return units * 100 + extra; }\n\n"
          + "".join(_boost_suite(k, name) for k, name in enumerate(_BOOST_SUITES)))
    sh(["g++", "-std=c++17", "-O0", "-o", "ledger_tests", "tests/ledger_tests.cpp"], root)
    return Run(["./ledger_tests", "--log_level=test_suite"], [
        S("stdout", r'tests/ledger_tests\.cpp\(\d+\): .*error: in "rounding/case_61_keeps_cents": check to_cents\(61, 1\) '
          r'== 6102 has failed \[6101 != 6102\]', "the failed check, its place and its values (Boost colours it)"),
        S("stderr", r'\*\*\* 1 failure is detected in the test module "ledger"', "the verdict"),
    ], expect_exit=exits(201))


# --- jam: a C tool of 360 sources built with warnings on; one source does not compile --------------------

def _jam_source(n: int) -> str:
    """One source of the tool; a few have an unused variable, number 287 calls an undeclared function."""
    unused = "    int scratch;\n" if n % 97 == 5 else ""
    call = "    return checksum_block(v);\n" if n == 287 else f"    return v * {n + 3} + {n};\n"
    return f"int stage_{n:03d}(int v);\n\nint stage_{n:03d}(int v)\n{{\n{unused}{call}}}\n"


@recipe("jam-build-one-failure", "jam", "build", ["jam", "-v"], needs=("jam", "gcc"))
def _jam(root):
    """Write the `jam-build-one-failure` project under `root`; return its command and signals."""
    names = []
    for n in range(360):
        path = f"src/stages/stage_{n:03d}.c"
        write(root, path, _jam_source(n))
        names.append(path)
    calls = "".join(f"    v = stage_{n:03d}(v);\n" for n in range(360))
    decls = "".join(f"int stage_{n:03d}(int v);\n" for n in range(360))
    write(root, "src/main.c", f"#include <stdio.h>\n{decls}\nint main(void)\n{{\n    int v = 1;\n{calls}"
          "    printf(\"%d\\n\", v);\n    return 0;\n}\n")
    write(root, "Jamfile", "CCFLAGS = -Wall -Werror=implicit-function-declaration ;\nMain pipeline : src/main.c "
          + " ".join(names) + " ;\n")
    return Run(["jam", "-j1"], [
        S("stderr", r"stage_287\.c:\d+:\d+: error: implicit declaration of function .checksum_block.", "the error"),
        S("stderr", r"^src/stages/stage_287\.c: In function .stage_287.:$", "the error's heading"),
        S("stdout", r"^\.\.\.failed Cc src/stages/stage_287\.o \.\.\.$", "the failed step"),
        S("stdout", r"^\.\.\.skipped pipeline for lack of src/stages/stage_287\.o\.\.\.$", "the program not linked"),
        S("stdout", r"^\.\.\.failed updating 1 target\(s\)\.\.\.$", "the failure count"),
    ], expect_exit=exits(1))


# --- uncrustify: the format check of a C tree in CI; two files of 900 are not formatted ---------------

_UNCRUSTIFY_CFG = ("indent_columns = 4\nindent_with_tabs = 0\nsp_arith = force\nsp_assign = force\n"
                   "sp_before_sparen = force\nsp_inside_paren = remove\nnl_fdef_brace = add\nnl_if_brace = remove\n"
                   "mod_full_brace_if = add\n")


def _uncrustify_source(n: int) -> str:
    """One source file of the tree, written as the project's style wants it (after a format pass)."""
    return (f"/* codec {n} */\n#include \"codec.h\"\n\nint codec_{n:03d}_encode(int v)\n{{\n    int r = v * {n + 2};\n"
            f"    if (r > {n * 10}) {{\n        r = r - {n};\n    }}\n    return r;\n}}\n\n"
            f"int codec_{n:03d}_decode(int v)\n{{\n    return v / {n + 2};\n}}\n")


@recipe("uncrustify-check-two-unformatted", "uncrustify", "formatter", ["uncrustify", "--version"],
        needs=("uncrustify",))
def _uncrustify(root):
    """Write the `uncrustify-check-two-unformatted` project under `root`; return its command and signals."""
    write(root, ".uncrustify.cfg", _UNCRUSTIFY_CFG)
    paths = []
    for n in range(900):
        paths.append(f"src/codecs/{n // 100}/codec_{n:03d}.c")
        write(root, paths[-1], _uncrustify_source(n))
    write(root, "files.txt", "\n".join(paths) + "\n")
    sh(["uncrustify", "-c", ".uncrustify.cfg", "--replace", "--no-backup", "-q", "-F", "files.txt"], root)
    for n in (244, 781):
        path = os.path.join(root, paths[n])
        with open(path) as handle:
            text = handle.read().replace(f"    int r = v * {n + 2};", f"  int r=v*{n + 2};")
        with open(path, "w") as handle:
            handle.write(text.replace("    if (r >", "    if(r >"))
    return Run(["uncrustify", "-c", ".uncrustify.cfg", "--check", "-F", "files.txt"], [
        S("stderr", r"^FAIL: src/codecs/2/codec_244\.c", "the first unformatted file among 900"),
        S("stderr", r"^FAIL: src/codecs/7/codec_781\.c", "the second"),
    ], expect_exit=exits(1))


# --- yosys: synthesis of a 48-stage pipeline; its long log warns of an undriven wire, `check -assert` passes --

def _yosys_stage(n: int) -> str:
    """One registered pipeline stage."""
    return (f"module stage_{n:02d}(input clk, input rst, input [15:0] din, output reg [15:0] dout);\n"
            f"  always @(posedge clk)\n    if (rst) dout <= 16'd0;\n"
            f"    else dout <= (din ^ 16'h{(n * 2654435761) & 0xFFFF:04x}) + 16'd{n + 1};\nendmodule\n\n")


def _yosys_top() -> str:
    """The top: the stages chained; the 8-bit `bypass` is declared and used but nothing drives it."""
    wires = "".join(f"  wire [15:0] w{n:02d};\n" for n in range(49))
    cells = "".join(f"  stage_{n:02d} u{n:02d}(.clk(clk), .rst(rst), .din(w{n:02d}), .dout(w{n + 1:02d}));\n"
                    for n in range(48))
    return ("module top(input clk, input rst, input [15:0] din, output [15:0] dout);\n" + wires
            + "  wire [7:0] bypass;\n  assign w00 = din;\n" + cells + "  assign dout = w48 ^ {8'd0, bypass};\nendmodule\n")


@recipe("yosys-synth-undriven-warnings", "yosys", "build", ["yosys", "-V"], needs=("yosys",))
def _yosys(root):
    """Write the `yosys-synth-undriven-warnings` project under `root`; return its command and signals."""
    write(root, "rtl/stages.v", "".join(_yosys_stage(n) for n in range(48)))
    write(root, "rtl/top.v", _yosys_top())
    return Run(["yosys", "-p", "synth -top top; check -assert", "rtl/top.v", "rtl/stages.v"], [
        S("stdout", r"^Warning: Wire top\.\\bypass \[\d\] is used but has no driver\.$", "the undriven wire's eight bits"),
        S("stdout", r"^Found and reported 8 problems\.$", "the one check that found them"),
        S("stdout", r"^Warnings: 8 unique messages, 8 total$", "the warning count at the end"),
    ], expect_exit=exits(0))


# --- groovy: a billing report script prints 400 orders, then one order without a customer ---------------

_BILLING_GROOVY = """\
class Billing {
    static BigDecimal total(Map order) {
        def net = order.lines.sum { it.qty * it.price }
        return net + tax(order, net)
    }

    static BigDecimal tax(Map order, BigDecimal net) {
        def rate = order.customer.region == 'EU' ? 0.2 : 0.08
        return (net * rate).setScale(2, BigDecimal.ROUND_HALF_UP)
    }
}
"""

_REPORT_GROOVY = """\
def regions = ['EU', 'US', 'APAC']
def orders = (1..400).collect { n ->
    [id: "ORD-${1000 + n}", customer: n == 317 ? null : [name: "Customer ${n}", region: regions[n % 3]],
     lines: (1..(n % 4 + 1)).collect { k -> [sku: "SKU-${k}", qty: k, price: new BigDecimal("${n % 50 + 1}.25")] }]
}
orders.each { order ->
    println "${order.id}  ${order.lines.size()} lines  total ${Billing.total(order)}"
}
println "report done"
"""


@recipe("groovy-script-null-customer", "groovy", "crash", ["groovy", "--version"], needs=("groovy",))
def _groovy(root):
    """Write the `groovy-script-null-customer` project under `root`; return its command and signals."""
    write(root, "Billing.groovy", _BILLING_GROOVY)
    write(root, "report.groovy", _REPORT_GROOVY)
    return Run(["groovy", "report.groovy"], [
        S("stderr", r"^Caught: java\.lang\.NullPointerException: Cannot get property 'region' on null object$", "the exception"),
        S("stderr", r"^\s+at Billing\.tax\(Billing\.groovy:8\)$", "the frame that failed"),
        S("stderr", r"^\s+at report\$_run_closure2\.doCall\(report\.groovy:7\)$", "the script's own frame"),
    ], expect_exit=exits(1))


# --- gprof: the flat profile and call graph of an indexer with 240 small functions and one hot spot -----

def _indexer_c() -> str:
    """An indexer: 240 mixing functions called in a loop, and a checksum over a large buffer that dominates."""
    mixes = "".join(f"unsigned long mix_{n:03d}(unsigned long v) {{ return v * {2 * n + 3}UL + {n}UL; }}\n"
                    for n in range(240))
    calls = "".join(f"        v = mix_{n:03d}(v);\n" for n in range(240))
    return ("#include <stdio.h>\n#include <stdlib.h>\n\n" + mixes
            + "\nunsigned long checksum_block(const unsigned char *buf, long n)\n{\n    unsigned long h = 5381;\n"
            "    for (long i = 0; i < n; i++)\n        h = h * 33 + buf[i];\n    return h;\n}\n\n"
            "int main(void)\n{\n    static unsigned char buf[1 << 20];\n    unsigned long v = 1, h = 0;\n"
            "    for (long i = 0; i < (long)sizeof buf; i++)\n        buf[i] = (unsigned char)(i * 7);\n"
            f"    for (int round = 0; round < 3000; round++) {{\n{calls}    }}\n"
            "    for (int block = 0; block < 400; block++)\n        h ^= checksum_block(buf, sizeof buf);\n"
            "    printf(\"%lu %lu\\n\", v, h);\n    return 0;\n}\n")


@recipe("gprof-flat-profile-call-graph", "gprof", "profiler", ["gprof", "--version"], needs=("gprof", "gcc"))
def _gprof(root):
    """Write the `gprof-flat-profile-call-graph` project under `root`; return its command and signals."""
    write(root, "indexer.c", _indexer_c())
    sh("gcc -pg -O0 -o indexer indexer.c && ./indexer", root)
    return Run(["gprof", "-b", "indexer", "gmon.out"], [
        S("stdout", r"^ *\d+\.\d+ +\d+\.\d+ +\d+\.\d+ +400 .*checksum_block$", "the hot spot, first in the flat profile"),
    ], expect_exit=exits(0))


# --- Emacs ERT in batch: a ledger package's 600 tests, one split loses a cent ---------------------------

_LEDGER_EL = """\
;;; ledger-math.el --- cents arithmetic  -*- lexical-binding: t -*-
(defun ledger-cents (units rate) (/ (* units rate) 100))
(defun ledger-split (total parts) (make-list parts (/ total parts)))
(defun ledger-format (cents) (format "%d.%02d" (/ cents 100) (% cents 100)))
(provide 'ledger-math)
"""


def _ledger_tests_el() -> str:
    """600 generated tests; `ledger-split-keeps-total-3` checks a split that loses the remainder."""
    tests = [";;; ledger-math-tests.el  -*- lexical-binding: t -*-\n(require 'ert)\n(require 'ledger-math)\n\n"]
    for n in range(300):
        tests.append(f"(ert-deftest ledger-cents-rate-{n:03d} ()\n  (should (= (ledger-cents {n * 100} 7) {n * 7})))\n\n")
        if n % 100 == 0:
            parts = n // 100 + 2
            tests.append(f"(ert-deftest ledger-split-keeps-total-{parts} ()\n"
                         f"  (should (= (apply #'+ (ledger-split 1000 {parts})) 1000)))\n\n")
        tests.append(f"(ert-deftest ledger-format-{n:03d} ()\n"
                     f"  (should (equal (ledger-format {n * 101}) \"{n * 101 // 100}.{n * 101 % 100:02d}\")))\n\n")
    return "".join(tests)


@recipe("emacs-ert-batch-one-failure", "emacs", "test-runner", ["emacs", "--version"], needs=("emacs",))
def _emacs_ert(root):
    """Write the `emacs-ert-batch-one-failure` project under `root`; return its command and signals."""
    write(root, "ledger-math.el", _LEDGER_EL)
    write(root, "test/ledger-math-tests.el", _ledger_tests_el())
    return Run(["emacs", "-Q", "--batch", "-L", ".", "-l", "test/ledger-math-tests.el",
                "-f", "ert-run-tests-batch-and-exit"], [
        S("stderr", r"^Test ledger-split-keeps-total-3 (backtrace|condition):$", "the failed test's trace and condition"),
        S("stderr", r"^  ert-fail\(\(\(should \(= \(apply #'\+ \(ledger-split 1000 3\)\) 1000\)\)", "the failed assertion"),
        S("stderr", r"^\s+\(= 999 1000\)$", "the values compared"),
        S("stderr", r"FAILED +(\d+/\d+ +)?ledger-split-keeps-total-3", "the failed test among 603, and in the list at the end"),
        S("stderr", r"^Ran 603 tests, 602 results as expected, 1 unexpected", "the totals"),
    ], expect_exit=exits(1))


@recipe("raku-undeclared-routine", "raku", "compiler", ["raku", "--version"], needs=("raku",))
def _raku(root):
    """Write the `raku-undeclared-routine` project under `root`; return its command and signals."""
    write(root, "lib/Inventory.rakumod", "unit module Inventory;\n\nsub total(@items) is export {\n"
          "    [+] @items.map({ .<price> * .<count> })\n}\n")
    write(root, "bin/report.raku", "use lib 'lib';\nuse Inventory;\n\nmy @items = { price => 3, count => 2 }, "
          "{ price => 5, count => 1 };\nsay \"items: {@items.elems}\";\nsay \"total: {totl(@items)}\";\n")
    return Run(["raku", "bin/report.raku"], [
        S("stderr", r"SORRY!.*Error while compiling .*bin/report\.raku$", "the error's start and file (coloured)"),
        S("stderr", r"^Undeclared routine:$", "the error"),
        S("stderr", r"^\s+totl used at line 6", "where, and the hint"),
    ], expect_exit=exits(1))


@recipe("haxe-interp-type-errors", "haxe", "compiler", ["haxe", "--version"], needs=("haxe",))
def _haxe(root):
    """Write the `haxe-interp-type-errors` project under `root`; return its command and signals."""
    write(root, "src/Item.hx", "typedef Item = { name:String, cents:Int };\n")
    write(root, "src/Main.hx", "class Main {\n    static function total(items:Array<Item>):Int {\n        var sum = 0;\n"
          "        for (item in items)\n            sum += item.cents;\n        return sum;\n    }\n\n"
          "    static function main() {\n        var items:Array<Item> = [{name: \"pen\", cents: 150}, "
          "{name: \"ink\", cents: \"400\"}];\n        trace(total(items));\n        trace(items[0].price);\n    }\n}\n")
    return Run(["haxe", "-cp", "src", "-main", "Main", "--interp"], [
        S("stderr", r"^src/Main\.hx:10: .*String should be Int", "the first error and its place"),
        S("stderr", r"^src/Main\.hx:12: .*has no field price", "the second"),
    ], expect_exit=exits(1))


@recipe("clisp-not-a-number", "clisp", "crash", ["clisp", "--version"], needs=("clisp",))
def _clisp(root):
    """Write the `clisp-not-a-number` project under `root`; return its command and signals."""
    write(root, "report.lisp", "(defstruct item name price)\n\n(defun total (items)\n"
          "  (reduce #'+ (mapcar #'item-price items)))\n\n(format t \"items: ~a~%\" 3)\n"
          "(format t \"total: ~a~%\" (total (list (make-item :name \"pen\" :price 3)\n"
          "                                 (make-item :name \"ink\" :price nil)\n"
          "                                 (make-item :name \"pad\" :price 5))))\n")
    return Run(["clisp", "report.lisp"], [
        S("stderr", r"^\*\*\* - .*NIL is not a number", "the error"),
    ], expect_exit=exits(1))


# --- scan-build: the clang static analyzer over a small daemon's make build; four bugs in 30 files ----

def _daemon_source(n: int) -> str:
    """One source of the daemon; three carry bugs the analyzer reports (a null dereference, dead stores, a leak)."""
    head = "#include <stdlib.h>\n#include <string.h>\n#include \"daemon.h\"\n\n"
    if n == 7:
        return head + ("int handler_07(const char *key)\n{\n    struct entry *e = NULL;\n"
                       "    if (key && strlen(key) > 3)\n        e = lookup(key);\n    return e->value;\n}\n")
    if n == 16:
        return head + ("int handler_16(const char *key)\n{\n    int size = strlen(key);\n"
                       "    size = 64;\n    return 0;\n}\n")
    if n == 23:
        return head + ("int handler_23(const char *key)\n{\n    char *copy = malloc(strlen(key) + 1);\n"
                       "    if (!copy)\n        return -1;\n    strcpy(copy, key);\n    if (copy[0] == '#')\n"
                       "        return 0;\n    free(copy);\n    return 1;\n}\n")
    return head + f"int handler_{n:02d}(const char *key)\n{{\n    return key ? (int)strlen(key) + {n} : 0;\n}}\n"


@recipe("scan-build-four-bugs", "scan-build", "linter", ["dpkg-query", "-W", "-f", "${Version}\\n", "clang-tools-14"],
        needs=("scan-build-14", "make"))
def _scan_build(root):
    """Write the `scan-build-four-bugs` project under `root`; return its command and signals."""
    write(root, "src/daemon.h", "struct entry { int value; };\nstruct entry *lookup(const char *key);\n")
    write(root, "src/lookup.c", "#include <stddef.h>\n#include \"daemon.h\"\n\nstatic struct entry table[4];\n\n"
          "struct entry *lookup(const char *key)\n{\n    return key ? &table[key[0] & 3] : NULL;\n}\n")
    objs = ["src/lookup.o"]
    for n in range(30):
        write(root, f"src/handler_{n:02d}.c", _daemon_source(n))
        objs.append(f"src/handler_{n:02d}.o")
    write(root, "Makefile", "CC ?= cc\nCFLAGS = -O0 -g -Wall\nOBJS = " + " ".join(objs)
          + "\n\nlibdaemon.a: $(OBJS)\n\tar rcs $@ $(OBJS)\n\n%.o: %.c src/daemon.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n")
    return Run(["scan-build-14", "-o", "analysis", "make"], [
        S("stderr", r"^src/handler_07\.c:\d+:\d+: warning: Access to field 'value' results in a dereference of a null pointer",
          "the null dereference"),
        S("stderr", r"^src/handler_16\.c:\d+:\d+: warning: Value stored to 'size' (during its initialization )?is never read",
          "the two dead stores"),
        S("stderr", r"^src/handler_23\.c:\d+:\d+: warning: Potential leak of memory pointed to by 'copy'", "the leak"),
        S("stdout", r"^scan-build: 4 bugs found\.$", "the count"),
    ], expect_exit=exits(0))


# --- ltrace: a loader reading 300 config files, traced call by call; one file is missing ----------------

_LOADER_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long load(const char *path)
{
    char line[128];
    long sum = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "loader: cannot open %s\\n", path);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        if (eq)
            sum += strtol(eq + 1, NULL, 10);
    }
    fclose(f);
    return sum;
}

int main(void)
{
    char path[64];
    long total = 0;
    for (int n = 0; n < 300; n++) {
        snprintf(path, sizeof path, "conf.d/%03d.conf", n);
        long v = load(path);
        if (v < 0)
            return 1;
        total += v;
    }
    printf("total %ld\\n", total);
    return 0;
}
"""


@recipe("ltrace-loader-missing-file", "ltrace", "profiler", ["ltrace", "--version"], needs=("ltrace", "gcc"))
def _ltrace(root):
    """Write the `ltrace-loader-missing-file` project under `root`; return its command and signals."""
    write(root, "loader.c", _LOADER_C)
    for n in range(300):
        if n != 263:
            write(root, f"conf.d/{n:03d}.conf", "".join(f"key{k}={n + k}\n" for k in range(4)))
    sh("gcc -O0 -o loader loader.c", root)
    return Run(["ltrace", "./loader"], [
        S("stderr", r'^fopen\("conf\.d/263\.conf", "r"\) += 0$', "the failing call among thousands"),
        S("stderr", r"loader: cannot open conf\.d/263\.conf", "the program's own report"),
        S("stderr", r"^\+\+\+ exited \(status 1\) \+\+\+$", "the program's exit status (ltrace itself exits 0)"),
    ], expect_exit=exits(0))


# --- heaptrack_print: the analysis of a recorded run of a log indexer; one allocation site leaks ---------

def _heap_indexer_c() -> str:
    """A log indexer with 40 allocation sites; `intern_tag` keeps one copy in 50 without freeing it."""
    sites = "".join(f"static long stage_{k:02d}(int n)\n{{\n    char *p = malloc({32 + k * 8});\n"
                    f"    snprintf(p, {32 + k * 8}, \"stage {k} record %d\", n);\n    long v = (long)strlen(p);\n"
                    f"    free(p);\n    return v;\n}}\n\n" for k in range(40))
    calls = "".join(f"        total += stage_{k:02d}(n);\n" for k in range(40))
    return ("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n" + sites
            + "static char *intern_tag(int n)\n{\n    char *tag = malloc(24);\n    snprintf(tag, 24, \"tag-%d\", n % 97);\n"
            "    return tag;\n}\n\nint main(void)\n{\n    long total = 0;\n    for (int n = 0; n < 5000; n++) {\n"
            f"{calls}        char *tag = intern_tag(n);\n        total += tag[4];\n        if (n % 50 != 0)\n"
            "            free(tag);\n    }\n    printf(\"%ld\\n\", total);\n    return 0;\n}\n")


@recipe("heaptrack-print-one-leak", "heaptrack_print", "profiler", ["heaptrack_print", "--version"],
        needs=("heaptrack", "heaptrack_print", "gcc"))
def _heaptrack(root):
    """Write the `heaptrack-print-one-leak` project under `root`; return its command and signals."""
    write(root, "indexer.c", _heap_indexer_c())
    sh("gcc -g -O0 -o indexer indexer.c && heaptrack -o heaptrack.indexer ./indexer", root)
    return Run(["heaptrack_print", "--print-leaks", "1", "heaptrack.indexer.zst"], [
        S("stdout", r"^MEMORY LEAKS$", "the section"),
        S("stdout", r"^2\.40K leaked over 5000 calls from:?$", "the project's leaking site (intern_tag) and its caller"),
        S("stdout", r"^total memory leaked: 6\.50K$", "the leak total"),
    ], expect_exit=exits(0))
