"""Cloaked recipes for compilers, build tools, test frameworks, checkers and crashes: a Catch2 suite, a cmocka
suite, a GHDL testbench, splint, flawfinder, sparse, astyle, genhtml, gcov, MemorySanitizer, yasm, gforth,
autoreconf.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from cloaked_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "catch2": "2.13.10-1", "libcmocka-dev": "1.1.5-2.1", "ghdl": "2.0.0+dfsg-6.2+b2", "splint": "1:3.1.2+dfsg-5",
    "flawfinder": "2.0.19-1.1", "sparse": "0.6.4-3", "astyle": "3.1-3+b1", "yasm": "1.3.0-4",
    "gforth": "0.7.3+dfsg-9+b3", "lcov": "1.16-1", "autoconf": "2.71-3", "automake": "1:1.16.5-1.3",
    "libtool": "2.4.7-7~deb12u1",
}


# --- Catch2: a C++ string library's suite, one failing assertion among 1,600 test cases ---------------

_CATCH_TOPICS = ("trim", "split", "join", "upper", "lower", "replace", "starts_with", "ends_with")


def _strutil_hpp() -> str:
    """A small header-only string library; `replace` skips an overlapping match."""
    return """\
        #pragma once
        #include <string>
        #include <vector>
        #include <cctype>
        namespace strutil {
        inline std::string trim(const std::string &s) {
            size_t b = 0, e = s.size();
            while (b < e && std::isspace((unsigned char)s[b])) b++;
            while (e > b && std::isspace((unsigned char)s[e - 1])) e--;
            return s.substr(b, e - b);
        }
        inline std::vector<std::string> split(const std::string &s, char sep) {
            std::vector<std::string> out; std::string cur;
            for (char c : s) { if (c == sep) { out.push_back(cur); cur.clear(); } else cur += c; }
            out.push_back(cur); return out;
        }
        inline std::string join(const std::vector<std::string> &v, const std::string &sep) {
            std::string out;
            for (size_t i = 0; i < v.size(); i++) { if (i) out += sep; out += v[i]; }
            return out;
        }
        inline std::string upper(std::string s) { for (auto &c : s) c = (char)std::toupper((unsigned char)c); return s; }
        inline std::string lower(std::string s) { for (auto &c : s) c = (char)std::tolower((unsigned char)c); return s; }
        inline bool starts_with(const std::string &s, const std::string &p) { return s.compare(0, p.size(), p) == 0; }
        inline bool ends_with(const std::string &s, const std::string &p) {
            return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
        }
        inline std::string replace(std::string s, const std::string &from, const std::string &to) {
            size_t at = 0;
            while ((at = s.find(from, at)) != std::string::npos) { s.replace(at, from.size(), to); at += to.size() + 1; }
            return s;
        }
        }
        """


def _catch_case(topic: str, n: int) -> str:
    """One test case of `topic`; case 137 of `replace` hits the library's bug."""
    word = f"w{n}"
    checks = {
        "trim": f'REQUIRE(strutil::trim("  {word}  ") == "{word}");',
        "split": f'REQUIRE(strutil::split("{word},{n},x", \',\').size() == 3);',
        "join": f'REQUIRE(strutil::join({{"{word}", "{n}"}}, "-") == "{word}-{n}");',
        "upper": f'REQUIRE(strutil::upper("{word}") == "W{n}");',
        "lower": f'REQUIRE(strutil::lower("W{n}") == "{word}");',
        "replace": f'REQUIRE(strutil::replace("{word}.{word}", "{word}", "x") == "x.x");',
        "starts_with": f'REQUIRE(strutil::starts_with("{word}tail", "{word}"));',
        "ends_with": f'REQUIRE(strutil::ends_with("head{word}", "{word}"));',
    }
    body = checks[topic]
    if topic == "replace" and n == 137:
        body = 'REQUIRE(strutil::replace("aaaa", "a", "bb") == "bbbbbbbb");'
    return f'TEST_CASE("{topic} handles input number {n}", "[{topic}]") {{\n    {body}\n}}\n\n'


@recipe("catch2-durations-one-failure", "catch2", "test-runner", ["dpkg-query", "-W", "-f", "${Version}\\n", "catch2"],
        needs=("g++",))
