"""Veiled recipes for compilers, build tools, runtimes and crashes: ghc, nim, ldc2, gnatmake, mcs, cobc,
a googletest binary, a passing CppUnit run, ExUnit, crystal spec, plunit, raco test, testthat, a Clojure exception,
ThreadSanitizer, verilator and bmake.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from veiled_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "ghc": "9.0.2-4", "nim": "1.6.10-2", "crystal": "1.6.0+dfsg-3", "ldc": "1:1.30.0-1+b1", "gnat": "12.2",
    "clojure": "1.11.1-2", "r-base-core": "4.2.2.20221110-2", "r-cran-testthat": "3.1.6-1",
    "swi-prolog-nox": "9.0.4+dfsg-2", "racket": "8.7+dfsg1-1", "elixir": "1.14.0.dfsg-2",
    "libgtest-dev": "1.12.1-0.2", "libcppunit-dev": "1.15.1-4+b1", "mono-mcs": "6.8.0.105+dfsg-3.3+deb12u1", "gnucobol": "5",
    "verilator": "5.006-3", "bmake": "20200710-15+b1",
}


@recipe("ghc-type-mismatch", "ghc", "compiler", ["ghc", "--version"], needs=("ghc",))
def _ghc(root):
    """Write the `ghc-type-mismatch` project under `root`; return its command and signals."""
    write(root, "src/Inventory.hs", "module Inventory (Item(..), total, restock) where\n\n"
          "data Item = Item { name :: String, price :: Double, count :: Int }\n\n"
          "total :: [Item] -> Double\ntotal items = sum [price i * count i | i <- items]\n\n"
          "restock :: Int -> Item -> Item\nrestock n item = item { count = count item + n }\n")
    write(root, "src/Main.hs", "module Main where\n\nimport Inventory\n\nmain :: IO ()\nmain = do\n"
          "  let items = [Item \"pen\" 1.5 10, Item \"ink\" 4.0 3]\n  print (total items)\n"
          "  print (map (restock \"5\") items)\n")
    return Run(["ghc", "-isrc", "-outputdir", "build", "-o", "inventory", "src/Main.hs"], [
        S("stderr", r"^src/Inventory\.hs:6:30: error:$", "the error's place"),
        S("stderr", r"Couldn't match expected type ‘Double’ with actual type ‘Int’$", "the error"),
    ], expect_exit=exits(1))


@recipe("nim-compile-type-mismatch", "nim", "compiler", ["nim", "--version"], needs=("nim",))
def _nim(root):
    """Write the `nim-compile-type-mismatch` project under `root`; return its command and signals."""
    write(root, "src/ledger.nim", "type\n  Entry* = object\n    memo*: string\n    cents*: int\n\n"
          "proc total*(entries: seq[Entry]): int =\n  for e in entries:\n    result += e.cents\n")
    write(root, "src/app.nim", "import std/[strutils, tables]\nimport ledger\n\n"
          "var byMemo = initTable[string, int]()\nlet rows = @[Entry(memo: \"rent\", cents: 120000),\n"
          "                Entry(memo: \"food\", cents: \"4500\")]\nfor r in rows:\n  byMemo[r.memo] = r.cents\n"
          "echo total(rows).formatFloat(ffDecimal, 2)\n")
    return Run(["nim", "c", "--nimcache:build/cache", "-o:build/app", "src/app.nim"], [
        S("stderr", r"src/app\.nim\(6, 42\) Error: type mismatch: got 'string' for '\"4500\"' but expected 'int'$",
          "the error and its place"),
    ], env={"XDG_CACHE_HOME": os.path.join(root, ".cache")}, expect_exit=exits(1))


@recipe("ldc2-undefined-identifiers", "ldc2", "compiler", ["ldc2", "--version"], needs=("ldc2",))
def _ldc2(root):
    """Write the `ldc2-undefined-identifiers` project under `root`; return its command and signals."""
    write(root, "source/stats.d", "module stats;\n\nimport std.algorithm : sum;\n\n"
          "double mean(const double[] xs) {\n    return xs.sum / xs.lenght;\n}\n\n"
          "double spread(const double[] xs) {\n    auto m = mean(xs);\n    double acc = 0;\n"
          "    foreach (x; xs) acc += (x - m) ^^ 2;\n    return sqrt(acc / xs.length);\n}\n")
    write(root, "source/app.d", "import std.stdio;\nimport stats;\n\nvoid main() {\n"
          "    double[] data = [1.5, 2.5, 4.0];\n    writeln(mean(data), \" \", spread(data));\n}\n")
    return Run(["ldc2", "-of=build/app", "source/app.d", "source/stats.d"], [
        S("stderr", r"^source/stats\.d\(6\): Error: no property `lenght`", "the first error"),
        S("stderr", r"^source/stats\.d\(13\): Error: `sqrt` is not defined", "the second error"),
    ], expect_exit=exits(1))


@recipe("gnatmake-ada-errors", "gnatmake", "build", ["gnatmake", "--version"], needs=("gnatmake",))
def _gnatmake(root):
    """Write the `gnatmake-ada-errors` project under `root`; return its command and signals."""
    write(root, "pricing.ads", "package Pricing is\n   type Cents is range 0 .. 10_000_000;\n"
          "   function Discounted (Price : Cents; Percent : Natural) return Cents;\nend Pricing;\n")
    write(root, "pricing.adb", "package body Pricing is\n"
          "   function Discounted (Price : Cents; Percent : Natural) return Cents is\n   begin\n"
          "      return Price - Price * Percent / 100;\n   end Discounted;\nend Pricing;\n")
    write(root, "main.adb", "with Ada.Text_IO; use Ada.Text_IO;\nwith Pricing; use Pricing;\n\nprocedure Main is\n"
          "   P : Cents := 2_500;\nbegin\n   Put_Line (Cents'Image (Discounted (P, 10)));\n"
          "   Put_Line (Cents'Image (Discounted (P)));\nend Main;\n")
    return Run(["gnatmake", "main.adb"], [
        S("stderr", r'^main\.adb:8:27: error: missing argument for parameter "Percent"', "the error and its place"),
        S("stderr", r'^gnatmake: "main\.adb" compilation error$', "the verdict"),
    ], expect_exit=exits(4, 1))


@recipe("mcs-csharp-errors", "mcs", "compiler", ["mcs", "--version"], needs=("mcs",))
def _mcs(root):
    """Write the `mcs-csharp-errors` project under `root`; return its command and signals."""
    write(root, "src/Order.cs", "using System;\nusing System.Collections.Generic;\n\nnamespace Shop {\n"
          "    public class Order {\n        public List<decimal> Lines = new List<decimal>();\n"
          "        public int Total() {\n            decimal sum = 0;\n            foreach (var l in Lines) sum += l;\n"
          "            return sum;\n        }\n    }\n}\n")
    write(root, "src/Program.cs", "using System;\n\nnamespace Shop {\n    class Program {\n"
          "        static void Main() {\n            var order = new Order();\n            int unused = 3;\n"
          "            order.Lines.Add(9.99m);\n            Console.WriteLine(order.Totl());\n        }\n    }\n}\n")
    return Run(["mcs", "-out:build/shop.exe", "src/Order.cs", "src/Program.cs"], [
        S("stderr", r"^src/Order\.cs\(10,20\): error CS0266: ", "the first error"),
        S("stderr", r"^src/Program\.cs\(9,37\): error CS1061: ", "the second error"),
        S("stdout", r"^Compilation failed: 2 error\(s\), 0 warnings$", "the verdict"),
    ], command="mkdir -p build && mcs -out:build/shop.exe src/Order.cs src/Program.cs", expect_exit=exits(1))


@recipe("cobc-undefined-field", "cobc", "compiler", ["cobc", "--version"], needs=("cobc",))
def _cobc(root):
    """Write the `cobc-undefined-field` project under `root`; return its command and signals."""
    with open(os.path.join(root, "payroll.cob"), "w", encoding="utf-8") as handle:
        handle.write("       IDENTIFICATION DIVISION.\n       PROGRAM-ID. PAYROLL.\n"
                     "       DATA DIVISION.\n       WORKING-STORAGE SECTION.\n       01 WS-HOURS    PIC 9(3) VALUE 40.\n"
                     "       01 WS-RATE     PIC 9(3)V99 VALUE 21.50.\n       01 WS-TOTAL    PIC 9(5)V99.\n"
                     "       PROCEDURE DIVISION.\n           MULTIPLY WS-HOURS BY WS-RATE GIVING WS-TOTL.\n"
                     "           DISPLAY \"TOTAL: \" WS-TOTAL.\n           MOVE WS-TOTAL TO WS-GROSS.\n           STOP RUN.\n")
    return Run(["cobc", "-x", "-o", "payroll", "payroll.cob"], [
        S("stderr", r"^payroll\.cob:(9|11): error: 'WS-(TOTL|GROSS)' is not defined$", "the two errors and their lines"),
    ], expect_exit=exits(1))


def _rate_test() -> str:
    """A parameterized googletest suite of 3,000 conversions; one table entry is wrong."""
    return ("#include <gtest/gtest.h>\n#include <cstdint>\n\n"
            "static std::int64_t to_cents(std::int64_t units, int rate) { return units * rate / 100; }\n\n"
            "static std::int64_t expected_cents(int n) { return n == 1234 ? 1234 * 7 : n * 7 * 3 / 3; }\n\n"
            "class RateTest : public ::testing::TestWithParam<int> {};\n\n"
            "TEST_P(RateTest, Converts) {\n  int n = GetParam();\n  EXPECT_EQ(to_cents(n * 100, 7), expected_cents(n))\n"
            "      << \"conversion of \" << n << \" units\";\n}\n\n"
            "INSTANTIATE_TEST_SUITE_P(Rates, RateTest, ::testing::Range(0, 3000));\n\n"
            "TEST(Rounding, HalfUp) { EXPECT_EQ(to_cents(150, 1), 1); }\n")


@recipe("gtest-one-failure-of-thousands", "googletest", "test-runner",
        ["dpkg-query", "-W", "-f", "${Version}", "libgtest-dev"], needs=("g++",))
def _gtest(root):
    """Write the `gtest-one-failure-of-thousands` project under `root`; return its command and signals."""
    write(root, "tests/rate_test.cc", _rate_test().replace("n == 1234 ? 1234 * 7", "n == 1234 ? 1234 * 7 + 1"))
    sh(["g++", "-std=c++17", "-O1", "-o", "rate_test", "tests/rate_test.cc", "-lgtest", "-lgtest_main", "-pthread"], root)
    return Run(["./rate_test"], [
        S("stdout", r"^tests/rate_test\.cc:12: Failure$", "the failing assertion's place"),
        S("stdout", r"^    Which is: \d+$", "the two values compared"),
        S("stdout", r"^\[  FAILED  \] Rates/RateTest\.Converts/1234, where GetParam\(\) = 1234",
          "the one failed test among 3,001, and its listing in the summary"),
        S("stdout", r"^ 1 FAILED TEST$", "the count"),
    ], expect_exit=exits(1))


def _cart_test(count: int) -> str:
    """An ExUnit module with `count` generated tests; the one for 1,337 items expects the wrong total."""
    return ("defmodule CartTest do\n  use ExUnit.Case\n\n"
            f"  for n <- 1..{count} do\n    @n n\n    test \"total of a cart with #{{@n}} identical items at 250 cents\" do\n"
            "      cart = Enum.reduce(1..@n, Cart.new(), fn _, c -> Cart.add(c, 250) end)\n"
            "      expected = if @n == 1337, do: 334_000, else: @n * 250\n"
            "      assert Cart.total(cart) == expected\n    end\n  end\nend\n")


@recipe("mix-test-trace-one-failure", "mix", "test-runner", ["elixir", "--version"], needs=("mix", "elixir"))
def _mix(root):
    """Write the `mix-test-trace-one-failure` project under `root`; return its command and signals."""
    write(root, "mix.exs", "defmodule Shop.MixProject do\n  use Mix.Project\n\n"
          "  def project, do: [app: :shop, version: \"0.1.0\", elixir: \"~> 1.14\", deps: []]\n\n"
          "  def application, do: [extra_applications: [:logger]]\nend\n")
    write(root, "lib/cart.ex", "defmodule Cart do\n  def new, do: []\n  def add(cart, cents), do: [cents | cart]\n"
          "  def total(cart), do: Enum.sum(cart)\nend\n")
    write(root, "test/test_helper.exs", "ExUnit.start()\n")
    write(root, "test/cart_test.exs", _cart_test(2400))
    sh(["mix", "compile"], root, env={"HOME": os.path.join(root, ".home"), "MIX_ENV": "test"})
    return Run(["mix", "test", "--trace", "--seed", "0"], [
        S("stdout", r"^  1\) test total of a cart with 1337 identical items at 250 cents \(CartTest\)$",
          "the one failed test among 2,400"),
        S("stdout", r"^     test/cart_test\.exs:6$", "its place"),
        S("stdout", r"^     Assertion with == failed$", "the failure"),
        S("stdout", r"^     (left|right): +33\d+$", "the values compared"),
        S("stdout", r"^       test/cart_test\.exs:9: \(test\)$", "the frame in the test"),
        S("stdout", r"^2400 tests, 1 failure$", "the summary"),
    ], env={"HOME": os.path.join(root, ".home"), "MIX_ENV": "test"}, expect_exit=exits(2, 1))


def _inventory_spec(count: int) -> str:
    """A crystal spec file with `count` examples; one expects the wrong reorder point."""
    return ("require \"spec\"\nrequire \"../src/inventory\"\n\ndescribe Inventory do\n"
            f"  {{% for n in 1..{count} %}}\n"
            "    it \"computes the reorder point for SKU {{n}}\" do\n"
            "      Inventory.reorder_point({{n}}, 3).should eq({{n == 207 ? 620 : n * 3 + 2}})\n"
            "    end\n  {% end %}\nend\n")


@recipe("crystal-spec-verbose-failure", "crystal", "test-runner", ["crystal", "--version"], needs=("crystal",))
def _crystal(root):
    """Write the `crystal-spec-verbose-failure` project under `root`; return its command and signals."""
    write(root, "src/inventory.cr", "module Inventory\n  def self.reorder_point(sku : Int32, lead_days : Int32) : Int32\n"
          "    sku * lead_days + 2\n  end\nend\n")
    write(root, "spec/inventory_spec.cr", _inventory_spec(320))
    write(root, "shard.yml", "name: inventory\nversion: 0.1.0\n")
    return Run(["crystal", "spec", "-v"], [
        S("stdout", r"^  1\) Inventory computes the reorder point for SKU 207$", "the one failed example among 320"),
        S("stdout", r"^     Failure/Error: ", "the failure"),
        S("stdout", r"^       Expected: 620$|^            got: 623$", "the values compared"),
        S("stdout", r"^     # spec/inventory_spec\.cr:5$", "its place"),
        S("stdout", r"^320 examples, 1 failures, 0 errors, 0 pending$", "the summary"),
        S("stdout", r"^crystal spec spec/inventory_spec\.cr:5 # ", "how to rerun it"),
    ], env={"CRYSTAL_CACHE_DIR": os.path.join(root, ".cache")}, timeout=900, expect_exit=exits(1))


@recipe("swipl-plunit-failures", "swipl", "test-runner", ["swipl", "--version"], needs=("swipl",))
def _swipl(root):
    """Write the `swipl-plunit-failures` project under `root`; return its command and signals."""
    write(root, "route.pl", ":- module(route, [path/3, cost/2]).\n\nedge(a, b, 4). edge(b, c, 3). edge(a, c, 9).\n"
          "edge(c, d, 2). edge(b, d, 8).\n\npath(X, Y, [X, Y]) :- edge(X, Y, _).\n"
          "path(X, Y, [X | P]) :- edge(X, Z, _), path(Z, Y, P).\n\ncost([_], 0).\n"
          "cost([X, Y | T], C) :- edge(X, Y, C0), cost([Y | T], C1), C is C0 + C1.\n")
    checks = "".join(f"test(edge_{n}) :- route:edge(_, _, C), C > {n % 2}.\n" for n in range(20))
    write(root, "tests.pl", ":- use_module(route).\n:- begin_tests(route).\n\n" + checks
          + "test(shortest, [true(C == 8)]) :- path(a, d, P), cost(P, C).\n"
          "test(no_path, [fail]) :- path(d, a, _).\n"
          "test(all_paths, [all(P == [[a, b, c], [a, c]])]) :- path(a, c, P).\n"
          "test(cost_unknown) :- cost([a, d], _).\n\n:- end_tests(route).\n")
    return Run(["swipl", "-g", "run_tests", "-t", "halt", "tests.pl"], [
        S("stderr", r"^ERROR: .*/tests\.pl:2[467]:$", "each failed test's place"),
        S("stderr", r"^\ttest (shortest|all_paths|cost_unknown): ", "what failed in each"),
        S("stderr", r"^% 3 tests failed$", "the count"),
        S("stderr", r"^ERROR: -g run_tests: false$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("raco-test-rackunit-failures", "raco", "test-runner", ["racket", "--version"], needs=("raco",))
def _raco(root):
    """Write the `raco-test-rackunit-failures` project under `root`; return its command and signals."""
    write(root, "money.rkt", "#lang racket/base\n(provide split-bill round-cents)\n\n"
          "(define (round-cents x) (/ (round (* x 100)) 100))\n\n"
          "(define (split-bill total people)\n  (for/list ([i people]) (round-cents (/ total people))))\n")
    checks = "".join(f"(check-equal? (length (split-bill {10 * n} {n})) {n})\n" for n in range(1, 40))
    write(root, "money-test.rkt", "#lang racket/base\n(require rackunit \"money.rkt\")\n\n" + checks
          + "(check-equal? (apply + (split-bill 100 3)) 100)\n"
          "(check-= (round-cents 2.675) 2.68 0.0001 \"banker's rounding\")\n"
          "(test-case \"empty split\" (check-exn exn:fail? (lambda () (split-bill 10 0))))\n")
    return Run(["raco", "test", "money-test.rkt"], [
        S("stderr", r"^FAILURE$", "each failure"),
        S("stderr", r"^location:   money-test\.rkt:4[35]:", "each failure's place"),
        S("stderr", r"^(actual|expected):   |^message:    \"No exception raised\"$", "what each found"),
        S("stderr", r"^2/42 test failures$", "the count"),
    ], env={"PLTUSERHOME": os.path.join(root, ".racket")}, expect_exit=exits(1))


@recipe("testthat-failure-and-error", "Rscript", "test-runner", ["Rscript", "--version"], needs=("Rscript",))
def _testthat(root):
    """Write the `testthat-failure-and-error` project under `root`; return its command and signals."""
    write(root, "R/pricing.R", "discount <- function(price, pct) {\n  stopifnot(pct >= 0)\n"
          "  round(price * (1 - pct / 100), 2)\n}\n\nvat <- function(price, rate = 0.19) price * (1 + rate)\n")
    cases = "".join(f"test_that(\"discount of {n} percent\", {{\n  expect_equal(discount(200, {n}), {200 - 2 * n})\n}})\n\n"
                    for n in range(0, 60, 3))
    write(root, "tests/testthat/test-discount.R", cases + "test_that(\"negative discount is rejected\", {\n"
          "  expect_error(discount(10, -5), \"pct must be positive\")\n})\n")
    write(root, "tests/testthat/test-vat.R", "test_that(\"vat is added\", {\n  expect_equal(vat(100), 119)\n"
          "  expect_equal(vat(100, 0.07), 107)\n})\n\ntest_that(\"vat rounds to cents\", {\n"
          "  expect_equal(vat(9.99), 11.89)\n})\n\ntest_that(\"vat of a vector\", {\n"
          "  expect_equal(vat(c(1, 2)), c(1.19, 2.38))\n  expect_equal(vat(\"12\"), 14.28)\n})\n")
    return Run(["Rscript", "-e", "testthat::test_dir('tests/testthat')"], [
        S("stdout", r"^Failure \('test-discount\.R:82'\): negative discount is rejected$", "the first failure"),
        S("stdout", r"^Failure \('test-vat\.R:7'\): vat rounds to cents$", "the second failure"),
        S("stdout", r"^Error \('test-vat\.R:12'\): vat of a vector$", "the error"),
        S("stdout", r"^Error in `price \* \(1 \+ rate\)`: non-numeric argument to binary operator$", "what the error was"),
        S("stdout", r"^\[ FAIL 3 \| WARN 0 \| SKIP 0 \| PASS 23 \]$", "the summary"),
        S("stderr", r"^Error: Test failures$", "the verdict"),
    ], command=["Rscript", "-e", "source('R/pricing.R'); testthat::test_dir('tests/testthat')"],
        env={"R_LIBS_USER": os.path.join(root, ".lib")}, expect_exit=exits(1))


@recipe("clojure-execution-error", "clojure", "crash", ["dpkg-query", "-W", "-f", "${Version}", "clojure"],
        needs=("clojure", "java"))
def _clojure(root):
    """Write the `clojure-execution-error` project under `root`; return its command and signals."""
    write(root, "src/shop/stats.clj", "(ns shop.stats)\n\n(defn ratio [part whole]\n  (/ part whole))\n\n"
          "(defn conversion [{:keys [visits orders]}]\n  (ratio orders visits))\n")
    write(root, "src/shop/report.clj", "(ns shop.report\n  (:require [shop.stats :as stats]))\n\n"
          "(def days (for [d (range 1 31)] {:day d :visits (if (= d 23) 0 (* 40 d)) :orders (* 3 d)}))\n\n"
          "(defn -main [& _]\n  (doseq [d days]\n"
          "    (println (format \"day %02d visits %5d orders %4d conversion %.4f\" (:day d) (:visits d) (:orders d)\n"
          "                     (double (stats/conversion d))))))\n")
    return Run(["clojure", "-cp", "src", "-m", "shop.report"], [
        S("stderr", r"^Execution error \(ArithmeticException\) at shop\.stats/ratio \(stats\.clj:4\)\.$",
          "the exception and the project frame"),
        S("stderr", r"^Divide by zero$", "its message"),
    ], expect_exit=exits(1))


@recipe("tsan-data-race", "tsan", "crash", ["g++", "--version"], needs=("g++",))
def _tsan(root):
    """Write the `tsan-data-race` project under `root`; return its command and signals."""
    write(root, "src/stats.h", "#pragma once\n#include <cstddef>\n\nstruct Stats {\n  std::size_t hits = 0;\n"
          "  void record();\n};\n")
    write(root, "src/stats.cc", "#include \"stats.h\"\n\nvoid Stats::record() {\n  hits++;\n}\n")
    write(root, "src/server.cc", "#include <cstdio>\n#include <thread>\n#include <vector>\n#include \"stats.h\"\n\n"
          "static void serve(Stats &stats, int requests) {\n  for (int i = 0; i < requests; i++) stats.record();\n}\n\n"
          "int main() {\n  Stats stats;\n  std::vector<std::thread> workers;\n"
          "  for (int w = 0; w < 4; w++) workers.emplace_back(serve, std::ref(stats), 1000);\n"
          "  for (auto &t : workers) t.join();\n  std::printf(\"served %zu requests\\n\", stats.hits);\n  return 0;\n}\n")
    sh(["g++", "-g", "-O1", "-fsanitize=thread", "-o", "server", "src/server.cc", "src/stats.cc", "-pthread"], root)
    return Run(["./server"], [
        S("stderr", r"^WARNING: ThreadSanitizer: data race \(pid=\d+\)$", "the report's start"),
        S("stderr", r"^  (Previous )?([Rr]ead|[Ww]rite) of size 8 at 0x[0-9a-f]+ by thread T\d+:$", "the two racing accesses"),
        S("stderr", r"^    #0 Stats::record\(\) src/stats\.cc:4 ", "the project frame of each"),
        S("stderr", r"^SUMMARY: ThreadSanitizer: data race src/stats\.cc:4 in Stats::record\(\)$", "the summary"),
        S("stderr", r"^ThreadSanitizer: reported 1 warnings$", "the count"),
    ], command=["setarch", "-R", "./server"], env={"TSAN_OPTIONS": "halt_on_error=0"}, expect_exit=exits(66))


def _verilog_module(n: int) -> str:
    """One generated pipeline stage; its width mismatches draw lint warnings."""
    latch = ("  reg [7:0] hold;\n  always @(*) if (din[0]) hold = din[7:0];\n" if n == 23 else "")
    return (f"module stage{n:02d} (\n  input  wire        clk,\n  input  wire [15:0] din,\n  output reg  [7:0]  dout\n);\n"
            f"  reg [15:0] acc;\n{latch}  always @(posedge clk) begin\n    acc <= din + {n};\n    dout <= acc;\n  end\n"
            "endmodule\n")


@recipe("verilator-lint-width-warnings", "verilator", "linter", ["verilator", "--version"], needs=("verilator",))
def _verilator(root):
    """Write the `verilator-lint-width-warnings` project under `root`; return its command and signals."""
    for n in range(40):
        write(root, f"rtl/stage{n:02d}.v", _verilog_module(n))
    chain = "".join(f"  wire [15:0] w{n + 1:02d};\n  wire [7:0] o{n:02d};\n"
                    f"  stage{n:02d} s{n:02d} (.clk(clk), .din(w{n:02d}), .dout(o{n:02d}));\n"
                    f"  assign w{n + 1:02d} = {{8'd0, o{n:02d}}};\n" for n in range(40))
    write(root, "rtl/top.v", "module top (\n  input wire clk,\n  input wire [15:0] din,\n  output wire [15:0] dout\n);\n"
          "  wire [15:0] w00 = din;\n" + chain + "  assign dout = w40;\nendmodule\n")
    files = [f"rtl/stage{n:02d}.v" for n in range(40)]
    return Run(["verilator", "--lint-only", "-Wall", "-Wno-fatal", "rtl/top.v", *files], [
        S("stderr", r"^%Warning-LATCH: rtl/stage23\.v:8:3: Latch inferred for signal 'top\.s23\.hold'",
          "the one latch among 81 width and unused-signal warnings"),
    ], expect_exit=exits(1, 0))


def _bsd_makefile(count: int) -> str:
    """A BSD makefile compiling `count` sources one by one, echoing each step."""
    objs = " ".join(f"obj/m{n:03d}.o" for n in range(count))
    return (f"OBJS = {objs}\n\nall: libshop.a\n\nlibshop.a: ${{OBJS}}\n\tar rcs $@ ${{OBJS}}\n\n"
            ".for o in ${OBJS}\n${o}: ${o:S/^obj/src/:S/.o$/.c/}\n\t@mkdir -p obj\n"
            "\tcc -O2 -Wall -c ${o:S/^obj/src/:S/.o$/.c/} -o ${o}\n.endfor\n")


@recipe("bmake-compile-failure", "bmake", "build", ["dpkg-query", "-W", "-f", "${Version}", "bmake"],
        needs=("bmake", "cc"))
def _bmake(root):
    """Write the `bmake-compile-failure` project under `root`; return its command and signals."""
    for n in range(400):
        body = f"int shop_m{n:03d}(int x) {{ return x * {n} + 1; }}\n"
        if n == 311:
            body = "#include \"pricing.h\"\n" + f"int shop_m{n:03d}(int x) {{ return price_of(x); }}\n"
        write(root, f"src/m{n:03d}.c", body)
    write(root, "Makefile", _bsd_makefile(400))
    return Run(["bmake"], [
        S("stderr", r"^src/m311\.c:1:10: fatal error: pricing\.h: No such file or directory$", "the error"),
        S("stdout", r"^cc -O2 -Wall -c src/m311\.c -o obj/m311\.o$", "the step that failed, among 312"),
        S("stdout", r"^\*\*\* Error code 1$", "the failure"),
        S("stdout", r"^bmake: stopped in ", "the verdict"),
    ], expect_exit=exits(1, 2))


CPPUNIT_MAIN = """#include <cppunit/BriefTestProgressListener.h>
#include <cppunit/CompilerOutputter.h>
#include <cppunit/TestCaller.h>
#include <cppunit/TestFixture.h>
#include <cppunit/TestResult.h>
#include <cppunit/TestResultCollector.h>
#include <cppunit/TestRunner.h>
#include <cppunit/TestSuite.h>
#include <cppunit/extensions/HelperMacros.h>
#include <iostream>
#include <string>
#include "ledger.h"

