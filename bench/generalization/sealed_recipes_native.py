"""Sealed recipes for compilers, other languages and their test runners: Free Pascal, gdc, valac, dune,
SBCL, Guile, Tcl, bats, shUnit2, Check, CUnit, minitest, a Ruby exception, PHPUnit, EUnit, a C abort,
a Java stack overflow, Perl's confess, a Go panic, shfmt.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from sealed_common import Run, S, exits, recipe, sh, write


@recipe("fpc-compile-errors", "fpc", "compiler", ["fpc", "-iV"], needs=("fpc",))
def _fpc(root):
    """Write the `fpc-compile-errors` project under `root`; return its command and signals."""
    procs = "".join(f"procedure Post{n}(amount: Integer);\nvar\n  fee{n}: Integer;\n  memo{n}: string;\n"
                    f"begin\n  WriteLn('posting ', amount);\nend;\n\n" for n in range(60))
    write(root, "ledger.pas", "program Ledger;\n\n" + procs + "var\n  total: Integer;\n  rate: Real;\n"
          "begin\n  total := 0;\n  rate := 1.5;\n  total := total + rate;\n  WriteLn('Total: ', totl);\nend.\n")
    return Run(["fpc", "-vewnh", "ledger.pas"], [
        S("stdout", r"^ledger\.pas\(\d+,\d+\) Error: ", "each error with its line"),
        S("stdout", r"^ledger\.pas\(\d+\) Fatal: There were 2 errors compiling module, stopping$", "the verdict"),
        S("stdout", r"^Fatal: Compilation aborted$", "the end of the compilation"),
    ], expect_exit=exits(1))


@recipe("gdc-type-errors", "gdc", "compiler", ["gdc", "--version"], needs=("gdc",))
def _gdc(root):
    """Write the `gdc-type-errors` project under `root`; return its command and signals."""
    write(root, "app.d", "import std.stdio;\n\nstruct Order { int id; double total; }\n\n"
          "int count(Order[] orders) { return orders.length; }\n\nvoid main() {\n"
          "    Order[] orders = [Order(1, 9.5), Order(2, 3.0)];\n    string n = count(orders);\n"
          "    writeln(orders[0].totl);\n}\n")
    return Run(["gdc", "-c", "app.d"], [
        S("stderr", r"^app\.d:\d+:\d+: error: ", "each error with its line"),
    ], expect_exit=exits(1))


@recipe("valac-errors", "valac", "compiler", ["valac", "--version"], needs=("valac",))
def _valac(root):
    """Write the `valac-errors` project under `root`; return its command and signals."""
    write(root, "main.vala", "class Inventory : Object {\n    public int count { get; set; }\n"
          "    public void add (int n) {\n        count += n;\n        string label = count;\n    }\n}\n\n"
          "int main () {\n    var inv = new Inventory ();\n    inv.ad (3);\n    return 0;\n}\n")
    return Run(["valac", "main.vala"], [
        S("stderr", r"^main\.vala:\d+\.\d+-\d+\.\d+: error: ", "each error with its place"),
        S("stdout", r"^Compilation failed: 2 error\(s\), 0 warning\(s\)$", "the count"),
    ], expect_exit=exits(1))


@recipe("dune-build-type-error", "dune", "build", ["dune", "--version"], needs=("dune",))
def _dune(root):
    """Write the `dune-build-type-error` project under `root`; return its command and signals."""
    write(root, "dune-project", "(lang dune 2.9)\n")
    write(root, "bin/dune", "(executable (name main) (libraries shop))\n")
    write(root, "lib/dune", "(library (name shop))\n")
    write(root, "lib/cart.ml", "let total items = List.fold_left (fun acc (p, q) -> acc +. p *. float_of_int q) 0. items\n"
          "let label n = \"Items: \" ^ n\n")
    write(root, "bin/main.ml", "let () = print_endline (Shop.Cart.label 3)\n")
    return Run(["dune", "build"], [
        S("stderr", r'^File "bin/main\.ml", line 1, characters 40-41:$', "the error's place"),
        S("stderr", r"^Error: This expression has type int but an expression was expected of type$", "the error"),
    ], expect_exit=exits(1))


@recipe("sbcl-script-unbound-variable", "sbcl", "runtime", ["sbcl", "--version"], needs=("sbcl",))
def _sbcl(root):
    """Write the `sbcl-script-unbound-variable` project under `root`; return its command and signals."""
    write(root, "report.lisp", "(defun line-total (line) (* (getf line :price) (getf line :qty)))\n"
          "(defun order-total (lines) (reduce #'+ (mapcar #'line-total lines)))\n"
          "(defun print-report (orders)\n  (dolist (o orders)\n    (format t \"order ~a: ~a~%\" (first o) (order-total (rest o))))\n"
          "  (format t \"tax: ~a~%\" (* tax-rate 100)))\n"
          "(print-report (loop for n from 1 to 400 collect (list n (list :price n :qty (1+ (mod n 4))))))\n")
    return Run(["sbcl", "--script", "report.lisp"], [
        S("stderr", r"^Unhandled UNBOUND-VARIABLE in thread ", "the error"),
        S("stderr", r"^  The variable TAX-RATE is unbound\.$", "what was wrong"),
        S("stderr", r"^Backtrace for: ", "the trace's start"),
        S("stderr", r"^0: \(PRINT-REPORT ", "the script's own frame"),
    ], expect_exit=exits(1))


@recipe("guile-wrong-type-backtrace", "guile", "runtime", ["guile", "--version"], needs=("guile",))
def _guile(root):
    """Write the `guile-wrong-type-backtrace` project under `root`; return its command and signals."""
    write(root, "stats.scm", "(define (mean xs) (/ (apply + xs) (length xs)))\n"
          "(define (report rows)\n  (for-each (lambda (r) (format #t \"sensor ~a mean ~a~%\" (car r) (mean (cdr r)))) rows))\n"
          "(define rows (map (lambda (n) (list n n (+ n 1) (+ n 2))) (iota 400)))\n"
          "(report (append rows '((400 7 \"8\" 9))))\n")
    return Run(["guile", "--no-auto-compile", "stats.scm"], [
        S("stderr", r"^Backtrace:$", "the trace's start"),
        S("stderr", r'\(primitive-load ".*/stats\.scm"\)$', "the script's frame"),
        S("stderr", r"^ERROR: In procedure \+:$", "the error"),
        S("stderr", r'^In procedure \+: Wrong type argument in position 2: "8"$', "what was wrong"),
        S("stdout", r"^sensor 399 mean 400$", "the last row reported before the error"),
    ], expect_exit=exits(1))


@recipe("tclsh-errorinfo", "tclsh", "runtime", ["bash", "-c", "echo 'puts [info patchlevel]' | tclsh"], needs=("tclsh",))
def _tcl(root):
    """Write the `tclsh-errorinfo` project under `root`; return its command and signals."""
    write(root, "deploy.tcl", "proc read_hosts {path} {\n    set f [open $path r]\n    set data [read $f]\n"
          "    close $f\n    return [split [string trim $data] \\n]\n}\n"
          "proc deploy {env} {\n    foreach host [read_hosts hosts-$env.txt] {\n        puts \"deploying to $host\"\n    }\n}\n"
          "puts \"starting deploy\"\ndeploy production\ndeploy staging\n")
    write(root, "hosts-production.txt", "".join(f"app{n:03d}.prod.internal\n" for n in range(300)))
    return Run(["tclsh", "deploy.tcl"], [
        S("stderr", r'^couldn\'t open "hosts-staging\.txt": no such file or directory$', "the error"),
        S("stderr", r'^    \(procedure "read_hosts" line 2\)$', "the innermost procedure"),
        S("stderr", r'^    \(file "deploy\.tcl" line 14\)$', "the script's line"),
    ], expect_exit=exits(1))


def _bats_tests(root: str) -> None:
    """A bats suite of 400 tests in four files, one failing deep in the third."""
    write(root, "bin/slugify", "#!/bin/bash\necho \"$1\" | tr 'A-Z ' 'a-z-'\n", mode=0o755)
    for f in range(4):
        tests = "".join(f"@test \"slugify word {f}-{n}\" {{\n  run bin/slugify \"Word {n}\"\n  [ \"$output\" = \"word-{n}\" ]\n}}\n\n"
                        for n in range(125))
        if f == 2:
            tests += "@test \"slugify trims trailing spaces\" {\n  run bin/slugify \"Sale \"\n  [ \"$output\" = \"sale\" ]\n}\n"
        write(root, f"test/slug{f}.bats", tests)


@recipe("bats-tap-one-failure", "bats", "test-runner", ["bats", "--version"], needs=("bats",))
def _bats(root):
    """Write the `bats-tap-one-failure` project under `root`; return its command and signals."""
    _bats_tests(root)
    return Run(["bats", "--tap", "test"], [
        S("stdout", r"^not ok \d+ slugify trims trailing spaces$", "the one failure among 501 tests"),
        S("stdout", r"^# \(in test file test/slug2\.bats, line \d+\)$", "its place"),
        S("stdout", r"^#   `\[ \"\$output\" = \"sale\" \]' failed$", "the failed check"),
    ], expect_exit=exits(1))


@recipe("shunit2-assert-failures", "shunit2", "test-runner", ["dpkg-query", "-W", "-f", "${Version}\n", "shunit2"],
        needs=("shunit2",))
def _shunit2(root):
    """Write the `shunit2-assert-failures` project under `root`; return its command and signals."""
    write(root, "lib/math.sh", "add() { echo $(( $1 + $2 )); }\npercent() { echo $(( $1 * 100 / $2 )); }\n")
    tests = "".join(f"test_add_{n}() {{ assertEquals {2 * n} \"$(add {n} {n})\"; }}\n" for n in range(420))
    write(root, "test_math.sh", ". ./lib/math.sh\n" + tests +
          "test_percent_rounds() { assertEquals 'third' 33 \"$(percent 1 3)\"; assertEquals 'two thirds' 67 \"$(percent 2 3)\"; }\n"
          ". shunit2\n")
    return Run(["bash", "test_math.sh"], [
        S("stdout", r"^ASSERT:two thirds expected:<67> but was:<66>$", "the failed assertion"),
        S("stderr", r"^shunit2:ERROR test_percent_rounds\(\) returned non-zero return code\.$", "the failing test"),
        S("stdout", r"^FAILED \(failures=2\)$", "the summary"),
    ], expect_exit=exits(1))


CHECK_SUITE = r"""
#include <check.h>
#include <stdlib.h>