def _catch2(root):
    """Write the `catch2-durations-one-failure` project under `root`; return its command and signals."""
    write(root, "include/strutil.hpp", _strutil_hpp())
    write(root, "tests/main.cpp", "#define CATCH_CONFIG_MAIN\n#include <catch2/catch.hpp>\n")
    for topic in _CATCH_TOPICS:
        write(root, f"tests/test_{topic}.cpp", '#include <catch2/catch.hpp>\n#include "strutil.hpp"\n\n'
              + "".join(_catch_case(topic, n) for n in range(200)))
    sh("g++ -std=c++17 -O0 -Iinclude -c tests/main.cpp -o main.o && "
       + " && ".join(f"g++ -std=c++17 -O0 -Iinclude -c tests/test_{t}.cpp -o test_{t}.o" for t in _CATCH_TOPICS)
       + " && g++ -o strutil_tests *.o", root)
    return Run(["./strutil_tests", "--durations", "yes"], [
        S("stdout", r"^replace handles input number 137$", "the failed test case's heading"),
        S("stdout", r"^tests/test_replace\.cpp:553: FAILED:$", "the failure and its place"),
        S("stdout", r'^  REQUIRE\( strutil::replace\("aaaa", "a", "bb"\) == "bbbbbbbb" \)$', "the assertion"),
        S("stdout", r'^  "bbabba" == "bbbbbbbb"$', "what it saw"),
        S("stdout", r"^(test cases|assertions): 1600 \| 1599 passed \| 1 failed$", "the totals"),
    ], expect_exit=exits(1))


# --- cmocka: a C money library's suite, twelve groups, one failing test among 2,400 ------------------

_CMOCKA_GROUPS = ("parse", "format", "round", "add", "subtract", "multiply", "divide", "compare",
                  "convert", "allocate", "ledger", "report")


def _money_c() -> str:
    """The library under test: cents arithmetic; `money_allocate` loses the remainder of an uneven split."""
    return """\
        #include "money.h"
        long money_add(long a, long b) { return a + b; }
        long money_sub(long a, long b) { return a - b; }
        long money_mul(long a, long k) { return a * k; }
        long money_div(long a, long k) { return k ? a / k : 0; }
        int money_cmp(long a, long b) { return (a > b) - (a < b); }
        long money_round(long a, long step) { return step ? ((a + step / 2) / step) * step : a; }
        long money_allocate(long total, int parts, int index) {
            long share = total / parts;
            (void)index;
            return share;
        }
        """


def _cmocka_test(group: str, n: int) -> str:
    """One test function of `group`; `allocate` test 161 splits unevenly and sees the lost cent."""
    a, b = 100 * n + 7, n + 3
    checks = {
        "parse": f"assert_int_equal(money_add({a}, 0), {a});",
        "format": f"assert_int_equal(money_sub({a}, {a}), 0);",
        "round": f"assert_int_equal(money_round({a * 10}, 10), {a * 10});",
        "add": f"assert_int_equal(money_add({a}, {b}), {a + b});",
        "subtract": f"assert_int_equal(money_sub({a}, {b}), {a - b});",
        "multiply": f"assert_int_equal(money_mul({a}, {b}), {a * b});",
        "divide": f"assert_int_equal(money_div({a * b}, {b}), {a});",
        "compare": f"assert_int_equal(money_cmp({a}, {b}), 1);",
        "convert": f"assert_int_equal(money_mul({a}, 100) / 100, {a});",
        "allocate": f"assert_int_equal(money_allocate({b * 4}, 4, 0), {b});",
        "ledger": f"assert_true(money_add({a}, {b}) > {a});",
        "report": f"assert_false(money_cmp({a}, {a}));",
    }
    body = checks[group]
    if group == "allocate" and n == 161:
        body = "long total = 1000;\n    long sum = money_allocate(total, 3, 0) + money_allocate(total, 3, 1)" \
               " + money_allocate(total, 3, 2);\n    assert_int_equal(sum, total);"
    return f"static void test_{group}_case_{n:03d}_keeps_cents_exact(void **state) {{\n    (void)state;\n    {body}\n}}\n\n"


