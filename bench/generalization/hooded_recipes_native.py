"""Hooded recipes for compilers, build tools, test frameworks, checkers, profilers and crashes: shelltest,
vera++, LuaJIT, makepp, pdflatex, GNU Prolog, CHICKEN's csi, cg_annotate, GNU complexity, lcov, groff.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from hooded_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "makepp": "2.0.98.5-2.1", "texlive-latex-base": "2022.20230122-3", "luajit": "2.1.0~beta3+git20220320+dfsg-4.1+deb12u1",
    "gprolog": "1.4.5.0-3", "chicken-bin": "5.3.0-1", "valgrind": "1:3.19.0-1", "indent": "2.2.12-4+deb12u3",
    "complexity": "1.13-1+b1", "vera++": "1.2.1-2+b7", "shelltestrunner": "1.9-2+b2", "lcov": "1.16-1",
    "groff-base": "1.22.4-10",
}


# --- shelltest: a slug helper's 640 shell tests, one per line of its spec; one case fails ------------------

_SLUGIFY_SH = """\
#!/bin/sh
# slugify TEXT: lower case, runs of other characters become one dash, no dash at either end.
printf '%s\\n' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\\{1,\\}/-/g' -e 's/^-//' -e 's/-$//'
"""


def _slug_tests(group: int, broken: int | None) -> str:
    """One shelltest file of 80 cases; case `broken` expects an umlaut to be transliterated."""
    cases = []
    for n in range(80):
        words = f"Release Notes {group} Part {n}"
        want = f"release-notes-{group}-part-{n}"
        if n == broken:
            words, want = f"Über Release {group} Part {n}", f"uber-release-{group}-part-{n}"
        cases.append(f"# {group}.{n}: {words}\n./slugify.sh '{words}  '\n>>>\n{want}\n>>>= 0\n\n")
    return "".join(cases)


@recipe("shelltest-slugify-one-failure", "shelltest", "test-runner", ["shelltest", "--version"], needs=("shelltest",))
def _shelltest(root):
    """Write the `shelltest-slugify-one-failure` project under `root`; return its command and signals."""
    write(root, "slugify.sh", _SLUGIFY_SH, mode=0o755)
    for group in range(8):
        write(root, f"tests/slug_{group}.test", _slug_tests(group, 57 if group == 6 else None))
    return Run(["shelltest", "tests"], [
        S("stdout", r"^:tests/slug_6\.test:\d+: \[Failed\]$", "the failed case among 640"),
        S("stdout", r"^Got stdout:", "what it printed instead"),
        S("stdout", r"^ Failed\s+1\s+1\s*$", "the failure count"),
        S("stdout", r"^ Total\s+640\s+640\s*$", "the totals"),
    ], expect_exit=exits(1))


# --- vera++ -s -S: a C++ service's 180 sources full of layout findings; one header uses a reserved name -----

def _vera_source(n: int) -> str:
    """One source: long lines, trailing blanks and `if(` here and there, as the codebase has them."""
    lines = [f"#include \"module_{n:03d}.h\"\n", "\n", f"int Module{n}::compute(int value) const\n", "{\n"]
    for k in range(24):
        tail = "  " if (n + k) % 7 == 0 else ""
        cond = "if(" if (n * k) % 11 == 3 else "if ("
        lines.append(f"    {cond}value > {k}) {{ total_ += value * {k} + offset_{k % 4}; }}{tail}\n")
        if (n + k) % 13 == 0:
            lines.append(f"    // step {k}: accumulate the weighted value of this stage, keeping the offset of the stage's"
                         f" group so that later stages see the running total\n")
    return "".join(lines + ["    return total_;\n", "}\n"])


@recipe("vera-style-one-reserved-macro", "vera++", "linter", ["vera++", "--version"], needs=("vera++",))
def _vera(root):
    """Write the `vera-style-one-reserved-macro` project under `root`; return its command and signals."""
    for n in range(180):
        guard = "__MODULE_117_H" if n == 117 else f"MODULE_{n:03d}_H"
        write(root, f"src/module_{n:03d}.h", f"#ifndef {guard}\n#define {guard}\n\nclass Module{n} {{\npublic:\n"
              f"    int compute(int value) const;\nprivate:\n    int total_ = 0;\n    int offset_0 = 1, offset_1 = 2, "
              f"offset_2 = 3, offset_3 = 4;\n}};\n\n#endif\n")
        write(root, f"src/module_{n:03d}.cpp", _vera_source(n))
    return Run(["vera++", "-s", "-S"], [
        S("stdout", r"^src/module_117\.h:2: T002: reserved name used for macro", "the one finding of its kind: a macro name the compiler owns"),
        S("stderr", r"^\d+ reports in \d+ files\.$", "the totals"),
    ], command="vera++ -s -S src/*.h src/*.cpp", expect_exit=exits(0))


# --- luajit: an import script loads 3,000 CSV rows, printing progress, until row 2,614 has other separators

_IMPORT_LUA = """\
local parse = require("parse")