static int cents(double amount) { return (int)(amount * 100); }

START_TEST(test_cents)
{
    double amount = _i + 0.25;
    ck_assert_int_eq(cents(amount), _i * 100 + 25);
}
END_TEST

START_TEST(test_cents_of_small_amount)
{
    ck_assert_int_eq(cents(0.29), 29);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("money");
    TCase *tc = tcase_create("cents");
    tcase_add_loop_test(tc, test_cents, 0, 600);
    tcase_add_test(tc, test_cents_of_small_amount);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
"""


@recipe("check-c-verbose-failure", "check", "test-runner", ["dpkg-query", "-W", "-f", "${Version}\n", "check"], needs=("gcc",))
def _check(root):
    """Write the `check-c-verbose-failure` project under `root`; return its command and signals."""
    write(root, "check_money.c", CHECK_SUITE)
    sh(["gcc", "-o", "check_money", "check_money.c", "-lcheck", "-lsubunit", "-lm", "-lpthread", "-lrt"], root)
    return Run(["./check_money"], [
        S("stdout", r"^99%: Checks: 601, Failures: 1, Errors: 0$", "the summary"),
        S("stdout", r"^check_money\.c:\d+:F:cents:test_cents_of_small_amount:0: Assertion 'cents\(0\.29\) == 29' failed",
          "the one failure among 601 checks, with its line"),
    ], expect_exit=exits(1))


CUNIT_SUITE = r"""
#include <CUnit/Basic.h>
#include <string.h>

static int word_count(const char *s) {
    int n = 0, in = 0;
    for (; *s; s++) { if (*s == ' ') in = 0; else if (!in) { in = 1; n++; } }
    return n;
}
static void test_simple(void) { CU_ASSERT_EQUAL(word_count("a b c"), 3); }
static void test_empty(void) { CU_ASSERT_EQUAL(word_count(""), 0); }
static void test_tabs(void) { CU_ASSERT_EQUAL(word_count("a\tb"), 2); }
static void test_spaces(void) { CU_ASSERT_EQUAL(word_count("  a  b "), 2); }
#include "generated.h"

int main(void) {
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("words", NULL, NULL);
    CU_add_test(s, "simple", test_simple);
    CU_add_test(s, "empty", test_empty);
    CU_add_test(s, "tabs", test_tabs);
    CU_add_test(s, "spaces", test_spaces);
    add_generated(s);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    int failed = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
"""


@recipe("cunit-basic-failure", "cunit", "test-runner", ["dpkg-query", "-W", "-f", "${Version}\n", "libcunit1-dev"],
        needs=("gcc",))
def _cunit(root):
    """Write the `cunit-basic-failure` project under `root`; return its command and signals."""
    write(root, "test_words.c", CUNIT_SUITE)
    cases = "".join(f"static void test_repeat_{n}(void) {{ CU_ASSERT_EQUAL(word_count(\"w x y\"), 3); }}\n" for n in range(300))
    adds = "".join(f"    CU_add_test(s, \"repeat {n}\", test_repeat_{n});\n" for n in range(300))
    write(root, "generated.h", cases + "static void add_generated(CU_pSuite s) {\n" + adds + "}\n")
    sh(["gcc", "-o", "test_words", "test_words.c", "-lcunit"], root)
    return Run(["./test_words"], [
        S("stdout", r"^  Test: tabs \.\.\.FAILED$", "the failed test"),
        S("stdout", r"^    1\. test_words\.c:11  - CU_ASSERT_EQUAL", "the assertion and its line"),
        S("stdout", r"^ +tests +304 +304 +303 +1 +0$", "the tests' summary row"),
    ], expect_exit=exits(1))


def _minitest_files(root: str) -> None:
    """A library and twelve minitest files of 300 tests; one assertion deep in the eighth fails."""
    write(root, "lib/units.rb", "module Units\n  def self.km(m) = m / 1000.0\n  def self.miles(km) = (km * 0.621371).round(2)\nend\n")
    for f in range(12):
        tests = "".join(f"  def test_km_{n:03d}\n    assert_equal {n}.0, Units.km({n * 1000})\n  end\n\n" for n in range(300))
        if f == 7:
            tests += "  def test_marathon_in_miles\n    assert_equal 26.2, Units.miles(42.195)\n  end\n"
        write(root, f"test/test_units_{f:02d}.rb", f"require 'minitest/autorun'\nrequire 'units'\n\n"
              f"class TestUnits{f:02d} < Minitest::Test\n{tests}end\n")
    write(root, "test/all.rb", "Dir[File.join(__dir__, 'test_units_*.rb')].sort.each { |f| require f }\n")


@recipe("ruby-minitest-verbose-deep-failure", "ruby", "test-runner", ["ruby", "--version"], needs=("ruby",))
def _minitest(root):
    """Write the `ruby-minitest-verbose-deep-failure` project under `root`; return its command and signals."""
    _minitest_files(root)
    return Run(["ruby", "-Ilib", "test/all.rb", "-v", "--seed", "1"], [
        S("stdout", r"^TestUnits07#test_marathon_in_miles = [\d.]+ s = F$", "the one failure among 3,601 tests"),
        S("stdout", r"^  1\) Failure:$", "the failure's heading"),
        S("stdout", r"^TestUnits07#test_marathon_in_miles \[.*test/test_units_07\.rb:\d+\]:$", "the test and its line"),
        S("stdout", r"^Expected: 26\.2$|^  Actual: 26\.22$", "the values"),
        S("stdout", r"^3601 runs, 3601 assertions, 1 failures, 0 errors, 0 skips$", "the summary"),
    ], expect_exit=exits(1))


RUBY_SCRIPT = """
require 'json'

class InvoiceBuilder
  def initialize(customers)
    @customers = customers
  end

  def build(order)
    customer = @customers[order['customer_id']]
    { 'to' => customer[:email].downcase, 'total' => order['total'] }
  end
end

orders = (1..400).map { |n| { 'customer_id' => n == 311 ? 9999 : n, 'total' => n * 3 } }
builder = InvoiceBuilder.new((1..400).to_h { |n| [n, { email: "CUSTOMER#{n}@EXAMPLE.ORG" }] })
orders.each do |order|
  puts builder.build(order).to_json
end
"""


@recipe("ruby-nomethod-error", "ruby", "runtime", ["ruby", "--version"], needs=("ruby",))
def _ruby_error(root):
    """Write the `ruby-nomethod-error` project under `root`; return its command and signals."""
    write(root, "invoices.rb", RUBY_SCRIPT)
    return Run(["ruby", "invoices.rb"], [
        S("stderr", r"^invoices\.rb:10:in `build': undefined method `\[\]' for nil:NilClass \(NoMethodError\)$",
          "the exception and the project's frame"),
        S("stderr", r"^\tfrom invoices\.rb:17:in `block in <main>'$", "the caller"),
        S("stdout", r'^\{"to":"customer310@example\.org","total":930\}$', "the last invoice built before the error"),
    ], expect_exit=exits(1))


@recipe("phpunit-testdox-failure", "phpunit", "test-runner", ["phpunit", "--version"], needs=("phpunit",))
def _phpunit(root):
    """Write the `phpunit-testdox-failure` project under `root`; return its command and signals."""
    write(root, "src/Cart.php", "<?php\nclass Cart {\n    private array $items = [];\n"
          "    public function add(string $sku, int $qty, float $price): void { $this->items[] = [$sku, $qty, $price]; }\n"
          "    public function total(): float { return array_sum(array_map(fn($i) => $i[1] * $i[2], $this->items)); }\n"
          "    public function discount(float $pct): float { return round($this->total() * (1 - $pct), 1); }\n}\n")
    tests = "".join(f"    public function testAddsItem{n}(): void {{ $c = new Cart(); $c->add('S{n}', {n % 5 + 1}, 2.0);"
                    f" $this->assertSame({(n % 5 + 1) * 2.0}, $c->total()); }}\n" for n in range(500))
    write(root, "tests/CartTest.php", "<?php\nuse PHPUnit\\Framework\\TestCase;\nrequire_once __DIR__ . '/../src/Cart.php';\n\n"
          "final class CartTest extends TestCase {\n" + tests +
          "    public function testAppliesTenPercentDiscount(): void { $c = new Cart(); $c->add('X', 3, 9.99);"
          " $this->assertSame(26.97, $c->discount(0.1)); }\n}\n")
    return Run(["phpunit", "--testdox", "--do-not-cache-result", "tests"], [
        S("stdout", r"^ ✘ Applies ten percent discount$", "the failed test"),
        S("stdout", r"^   │ Failed asserting that 27\.0 is identical to 26\.97\.$", "the assertion"),
        S("stdout", r"tests/CartTest\.php:\d+$", "the test's line"),
        S("stdout", r"^FAILURES!$", "the verdict"),
        S("stdout", r"^Tests: 501, Assertions: 501, Failures: 1\.$", "the count"),
    ], expect_exit=exits(1))


EUNIT_MODULE = """-module(inventory).
-export([reserve/2]).
-compile([export_all, nowarn_export_all]).

reserve(Stock, Qty) when Qty =< Stock -> {ok, Stock - Qty};
reserve(_Stock, _Qty) -> {error, insufficient}.
"""


@recipe("erl-eunit-verbose-failure", "erl", "test-runner", ["erl", "-noshell", "-eval",
        "io:format(\"OTP ~s~n\", [erlang:system_info(otp_release)]), halt()."], needs=("erlc",))
def _eunit(root):
    """Write the `erl-eunit-verbose-failure` project under `root`; return its command and signals."""
    tests = "".join(f"reserve_{n}_test() -> {{ok, {1000 - n}}} = reserve(1000, {n}).\n" for n in range(400))
    tests += "reserve_all_but_zero_test() -> {ok, 0} = reserve(5, 6).\n"
    write(root, "src/inventory.erl", EUNIT_MODULE + "\n" + tests)
    sh(["mkdir", "-p", "ebin"], root)
    sh(["erlc", "-o", "ebin", "src/inventory.erl"], root)
    return Run(["erl", "-noshell", "-pa", "ebin", "-eval", "eunit:test(inventory, [verbose])", "-s", "init", "stop"], [
        S("stdout", r"^  inventory: reserve_all_but_zero_test\.\.\.\*failed\*$", "the failed test"),
        S("stdout", r"^in function inventory:reserve_all_but_zero_test/0 \(src/inventory\.erl, line \d+\)$", "its line"),
        S("stdout", r"^\*\*error:\{badmatch,\{error,insufficient\}\}$", "the error"),
        S("stdout", r"^  Failed: 1\.  Skipped: 0\.  Passed: 400\.$", "the summary"),
    ], expect_exit=exits(0))