def _cmocka_source(group: str) -> str:
    """The test file of one group: 200 tests and the group runner."""
    tests = "".join(_cmocka_test(group, n) for n in range(200))
    entries = "".join(f"        cmocka_unit_test(test_{group}_case_{n:03d}_keeps_cents_exact),\n" for n in range(200))
    return ("#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <cmocka.h>\n"
            f'#include "money.h"\n\n{tests}int run_{group}(void) {{\n    const struct CMUnitTest tests[] = {{\n'
            f'{entries}    }};\n    return cmocka_run_group_tests_name("{group}", tests, NULL, NULL);\n}}\n')


@recipe("cmocka-one-failure-of-thousands", "cmocka", "test-runner",
        ["dpkg-query", "-W", "-f", "${Version}\\n", "libcmocka-dev"], needs=("gcc",))
def _cmocka(root):
    """Write the `cmocka-one-failure-of-thousands` project under `root`; return its command and signals."""
    write(root, "src/money.h", "long money_add(long a, long b);\nlong money_sub(long a, long b);\n"
          "long money_mul(long a, long k);\nlong money_div(long a, long k);\nint money_cmp(long a, long b);\n"
          "long money_round(long a, long step);\nlong money_allocate(long total, int parts, int index);\n")
    write(root, "src/money.c", _money_c())
    for group in _CMOCKA_GROUPS:
        write(root, f"tests/test_{group}.c", _cmocka_source(group))
    decls = "".join(f"int run_{g}(void);\n" for g in _CMOCKA_GROUPS)
    calls = "".join(f"    failed += run_{g}();\n" for g in _CMOCKA_GROUPS)
    write(root, "tests/main.c", f"{decls}\nint main(void) {{\n    int failed = 0;\n{calls}    return failed ? 1 : 0;\n}}\n")
    sh("gcc -Isrc -o money_tests src/money.c tests/*.c -lcmocka", root)
    return Run(["./money_tests"], [
        S("stderr", r"^\[  ERROR   \] --- 0x3e7 != 0x3e8$", "the failed assertion"),
        S("stderr", r"^\[   LINE   \] --- tests/test_allocate\.c:817: error: Failure!$", "where it failed"),
        S("stderr", r"^\[  FAILED  \] 1 test\(s\), listed below:$", "the group's failure count"),
        S("stderr", r"^\[  FAILED  \] test_allocate_case_161_keeps_cents_exact$", "the failed test, listed"),
        S("stderr", r"^ 1 FAILED TEST\(S\)$", "the verdict"),
        S("stdout", r"^\[  FAILED  \] test_allocate_case_161_keeps_cents_exact$", "the failed test among 2,400 runs"),
    ], expect_exit=exits(1))


# --- GHDL: a saturating adder's testbench logs 600 vectors; one edge case is wrong -------------------

_SAT_ADD_VHD = """\
    library ieee;
    use ieee.std_logic_1164.all;
    use ieee.numeric_std.all;

    entity sat_add is
      port (a, b : in unsigned(7 downto 0); sum : out unsigned(7 downto 0));
    end entity;

    architecture rtl of sat_add is
      signal wide : unsigned(8 downto 0);
    begin
      wide <= ('0' & a) + ('0' & b);
      sum <= x"FF" when wide > 256 else wide(7 downto 0);
    end architecture;
    """

_SAT_ADD_TB = """\
    library ieee;
    use ieee.std_logic_1164.all;
    use ieee.numeric_std.all;

    entity tb is
    end entity;

    architecture sim of tb is
      signal a, b, sum : unsigned(7 downto 0);
    begin
      dut: entity work.sat_add port map (a => a, b => b, sum => sum);

      stim: process
        variable expected : integer;
        variable errors : natural := 0;
      begin
        for i in 0 to 599 loop
          a <= to_unsigned((i * 7) mod 256, 8);
          b <= to_unsigned((i * 59 + 11) mod 241, 8);
          wait for 10 ns;
          expected := minimum(to_integer(a) + to_integer(b), 255);
          report "vector " & integer'image(i) & ": a=" & integer'image(to_integer(a)) & " b="
            & integer'image(to_integer(b)) & " sum=" & integer'image(to_integer(sum));
          if to_integer(sum) /= expected then
            errors := errors + 1;
          end if;
          assert to_integer(sum) = expected
            report "vector " & integer'image(i) & ": expected " & integer'image(expected) & ", got "
            & integer'image(to_integer(sum))
            severity error;
        end loop;
        assert errors = 0 report integer'image(errors) & " of 600 vectors failed" severity failure;
        report "all 600 vectors passed";
        wait;
      end process;
    end architecture;
    """