local total, count = 0, 0
for line in io.lines("orders.csv") do
  count = count + 1
  if count > 1 then
    local order = parse.order(line)
    total = total + order.amount
    print(string.format("imported order %s for %s: %.2f (running total %.2f)", order.id, order.customer, order.amount, total))
  end
end
print(string.format("imported %d orders, total %.2f", count - 1, total))
"""

_PARSE_LUA = """\
local M = {}

local function split(line)
  local fields = {}
  for field in string.gmatch(line, "([^,]*),?") do
    fields[#fields + 1] = field
  end
  return fields
end

local function customer_of(fields)
  local name = fields[3]:match("^%s*(.-)%s*$")
  return name:upper()
end

function M.order(line)
  local fields = split(line)
  return { id = fields[1], amount = tonumber(fields[2]), customer = customer_of(fields) }
end

return M
"""


@recipe("luajit-import-nil-field-traceback", "luajit", "crash", ["luajit", "-v"], needs=("luajit",))
def _luajit(root):
    """Write the `luajit-import-nil-field-traceback` project under `root`; return its command and signals."""
    rows = ["id,amount,customer\n"]
    for n in range(3000):
        rows.append(f"ORD-{n:05d};{(n * 37) % 900 + 10}.{n % 100:02d};customer {n % 211}\n" if n == 2613
                    else f"ORD-{n:05d},{(n * 37) % 900 + 10}.{n % 100:02d},customer {n % 211}\n")
    write(root, "orders.csv", "".join(rows))
    write(root, "parse.lua", _PARSE_LUA)
    write(root, "import.lua", _IMPORT_LUA)
    return Run(["luajit", "import.lua"], [
        S("stderr", r"^luajit: \./parse\.lua:\d+: attempt to index", "the error"),
        S("stderr", r"^stack traceback:$", "the start of the trace"),
        S("stderr", r"^\s+\./parse\.lua:\d+: in function", "the frames in the project's code"),
        S("stderr", r"^\s+import\.lua:\d+: in main chunk$", "the script's own frame"),
    ], expect_exit=exits(1))


# --- makepp -k: a 240-source image library built with warnings on; one source calls a removed function ----

def _makepp_source(n: int) -> str:
    """One filter of the library; filter 163 still calls the blur helper that was renamed."""
    call = "img_blur_box(img, 3)" if n == 163 else f"img_scale(img, {n % 7 + 1})"
    unused = "    int unused_tmp;\n" if n % 37 == 5 else ""
    return (f"#include \"img.h\"\n\nint filter_{n:03d}(struct image *img)\n{{\n{unused}"
            f"    if (!img->pixels)\n        return -1;\n    return {call};\n}}\n")


@recipe("makepp-keep-going-implicit-declaration", "makepp", "build", ["makepp", "--version"], needs=("makepp", "gcc"))
def _makepp(root):
    """Write the `makepp-keep-going-implicit-declaration` project under `root`; return its command and signals."""
    write(root, "src/img.h", "struct image { int width, height; unsigned char *pixels; };\n"
          "int img_scale(struct image *img, int factor);\nint img_blur(struct image *img, int radius);\n")
    for n in range(240):
        write(root, f"src/filter_{n:03d}.c", _makepp_source(n))
    write(root, "Makeppfile", "CFLAGS := -O1 -Wall -Wextra -Werror=implicit-function-declaration\n"
          "OBJS := $(patsubst src/%.c, build/%.o, $(only_targets $(wildcard src/*.c)))\n\n"
          "$(phony all): libfilters.a\n\nlibfilters.a: $(patsubst src/%.c, build/%.o, $(wildcard src/*.c))\n"
          "\tar rcs $(output) $(inputs)\n\nbuild/%.o: src/%.c\n\t&mkdir -p build\n\t$(CC) $(CFLAGS) -c -o $(output) $(input)\n")
    return Run(["makepp", "-k"], [
        S("stderr", r"^src/filter_163\.c:\d+:\d+: error: implicit declaration of function .img_blur_box.",
          "the error among 240 compiles"),
        S("stderr", r"^src/filter_163\.c: In function .filter_163.:$", "its heading"),
        S("stderr", r"^makepp: error: Failed to build target", "the target makepp could not build"),
        S("stdout", r"^makepp: \d+ files updated and 1 target failed$", "the totals"),
    ], expect_exit=exits(1))


# --- pdflatex: a 40-section technical report; one macro name is mistyped ----------------------------------

_TEX_SECTION = r"""
\section{Measurement campaign NUM}
\label{sec:campaignNUM}

The campaign NUM collected samples from the site over the period described in Section~\ref{sec:campaign0}.
Each sample was weighed, dried and weighed again; the difference gives the moisture content reported in
Table~\ref{tab:campaignNUM}. The long identifier of the instrument, CalibratedReferenceInstrumentSerialNumberNUM, is kept.

\begin{table}[ht]
\centering
\begin{tabular}{lrrr}
\hline
Sample & Wet (g) & Dry (g) & Moisture (\%) \\
\hline
ROWS\hline
\end{tabular}
\caption{Moisture of the samples of campaign NUM.}
\label{tab:campaignNUM}
\end{table}

\subsection{Remarks}
The results of campaign NUM agree with the previous campaigns within the uncertainty of the balance
(\SI{0.01}{\gram}). EMPH
"""


@recipe("pdflatex-report-undefined-control-sequence", "pdflatex", "build", ["pdflatex", "--version"], needs=("pdflatex",))
def _pdflatex(root):
    """Write the `pdflatex-report-undefined-control-sequence` project under `root`; return its command and signals."""
    sections = []
    for n in range(40):
        rows = "".join(f"S{n}-{k} & {100 + k * 3 + n}.{k % 10} & {80 + k * 2 + n}.{k % 7} & {17 + (k + n) % 9}.{n % 10} \\\\\n"
                       for k in range(12))
        emph = r"These values are \textbff{not} corrected for drift." if n == 29 else r"These values are \textbf{not} corrected for drift."
        sections.append(_TEX_SECTION.replace("NUM", str(n)).replace("ROWS", rows).replace("EMPH", emph)
                        .replace(r"(\SI{0.01}{\gram})", "(0.01 g)"))
    write(root, "report.tex", "\\documentclass[a4paper]{article}\n\\title{Soil moisture: forty campaigns}\n"
          "\\author{Field team}\n\\date{2026}\n\\begin{document}\n\\maketitle\n\\tableofcontents\n"
          + "".join(sections) + "\\end{document}\n")
    return Run(["pdflatex", "-interaction=nonstopmode", "-file-line-error", "report.tex"], [
        S("stdout", r"^\./report\.tex:\d+: Undefined control sequence\.$", "the error and its line"),
        S("stdout", r"^l\.\d+ .*\\textbff$", "the line as TeX read it, ending at the bad macro"),
        S("stdout", r"^Output written on report\.pdf", "the outcome"),
    ], expect_exit=exits(1))


# --- gprolog: a family-tree program consulted and run; a recursive clause names a misspelt predicate -------

@recipe("gprolog-uncaught-existence-error", "gprolog", "crash", ["gprolog", "--version"], needs=("gprolog",))
def _gprolog(root):
    """Write the `gprolog-uncaught-existence-error` project under `root`; return its command and signals."""
    people = ["tom", "bob", "ann", "liz", "pat", "jim", "sue", "max", "eve", "ian", "kim", "ray"]
    facts = "".join(f"parent({people[n]}, {people[n + 1 + n % 2]}).\n" for n in range(len(people) - 2))
    write(root, "family.pl", facts + "\nancestor(X, Y) :- parent(X, Y).\nancestor(X, Y) :- parent(X, Z), ancestr(Z, Y).\n\n"
          "descendants(X, N) :- findall(Y, ancestor(X, Y), L), length(L, N).\n\n"
          "main :- descendants(tom, N), write(descendants(tom, N)), nl.\n")
    return Run(["gprolog", "--consult-file", "family.pl", "--query-goal", "main"], [
        S("stdout", r"^uncaught exception: error\(existence_error\(procedure,ancestr/2\)", "the error and the undefined predicate"),
    ], expect_exit=exits(0))


# --- CHICKEN csi -s: an inventory script totals prices; one item has no price -----------------------------

_INVENTORY_SCM = """\
(import (chicken base) (chicken format))

(define (item-price item)
  (cadr (assq 'price item)))

(define (total items)
  (if (null? items)
      0
      (+ (item-price (car items)) (total (cdr items)))))

(define stock
  (list ITEMS))

(for-each (lambda (item) (printf "~a: ~a~%" (cadr (assq 'name item)) (assq 'price item))) stock)
(printf "total: ~a~%" (total stock))
"""


@recipe("csi-inventory-bad-argument-type", "csi", "crash", ["csi", "-release"], needs=("csi",))
def _csi(root):
    """Write the `csi-inventory-bad-argument-type` project under `root`; return its command and signals."""
    items = " ".join(f"'((name \"item-{n}\") (price {n % 13 + 2}))" if n != 17 else f"'((name \"item-{n}\"))"
                     for n in range(24))
    write(root, "inventory.scm", _INVENTORY_SCM.replace("ITEMS", items))
    return Run(["csi", "-s", "inventory.scm"], [
        S("stderr", r"^Error: \(cadr\) bad argument type: #f$", "the error"),
        S("stderr", r"^\s+Call history:$", "the start of the trace"),
        S("stderr", r"<--$", "the call that failed"),
    ], expect_exit=exits(70))


# --- cg_annotate: a checksum tool run under cachegrind, annotated with its source ------------------------

_CHECKSUM_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned table[256];

static void make_table(void)
{
    for (unsigned n = 0; n < 256; n++) {
        unsigned c = n;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
}

static unsigned crc_bytewise(const unsigned char *buf, size_t len)
{
    unsigned c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = table[(c ^ buf[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static unsigned crc_bitwise(const unsigned char *buf, size_t len)
{
    unsigned c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        c ^= buf[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        seed = seed * 1103515245u + 12345u;
        buf[i] = (unsigned char)(seed >> 16);
    }
}

int main(void)
{
    static unsigned char buf[1 << 16];
    unsigned acc = 0;
    make_table();
    for (unsigned block = 0; block < 48; block++) {
        fill(buf, sizeof buf, block);
        acc ^= block % 16 == 15 ? crc_bitwise(buf, sizeof buf) : crc_bytewise(buf, sizeof buf);
    }
    printf("%08x\\n", acc);
    return 0;
}
"""


@recipe("cg-annotate-checksum-hot-loop", "cg_annotate", "profiler", ["valgrind", "--version"],
        needs=("cg_annotate", "valgrind", "gcc"))
def _cg_annotate(root):
    """Write the `cg-annotate-checksum-hot-loop` project under `root`; return its command and signals."""
    write(root, "checksum.c", _CHECKSUM_C)
    sh("gcc -O0 -g -o checksum checksum.c", root)
    sh("valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=cachegrind.out ./checksum", root)
    return Run(["cg_annotate", "--auto=yes", "cachegrind.out"], [
        S("stdout", r"PROGRAM TOTALS", "the totals"),
        S("stdout", r"checksum\.c:crc_bytewise$", "the function that costs most, first in the function table"),
    ], expect_exit=exits(0))


# --- complexity: a protocol parser's 300 functions scored against a horrid threshold --------------------

def _cx_function(n: int) -> str:
    """One handler; most are small, a few nest deeper, handler 211 is the state machine nobody split."""
    depth = 12 if n == 211 else 4 if n % 50 == 7 else 1 + n % 3
    body, indent = [], "    "
    for d in range(depth):
        body.append(f"{indent}if (msg->field[{d}] > {n % 9 + d}) {{\n")
        indent += "    "
        if n == 211:
            body.append(f"{indent}switch (msg->kind) {{\n{indent}case {d}: msg->state = {d + 1}; break;\n"
                        f"{indent}case {d + 20}: while (msg->len-- > {d}) msg->sum += msg->field[{d}]; break;\n"
                        f"{indent}default: if (msg->flags & {1 << (d % 8)}) return -{d + 1};\n{indent}}}\n")
    body.append(f"{indent}return msg->field[0] + {n};\n")
    for d in range(depth):
        indent = indent[:-4]
        body.append(f"{indent}}}\n")
    return f"int handle_{n:03d}(struct message *msg)\n{{\n{''.join(body)}    return 0;\n}}\n\n"


@recipe("complexity-horrid-threshold-one-procedure", "complexity", "linter", ["complexity", "--version"],
        needs=("complexity",))
def _complexity(root):
    """Write the `complexity-horrid-threshold-one-procedure` project under `root`; return its command and signals."""
    header = "struct message { int kind, state, len, sum, flags; int field[16]; };\n\n"
    for part in range(6):
        write(root, f"src/handlers_{part}.c", header + "".join(_cx_function(n) for n in range(part * 50, part * 50 + 50)))
    return Run(["complexity", "--histogram", "--score", "--thresh=1", "--horrid-threshold=40"], [
        S("stdout", r"src/handlers_4\.c\(\d+\): handle_211$", "the one procedure over the horrid threshold"),
        S("stdout", r"^Highest score:", "the summary naming it"),
        S("stderr", r"^NOTE: proc handle_211 in file src/handlers_4\.c", "the note on its nesting"),
        S("stderr", r"seriously consider rewriting the procedure", "the advice that comes with it"),
    ], command="complexity --histogram --score --thresh=1 --horrid-threshold=40 src/*.c", expect_exit=exits(4))


# --- lcov --capture: coverage of a 320-module library's tests; one module was rebuilt after the run ---------

@recipe("lcov-capture-stamp-mismatch", "lcov", "coverage", ["lcov", "--version"], needs=("lcov", "gcc"))
def _lcov(root):
    """Write the `lcov-capture-stamp-mismatch` project under `root`; return its command and signals."""
    for n in range(320):
        write(root, f"src/mod_{n:03d}.c", f"int mod_{n:03d}(int a)\n{{\n    if (a > {n % 5})\n        return a * {n + 1};\n"
              f"    return -{n};\n}}\n")
    calls = "".join(f"    total += mod_{n:03d}({n % 7});\n" for n in range(320))
    write(root, "tests/run_all.c", "".join(f"int mod_{n:03d}(int a);\n" for n in range(320))
          + f"int main(void)\n{{\n    long total = 0;\n{calls}    return total == 0;\n}}\n")
    sh("mkdir -p build && for f in src/*.c tests/run_all.c; do gcc --coverage -O0 -c -o build/$(basename $f .c).o $f; done "
       "&& gcc --coverage -o build/run_all build/*.o && ./build/run_all", root)
    write(root, "src/mod_251.c", "int mod_251(int a)\n{\n    if (a > 1)\n        return a * 252;\n    if (a < 0)\n"
          "        return 0;\n    return -251;\n}\n")
    sh("gcc --coverage -O0 -c -o build/mod_251.o src/mod_251.c", root)
    return Run(["lcov", "--capture", "--directory", "build", "--output-file", "coverage.info"], [
        S("stderr", r"mod_251\.gcda:stamp mismatch with notes file$", "why gcov failed: the module rebuilt after the run"),
        S("stderr", r"^geninfo: ERROR: GCOV failed for .*build/mod_251\.gcda!$", "the error that stopped the capture"),
    ], expect_exit=exits(5))


# --- groff -ww: previewing a sync tool's 160-option manual page; two macros are mistyped -------------------

def _manual() -> str:
    """The manual: a synopsis, 160 options in 8 sections; option 77 uses `.Tp`, option 131 `.Ip`."""
    out = [".TH FILESYNC 1 2026-01-05 \"filesync 3.2\" \"User Commands\"\n.SH NAME\nfilesync \\- mirror directory trees\n"
           ".SH SYNOPSIS\n.B filesync\n[\\fIOPTION\\fR]... \\fISOURCE\\fR \\fIDEST\\fR\n.SH DESCRIPTION\n"
           "Mirror \\fISOURCE\\fR to \\fIDEST\\fR, copying what changed and removing what is gone.\n"]
    for n in range(160):
        if n % 20 == 0:
            out.append(f".SS \"Option group {n // 20 + 1}\"\n")
        macro = ".Tp" if n == 77 else ".Ip" if n == 131 else ".TP"
        out.append(f"{macro}\n.BR \\-\\-option\\-{n} \" \" \\fIVALUE\\fR\nSet the value of setting {n}. The default is {n * 3}; "
                   f"a value of zero turns setting {n} off, and a negative value is an error. See also\n"
                   f".BR \\-\\-option\\-{(n + 7) % 160} .\n")
    out.append(".SH EXIT STATUS\n0 when every file was mirrored, 1 on a usage error, 2 when a file could not be copied.\n"
               ".SH SEE ALSO\n.BR rsync (1)\n")
    return "".join(out)


@recipe("groff-man-preview-undefined-macros", "groff", "docs", ["groff", "--version"], needs=("groff",))
def _groff(root):
    """Write the `groff-man-preview-undefined-macros` project under `root`; return its command and signals."""
    write(root, "doc/filesync.1", _manual())
    return Run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", "doc/filesync.1"], [
        S("stderr", r"warning: macro '(Tp|Ip)' not defined", "the two mistyped macros, with their lines"),
    ], expect_exit=exits(0))