class LedgerTest : public CppUnit::TestFixture {
 public:
  void balances() {
    for (int n = 0; n < 50; n++) {
      Ledger l;
      l.post(n * 100);
      l.post(-n * 40);
      CPPUNIT_ASSERT_EQUAL(static_cast<long>(n * 60), l.balance());
    }
  }
};

int main() {
  auto *suite = new CppUnit::TestSuite("LedgerTest");
  for (int n = 0; n < 480; n++) {
    char name[64];
    std::snprintf(name, sizeof name, "LedgerTest::balances_account_%03d", n);
    suite->addTest(new CppUnit::TestCaller<LedgerTest>(name, &LedgerTest::balances));
  }
  CppUnit::TestResult controller;
  CppUnit::TestResultCollector result;
  controller.addListener(&result);
  CppUnit::BriefTestProgressListener progress;
  controller.addListener(&progress);
  CppUnit::TestRunner runner;
  runner.addTest(suite);
  runner.run(controller);
  CppUnit::CompilerOutputter outputter(&result, std::cerr);
  outputter.write();
  return result.wasSuccessful() ? 0 : 1;
}
"""


@recipe("cppunit-all-tests-pass", "cppunit", "test-runner", ["dpkg-query", "-W", "-f", "${Version}", "libcppunit-dev"],
        needs=("g++",))
def _cppunit(root):
    """Write the `cppunit-all-tests-pass` project under `root`; return its command and signals."""
    write(root, "src/ledger.h", "#pragma once\n\nclass Ledger {\n public:\n  void post(long cents) { total_ += cents; }\n"
          "  long balance() const { return total_; }\n\n private:\n  long total_ = 0;\n};\n")
    write(root, "tests/ledger_test.cc", CPPUNIT_MAIN)
    sh(["g++", "-std=c++17", "-Isrc", "-o", "ledger_test", "tests/ledger_test.cc", "-lcppunit"], root)
    return Run(["./ledger_test"], [
        S("stderr", r"^OK \(480\)$", "the verdict: every one of 480 tests passed"),
    ], expect_exit=exits(0))