@recipe("ghdl-testbench-vector-mismatch", "ghdl", "test-runner", ["ghdl", "--version"], needs=("ghdl",))
def _ghdl(root):
    """Write the `ghdl-testbench-vector-mismatch` project under `root`; return its command and signals."""
    write(root, "rtl/sat_add.vhd", _SAT_ADD_VHD)
    write(root, "tb/tb.vhd", _SAT_ADD_TB)
    sh("ghdl -a --std=08 rtl/sat_add.vhd tb/tb.vhd && ghdl -e --std=08 tb", root)
    return Run(["ghdl", "-r", "--std=08", "tb"], [
        S("stdout", r"^tb/tb\.vhd:27:7:@3500ns:\(assertion error\): vector 349: expected 255, got 0$", "the one mismatch"),
        S("stdout", r"^tb/tb\.vhd:32:5:@6us:\(assertion failure\): 1 of 600 vectors failed$", "the testbench's verdict"),
        S("stdout", r"error: (assertion|simulation) failed$", "the simulator's failure"),
    ], expect_exit=exits(1))


# --- splint: a C89 inventory service, hundreds of warnings, one variable used before it is set ----------

def _splint_module(n: int) -> str:
    """One inventory module: unchecked allocation and ignored return values, the usual splint findings;
    module 17's total is summed before it is ever set."""
    total = ("    int total;\n    total += count;\n" if n == 17 else "    int total = count;\n")
    return f"""\
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include "inventory.h"

        struct item{n:02d} {{ char name[32]; int count; }};

        static struct item{n:02d} *item{n:02d}_new(const char *name, int count)
        {{
            struct item{n:02d} *it = malloc(sizeof *it);
            strcpy(it->name, name);
            it->count = count;
            return it;
        }}

        int item{n:02d}_report(FILE *out, const char *name, int count)
        {{
            struct item{n:02d} *it = item{n:02d}_new(name, count);
        {total}    fprintf(out, "%s: %d (%d)\\n", it->name, it->count, total);
            fflush(out);
            return it->count;
        }}
        """


@recipe("splint-c-inventory-warnings", "splint", "linter", ["splint", "-help", "version"], needs=("splint",))
def _splint(root):
    """Write the `splint-c-inventory-warnings` project under `root`; return its command and signals."""
    write(root, "include/inventory.h", "#include <stdio.h>\n"
          + "".join(f"int item{n:02d}_report(FILE *out, const char *name, int count);\n" for n in range(30)))
    for n in range(30):
        write(root, f"src/item{n:02d}.c", _splint_module(n))
    return Run(["splint", "-Iinclude", "src/*.c"], [
        S("stdout", r"^src/item17\.c:20:1: Variable total used before definition$", "the one real bug among the warnings"),
        S("stdout", r"^src/item17\.c: \(in function item17_report\)$", "the function it is in"),
        S("stderr", r"^Finished checking --- 121 code warnings$", "the count"),
    ], command="splint -Iinclude src/*.c", expect_exit=exits(1))


# --- flawfinder: a C network daemon's tree, hundreds of hits, one `gets` ------------------------------

def _flaw_module(area: str, n: int) -> str:
    """One module with the copies and formats flawfinder reports; the console reader uses `gets`."""
    body = (f'    char line[128];\n    if (gets(line) == NULL)\n        return -1;\n    strcpy(out, line);\n'
            if (area, n) == ("console", 3) else f'    char tmp[64];\n    strcpy(tmp, src);\n    sprintf(out, "%s/{n}", tmp);\n')
    return f"""\
        #include <stdio.h>
        #include <string.h>

        int {area}_{n:02d}_copy(char *out, const char *src, size_t len)
        {{
        {body}    memcpy(out + len, src, len);
            return (int)strlen(out);
        }}
        """


@recipe("flawfinder-daemon-one-level5", "flawfinder", "linter", ["flawfinder", "--version"], needs=("flawfinder",))
def _flawfinder(root):
    """Write the `flawfinder-daemon-one-level5` project under `root`; return its command and signals."""
    for area in ("net", "proto", "store", "auth", "console", "config"):
        for n in range(20):
            write(root, f"src/{area}/{area}_{n:02d}.c", _flaw_module(area, n))
    return Run(["flawfinder", "--error-level=5", "src"], [
        S("stdout", r"^src/console/console_03\.c:7:  \[5\] \(buffer\) gets:$", "the one level-5 hit"),
        S("stdout", r"^Hits = 600$", "the count"),
        S("stdout", r"^Hits@level = ", "the counts by level"),
    ], expect_exit=exits(1))


