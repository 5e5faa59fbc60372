"""Blind recipes for compilers, builds and other languages: gfortran, nasm, ocaml, erlc, scons, ant,
rspec, rubocop, perlcritic, luacheck, busted, php, a Rust panic, dpkg-buildpackage.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from blind_common import Run, S, exits, recipe, write


@recipe("gfortran-wall-one-error", "gfortran", "compiler", ["gfortran", "--version"], needs=("gfortran",))
def _gfortran(root):
    """Write the `gfortran-wall-one-error` project under `root`; return its command and signals."""
    subs = "".join(f"""
        subroutine step{k}(x, n)
          integer :: n, i, unused{k}
          real :: x(n)
          do i = 1, n
            x(i) = x(i) * {k + 1}.0
          end do
        end subroutine step{k}
        """ for k in range(12))
    write(root, "src/steps.f90", "module steps\ncontains\n" + subs + "\nend module steps\n")
    write(root, "src/main.f90", """
        program main
          use steps
          implicit none
          real :: grid(10)
          integer :: count
          grid = 1.0
          count = 'ten'
          call step1(grid, 10)
          print *, grid(1), count
        end program main
        """)
    return Run(["gfortran", "-Wall", "-c", "src/steps.f90", "src/main.f90"], [
        S("stderr", r"^src/main\.f90:\d+:\d+:$", "where the error is"),
        S("stderr", r"^Error: Cannot convert CHARACTER\(3\) to INTEGER\(4\) at \(1\)$", "the error"),
    ], expect_exit=exits(1))


@recipe("nasm-errors", "nasm", "compiler", ["nasm", "-v"], needs=("nasm",))
def _nasm(root):
    """Write the `nasm-errors` project under `root`; return its command and signals."""
    write(root, "boot.asm", """
        bits 64
        section .text
        global _start
        _start:
            mov rax, 60
            mov rdi, [counter]
            mvo rbx, 1
            add rax, undefined_label
            jmp done
        section .data
        counter: dq 0
        """)
    return Run(["nasm", "-f", "elf64", "boot.asm", "-o", "boot.o"], [
        S("stderr", r"^boot\.asm:\d+: error: ", "each error with its line"),
    ], expect_exit=exits(1))


@recipe("ocaml-type-error", "ocamlc", "compiler", ["ocamlc", "-version"], needs=("ocamlc",))
def _ocaml(root):
    """Write the `ocaml-type-error` project under `root`; return its command and signals."""
    write(root, "inventory.ml", """
        type item = { name : string; qty : int; price : float }

        let total items =
          List.fold_left (fun acc it -> acc +. (it.qty *. it.price)) 0.0 items

        let () =
          let items = [ { name = "bolt"; qty = 4; price = 0.25 } ] in
          Printf.printf "%f\\n" (total items)
        """)
    return Run(["ocamlc", "-o", "inventory", "inventory.ml"], [
        S("stderr", r'^File "inventory\.ml", line 4, characters \d+-\d+:$', "where the error is"),
        S("stderr", r"^Error: This expression has type int but an expression was expected of type$", "the error"),
    ], expect_exit=exits(2))


@recipe("erlc-errors-warnings", "erlc", "compiler", ["erl", "-noshell", "-eval",
        "io:format(\"OTP ~s~n\", [erlang:system_info(otp_release)]), halt()."], needs=("erlc",))
def _erlc(root):
    """Write the `erlc-errors-warnings` project under `root`; return its command and signals."""
    write(root, "src/billing.erl", """
        -module(billing).
        -export([invoice/2, total/1]).

        invoice(Customer, Lines) ->
            Unused = length(Lines),
            {Customer, total(Lines), Taxes}.

        total(Lines) ->
            lists:foldl(fun({_Sku, Qty, Price}, Acc) -> Acc + Qty * Price end, 0, Lines).

        helper(X) -> X * 2.
        """)
    return Run(["erlc", "-o", "ebin", "src/billing.erl"], [
        S("stdout", r"^src/billing\.erl:\d+:\d+: variable 'Taxes' is unbound$", "the error"),
    ], command="mkdir -p ebin && erlc -o ebin src/billing.erl", expect_exit=exits(1))


def _c_file(i: int) -> str:
    """A small C unit; unit 143 calls a function with the wrong arguments."""
    call = "return scale_143(v, 2, 3);" if i == 143 else f"return v * {i + 1};"
    return f"int scale_{i}(int v) {{\n    {call}\n}}\n"


@recipe("scons-k-one-failure", "scons", "build", ["scons", "--version"], needs=("scons", "gcc"))
def _scons(root):
    """Write the `scons-k-one-failure` project under `root`; return its command and signals."""
    for i in range(240):
        write(root, f"src/lib{i // 40}/unit_{i:03d}.c", _c_file(i))
    write(root, "SConstruct", "env = Environment(CCFLAGS='-O1 -Wall')\n"
          "env.StaticLibrary('core', Glob('src/*/*.c'))\n")
    return Run(["scons", "-k"], [
        S("stdout", r"^scons: done building targets \(errors occurred during build\)\.$", "the build's verdict"),
        S("stderr", r"^src/lib3/unit_143\.c:2:12: error: too many arguments to function 'scale_143'$", "the error"),
        S("stderr", r"^scons: \*\*\* \[src/lib3/unit_143\.o\] Error 1$", "the target that failed"),
    ], expect_exit=exits(2))


@recipe("ant-javac-build-failed", "ant", "build", ["ant", "-version"], needs=("ant", "javac"))
def _ant(root):
    """Write the `ant-javac-build-failed` project under `root`; return its command and signals."""
    write(root, "build.xml", """
        <project name="ledger" default="jar">
          <target name="clean"><delete dir="build"/></target>
          <target name="compile">
            <mkdir dir="build/classes"/>
            <javac srcdir="src" destdir="build/classes" includeantruntime="false"/>
          </target>
          <target name="jar" depends="compile">
            <jar destfile="build/ledger.jar" basedir="build/classes"/>
          </target>
        </project>
        """)
    for i in range(5):
        write(root, f"src/ledger/Entry{i}.java", f"package ledger;\n\npublic class Entry{i} {{\n"
              f"    public long cents() {{ return {i * 100}L; }}\n}}\n")
    write(root, "src/ledger/Book.java", """
        package ledger;

        import java.util.List;

        public class Book {
            public long total(List<Entry0> entries) {
                long sum = 0;
                for (Entry0 e : entries) sum += e.cent();
                return sum;
            }
        }
        """)
    return Run(["ant"], [
        S("stdout", r"^    \[javac\] .*/src/ledger/Book\.java:\d+: error: cannot find symbol$", "the error and its place"),
        S("stdout", r"^    \[javac\]   symbol:   method cent\(\)$", "what is missing"),
        S("stdout", r"^    \[javac\] 1 error$", "the compiler's count"),
        S("stderr", r"^BUILD FAILED$", "the verdict"),
        S("stderr", r"^/tmp/yarp-gen/blind/work/ant-javac-build-failed/build\.xml:\d+: Compile failed", "the target that failed"),
    ], env={"ANT_OPTS": "-Duser.home=/tmp/yarp-gen/blind/home"}, expect_exit=exits(1))


@recipe("rspec-documentation-failures", "rspec", "test-runner", ["rspec", "--version"], needs=("rspec",))
def _rspec(root):
    """Write the `rspec-documentation-failures` project under `root`; return its command and signals."""
    write(root, "lib/temperature.rb", """
        module Temperature
          def self.to_f(c) = c * 9.0 / 5 + 32
          def self.to_c(f) = ((f - 32) * 5 / 9).round(1)
        end
        """)
    groups = "".join(f"""
        describe "batch {g}" do
        {''.join(f'''  it "converts {c} degrees" do
            expect(Temperature.to_f({c})).to eq({c} * 9.0 / 5 + 32)
          end
        ''' for c in range(30))}end
        """ for g in range(14))
    write(root, "spec/temperature_spec.rb", f"""
        require_relative "../lib/temperature"

        RSpec.describe Temperature do
        {groups}
          it "rounds fahrenheit back to celsius" do
            expect(Temperature.to_c(100)).to eq(37.8)
          end
          it "handles absolute zero" do
            expect(Temperature.to_c(-459.67)).to eq(-273.15)
          end
        end
        """)
    return Run(["rspec", "--format", "documentation"], [
        S("stdout", r"^  (rounds fahrenheit back to celsius|handles absolute zero) \(FAILED - \d\)$", "the two failing examples"),
        S("stdout", r"^  \d\) Temperature (rounds fahrenheit|handles absolute zero)", "each failure's heading"),
        S("stdout", r"^       expected: (37\.8|-273\.15)$", "what was expected"),
        S("stdout", r"^     # \./spec/temperature_spec\.rb:\d+:in", "the spec's line"),
        S("stdout", r"^422 examples, 2 failures$", "the closing count"),
        S("stdout", r"^rspec \./spec/temperature_spec\.rb:\d+ # Temperature ", "the rerun commands"),
    ], expect_exit=exits(1))


@recipe("rubocop-offenses", "rubocop", "linter", ["rubocop", "--version"], needs=("rubocop",))
def _rubocop(root):
    """Write the `rubocop-offenses` project under `root`; return its command and signals."""
    write(root, ".rubocop.yml", "AllCops:\n  NewCops: disable\n  SuggestExtensions: false\n  TargetRubyVersion: 3.1\n")
    for i in range(22):
        write(root, f"app/models/model{i}.rb", f"class Model{i}\n  def initialize(name)\n    @name=name\n  end\n\n"
              f"  def label\n    return \"model-#{{@name}}\"\n  end\nend\n")
    write(root, "app/models/order.rb", "class Order\n  def total(lines)\n    lines.sum { |l| l.qty * l.price\n  end\nend\n")
    return Run(["rubocop", "app"], [
        S("stdout", r"^app/models/order\.rb:4:3: E: Lint/Syntax: unexpected token kEND", "the syntax error, the one finding that is not style"),
        S("stdout", r"^\d+ files inspected, \d+ offenses detected", "the closing count"),
    ], command=["rubocop", "--no-color", "app"], expect_exit=exits(1))


@recipe("perlcritic-severity-3", "perlcritic", "linter", ["perlcritic", "--version"], needs=("perlcritic",))
def _perlcritic(root):
    """Write the `perlcritic-severity-3` project under `root`; return its command and signals."""
    for i in range(6):
        write(root, f"lib/Report{i}.pm", f"package Report{i};\nsub new {{ my $class = shift; return bless {{}}, $class }}\n"
              f"sub rows {{\n    my @r = map {{ $_ * 2 }} (1..{i + 3});\n    return @r;\n}}\n1;\n")
    write(root, "bin/export.pl", "#!/usr/bin/perl\nopen(FH, \"out.txt\");\nprint FH `date`;\n"
          "my $n = eval \"1 + 2\";\nclose FH;\n")
    return Run(["perlcritic", "--severity", "3", "lib", "bin"], [
        S("stdout", r"^bin/export\.pl: (Bareword file handle opened|Two-argument \"open\" used|Expression form of \"eval\")",
          "the findings that are real risks in the one script"),
    ], command=["perlcritic", "--severity", "3", "--verbose", "%f: %m at line %l, column %c.  %e.  (Severity: %s)\\n",
                "lib", "bin"], expect_exit=exits(2))


@recipe("luacheck-warnings-syntax-error", "luacheck", "linter", ["luacheck", "--version"], needs=("luacheck",))
def _luacheck(root):
    """Write the `luacheck-warnings-syntax-error` project under `root`; return its command and signals."""
    for i in range(40):
        write(root, f"src/mod{i:02d}.lua", f"local M = {{}}\nlocal unused_{i} = {i}\nfunction M.run(x)\n"
              f"  total = x + {i}\n  return total\nend\nreturn M\n")
    write(root, "src/parser.lua", "local M = {}\nfunction M.parse(s)\n  if s == nil then\n    return nil\n"
          "  return s:upper()\nend\nreturn M\n")
    return Run(["luacheck", "src"], [
        S("stdout", r"^    src/parser\.lua:5:3: \(E011\) expected 'end' \(to close 'if' on line 3\)", "the syntax error among the warnings"),
        S("stdout", r"^Checking src/parser\.lua +1 error$", "the file that failed"),
        S("stdout", r"^Total: \d+ warnings / 1 error in 41 files$", "the closing count"),
    ], command=["luacheck", "--no-color", "--codes", "src"], expect_exit=exits(2))


@recipe("busted-one-failure", "busted", "test-runner", ["busted", "--version"], needs=("busted",))
def _busted(root):
    """Write the `busted-one-failure` project under `root`; return its command and signals."""
    write(root, "src/money.lua", "local M = {}\nfunction M.cents(x) return math.floor(x * 100) end\nreturn M\n")
    cases = "".join(f"  it('converts {n} units', function()\n    assert.are.equal({n * 100}, money.cents({n}))\n  end)\n"
                    for n in range(40))
    write(root, "spec/money_spec.lua", "package.path = 'src/?.lua;' .. package.path\nlocal money = require('money')\n\n"
          f"describe('money', function()\n{cases}"
          "  it('rounds 19.99 to cents', function()\n    assert.are.equal(1999, money.cents(19.99))\n  end)\nend)\n")
    return Run(["busted", "-o", "utfTerminal"], [
        S("stdout", r"^\d+ successes / 1 failure / 0 errors / 0 pending", "the closing count"),
        S("stdout", r"^Failure -> spec/money_spec\.lua @ \d+$", "where the failing test is"),
        S("stdout", r"^money rounds 19\.99 to cents$", "the failing test"),
        S("stdout", r"^spec/money_spec\.lua:\d+: Expected objects to be equal\.$", "its failure"),
    ], command=["busted", "--no-auto-insulate", "-o", "plainTerminal"], expect_exit=exits(1))


@recipe("php-uncaught-type-error", "php", "runtime", ["php", "--version"], needs=("php",))
def _php(root):
    """Write the `php-uncaught-type-error` project under `root`; return its command and signals."""
    write(root, "src/Cart.php", """
        <?php
        declare(strict_types=1);

        final class Cart
        {
            private array $lines = [];

            public function add(string $sku, int $qty): void
            {
                $this->lines[$sku] = ($this->lines[$sku] ?? 0) + $qty;
            }
        }
        """)
    write(root, "import.php", """
        <?php
        declare(strict_types=1);
        require __DIR__ . '/src/Cart.php';

        function import_rows(Cart $cart, array $rows): void
        {
            foreach ($rows as $row) {
                $cart->add($row[0], $row[1]);
            }
        }

        $cart = new Cart();
        import_rows($cart, [['A-1', 2], ['B-7', '3']]);
        echo "imported\\n";
        """)
    return Run(["php", "import.php"], [
        S("stdout", r"^PHP Fatal error:  Uncaught TypeError: Cart::add\(\): Argument #2 \(\$qty\) must be of type int|"
          r"^Fatal error: Uncaught TypeError: Cart::add\(\)", "the crash"),
        S("stdout", r"^Stack trace:$", "the start of the trace"),
        S("stdout", r"^#\d+ /tmp/yarp-gen/blind/work/php-uncaught-type-error/import\.php\(\d+\): ", "the project's frames"),
    ], command=["php", "-d", "display_errors=stdout", "-d", "log_errors=0", "-d", "html_errors=0", "import.php"],
        expect_exit=exits(255))