# --- sparse: a driver tree checked with sparse, hundreds of "should it be static?", one error -----------

def _sparse_module(n: int) -> str:
    """One driver file: a global that should be static, now and then a plain 0 as a pointer; file 143
    calls a helper that was renamed."""
    null = "    if (dev->buf == 0)\n        return -1;\n" if n % 7 == 3 else ""
    call = "    return dev_reset_queue(dev);\n" if n == 143 else "    return dev->len;\n"
    return f"""\
        #include "dev.h"

        int chan{n:03d}_budget = {n};

        int chan{n:03d}_poll(struct dev *dev)
        {{
        {null}    dev->len += chan{n:03d}_budget;
        {call}}}
        """


@recipe("sparse-driver-tree-one-error", "sparse", "linter", ["dpkg-query", "-W", "-f", "${Version}\\n", "sparse"],
        needs=("sparse",))
def _sparse(root):
    """Write the `sparse-driver-tree-one-error` project under `root`; return its command and signals."""
    write(root, "include/dev.h", "struct dev { char *buf; int len; };\nint dev_reset(struct dev *dev);\n")
    for n in range(240):
        write(root, f"drivers/chan{n:03d}.c", _sparse_module(n))
    return Run(["sparse", "-Iinclude", "drivers/*.c"], [
        S("stderr", r"^drivers/chan143\.c:10:20: error: undefined identifier 'dev_reset_queue'$", "the one error"),
        S("stderr", r"warning: too many warnings$", "the warnings after it were not printed"),
    ], command="sparse -Iinclude drivers/*.c", expect_exit=exits(0))


# --- astyle: a dry run over 400 formatted files, three that are not -----------------------------------

def _astyle_source(n: int, messy: bool) -> str:
    """A handler file in K&R style, or (messy) with Allman braces and odd indentation."""
    if messy:
        return (f"int handler_{n}(int code)\n{{\n  if (code > {n})\n  {{\n      return code - {n};\n  }}\n"
                f"  else\n  {{\n    return 0;\n  }}\n}}\n")
    return f"int handler_{n}(int code)\n{{\n    if (code > {n}) {{\n        return code - {n};\n    }} else {{\n        return 0;\n    }}\n}}\n"


@recipe("astyle-dry-run-three-formatted", "astyle", "formatter", ["astyle", "--version"], needs=("astyle",))
def _astyle(root):
    """Write the `astyle-dry-run-three-formatted` project under `root`; return its command and signals."""
    for n in range(400):
        write(root, f"src/mod{n // 20:02d}/handler_{n:03d}.c", _astyle_source(n, n in (57, 212, 389)))
    return Run(["astyle", "--style=kr", "--dry-run", "-v", "-r", "src/*.c"], [
        S("stdout", r"^Formatted  mod\d\d/handler_\d{3}\.c$", "the three files that need formatting"),
        S("stdout", r"^ 3 formatted   397 unchanged ", "the summary"),
    ], expect_exit=exits(0))


# --- coverage: a C project of 300 modules, built with --coverage and run ------------------------------

def _cov_module(n: int) -> str:
    """A small module with a branch the run takes only for some inputs."""
    return (f"int mod{n:03d}_scale(int x)\n{{\n    if (x > {n % 50})\n        return x * {n + 1};\n"
            f"    return -x;\n}}\n\nint mod{n:03d}_unused(int x)\n{{\n    return x + {n};\n}}\n")


def _cov_project(root: str, count: int, skip: tuple[int, ...] = ()) -> None:
    """Write `count` modules and a main that calls each one's `scale` (except those in `skip`)."""
    for n in range(count):
        write(root, f"src/mod{n:03d}.c", _cov_module(n))
    calls = "".join(f"    sum += mod{n:03d}_scale(argc * 30);\n" for n in range(count) if n not in skip)
    decls = "".join(f"int mod{n:03d}_scale(int x);\n" for n in range(count) if n not in skip)
    write(root, "src/main.c", f"#include <stdio.h>\n{decls}\nint main(int argc, char **argv)\n{{\n"
          f"    int sum = 0;\n    (void)argv;\n{calls}    printf(\"%d\\n\", sum);\n    return 0;\n}}\n")


@recipe("genhtml-missing-source-file", "genhtml", "coverage", ["genhtml", "--version"], needs=("genhtml", "lcov", "gcc"))
def _genhtml(root):
    """Write the `genhtml-missing-source-file` project under `root`; return its command and signals."""
    _cov_project(root, 300)
    sh("mkdir -p build && for f in src/*.c; do gcc --coverage -O0 -c $f -o build/$(basename $f .c).o || exit 1; done"
       " && gcc --coverage -o build/app build/*.o && ./build/app"
       " && lcov -q --capture --directory build --output-file coverage.info", root)
    os.rename(os.path.join(root, "src/mod214.c"), os.path.join(root, "src/mod214.c.orig"))
    return Run(["genhtml", "coverage.info", "--output-directory", "coverage-html"], [
        S("stderr", r"^genhtml: ERROR: cannot read /tmp/yarp-gen/cloaked/work/genhtml-missing-source-file/src/mod214\.c$",
          "the error"),
        S("stdout", r"^Processing file src/mod214\.c$", "the file it stopped on"),
    ], env={"PERL_HASH_SEED": "0"}, expect_exit=exits(2))


@recipe("gcov-stale-and-missing-data", "gcov", "coverage", ["gcov", "--version"], needs=("gcov", "gcc"))
def _gcov(root):
    """Write the `gcov-stale-and-missing-data` project under `root`; return its command and signals."""
    _cov_project(root, 320, skip=(251,))
    sh("mkdir -p build && for f in src/*.c; do gcc -fprofile-arcs -ftest-coverage -O0 -c $f"
       " -o build/$(basename $f .c).o || exit 1; done"
       " && gcc --coverage -o build/app $(ls build/*.o | grep -v mod251) && ./build/app", root)
    with open(os.path.join(root, "src/mod088.c"), "a", encoding="utf-8") as handle:
        handle.write("\nint mod088_extra(int x)\n{\n    return x * 2;\n}\n")
    sh("gcc -fprofile-arcs -ftest-coverage -O0 -c src/mod088.c -o build/mod088.o", root)
    return Run(["gcov", "-o", "build", "src/*.c"], [
        S("stderr", r"^build/mod088\.gcda:stamp mismatch with notes file$", "the stale data file"),
        S("stderr", r"^build/mod251\.gcda:cannot open data file, assuming not executed$", "the missing data file"),
        S("stdout", r"^File 'src/mod(088|251)\.c'$", "the two files' headings"),
        S("stdout", r"^Lines executed:0\.00% of \d+$", "the two files without coverage among 321"),
        S("stdout", r"^Lines executed:56\.88% of 2245$", "the total"),
    ], command="gcov -o build src/*.c", expect_exit=exits(5))


# --- MemorySanitizer: a config loader branches on a field it never set --------------------------------

_MSAN_CONFIG_C = """\
    #include <stdio.h>
    #include <string.h>
    #include <stdlib.h>

    struct config { int port; int workers; int verbose; };

    static void parse_line(struct config *cfg, const char *line)
    {
        if (strncmp(line, "port=", 5) == 0)
            cfg->port = atoi(line + 5);
        else if (strncmp(line, "workers=", 8) == 0)
            cfg->workers = atoi(line + 8);
    }

    static int apply_config(const struct config *cfg)
    {
        if (cfg->verbose)
            printf("verbose: port %d, %d workers\\n", cfg->port, cfg->workers);
        return cfg->port;
    }

    int main(void)
    {
        struct config cfg;
        const char *lines[] = {"port=8080", "workers=4"};
        for (int i = 0; i < 2; i++)
            parse_line(&cfg, lines[i]);
        printf("listening on %d\\n", apply_config(&cfg));
        return 0;
    }
    """


@recipe("msan-uninitialized-config-field", "msan", "crash", ["clang", "--version"], needs=("clang",))
def _msan(root):
    """Write the `msan-uninitialized-config-field` project under `root`; return its command and signals."""
    write(root, "src/config.c", _MSAN_CONFIG_C)
    sh("clang -g -O0 -fsanitize=memory -fsanitize-memory-track-origins -fno-omit-frame-pointer"
       " -o config_loader src/config.c", root)
    return Run(["./config_loader"], [
        S("stderr", r"WARNING: MemorySanitizer: use-of-uninitialized-value$", "the report's start"),
        S("stderr", r"^    #0 0x[0-9a-f]+ in apply_config /.*/src/config\.c:17:9$", "the frame that read it"),
        S("stderr", r"^    #1 0x[0-9a-f]+ in main /.*/src/config\.c:28:33$", "its caller"),
        S("stderr", r"Uninitialized value was created by an allocation of 'cfg' in the stack frame of function 'main'",
          "where the value came from"),
        S("stderr", r"^SUMMARY: MemorySanitizer: use-of-uninitialized-value ", "the summary"),
    ], expect_exit=exits(1, 66, 77))


# --- yasm, gforth, autoreconf: small failures -----------------------------------------------------------

@recipe("yasm-boot-sector-errors", "yasm", "compiler", ["yasm", "--version"], needs=("yasm",))
def _yasm(root):
    """Write the `yasm-boot-sector-errors` project under `root`; return its command and signals."""
    write(root, "boot.asm", """\
        bits 16
        org 0x7c00

        start:
            xor ax, ax
            mov ds, ax
            mov si, banner
            mov cx, banner_len
        print:
            lodsb
            mov ah, 0x0e
            int 0x10
            loop print
            movw bx, 1
            jmp hang

        banner: db "booting", 13, 10
        times 510 - ($ - $$) db 0
        dw 0xaa55
        """)
    return Run(["yasm", "-f", "bin", "-o", "boot.bin", "boot.asm"], [
        S("stderr", r"^boot\.asm:\d+: error: ", "the errors"),
    ], expect_exit=exits(1))


@recipe("gforth-stack-underflow", "gforth", "crash", ["gforth", "--version"], needs=("gforth",))
def _gforth(root):
    """Write the `gforth-stack-underflow` project under `root`; return its command and signals."""
    write(root, "stats.fs", """\
        \\ running statistics over a few samples
        variable total  variable count
        : sample ( n -- )  total +!  1 count +! ;
        : mean ( -- n )  total @ count @ / ;
        : spread ( lo hi -- n )  swap - ;
        : summary ( -- )  ." mean " mean . ." spread " spread . cr ;
        12 sample 30 sample 18 sample
        summary
        """)
    return Run(["gforth", "stats.fs", "-e", "bye"], [
        S("stderr", r"^stats\.fs:8: Stack underflow$", "the error and its line"),
        S("stderr", r"^>>>summary<<<$", "the word that failed"),
        S("stderr", r"^Backtrace:$", "the trace's start"),
        S("stderr", r"^\$[0-9A-F]+ spread\s*$", "the project's word where the stack ran out"),
    ], expect_exit=exits(1, 2))


@recipe("autoreconf-libtool-undefined", "autoreconf", "build", ["autoreconf", "--version"],
        needs=("autoreconf", "automake"))
def _autoreconf(root):
    """Write the `autoreconf-libtool-undefined` project under `root`; return its command and signals."""
    write(root, "configure.ac", """\
        AC_INIT([ledger], [0.3.1], [dev@example.org])
        AM_INIT_AUTOMAKE([foreign -Wall])
        AC_PROG_CC
        AC_CONFIG_HEADERS([config.h])
        AC_CONFIG_FILES([Makefile src/Makefile])
        AC_OUTPUT
        """)
    write(root, "Makefile.am", "SUBDIRS = src\n")
    write(root, "src/Makefile.am", "lib_LTLIBRARIES = libledger.la\nlibledger_la_SOURCES = ledger.c\n"
          "bin_PROGRAMS = ledger\nledger_SOURCES = main.c\nledger_LDADD = libledger.la\n")
    write(root, "src/ledger.c", "int ledger_total(void) { return 0; }\n")
    write(root, "src/main.c", "int ledger_total(void);\nint main(void) { return ledger_total(); }\n")
    return Run(["autoreconf", "-fi"], [
        S("stderr", r"^src/Makefile\.am:1: error: Libtool library used but 'LIBTOOL' is undefined$", "the error"),
        S("stderr", r"The usual way to define 'LIBTOOL' is to add 'LT_INIT'$", "the fix it suggests"),
        S("stderr", r"^autoreconf: error: automake failed with exit status: 1$", "the verdict"),
    ], expect_exit=exits(1))
