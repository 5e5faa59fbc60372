"""Hidden recipes for compilers, build steps, archives and crashes: tcc, iverilog, doxygen, dot, flex,
m4, patch, quilt, a `bash -x` trace, a Lua error, sha256sum, unzip, comm, iconv, sort, a vvp simulation
stopped by `$fatal`, a program run by `tcc -run` crashing.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from hidden_common import Run, S, exits, recipe, sh, write


@recipe("tcc-compile-errors", "tcc", "compiler", ["tcc", "-v"], needs=("tcc",))
def _tcc(root):
    """Write the `tcc-compile-errors` project under `root`; return its command and signals."""
    write(root, "ledger.c", "#include <stdio.h>\n\nstruct entry { int cents; const char *memo; };\n\n"
          "int total(struct entry *e, int n) {\n    int sum = 0;\n    for (int i = 0; i < n; i++)\n"
          "        sum += e[i].amount;\n    return sum;\n}\n\nint main(void) {\n"
          "    struct entry rows[2] = {{100, \"a\"}, {250, \"b\"}};\n    printf(\"%d\\n\", total(rows, 2))\n"
          "    return 0;\n}\n")
    return Run(["tcc", "-Wall", "-o", "ledger", "ledger.c"], [
        S("stderr", r"^ledger\.c:8: error: field not found: amount$", "the error and its place"),
    ], expect_exit=exits(1))


@recipe("iverilog-syntax-errors", "iverilog", "compiler", ["iverilog", "-V"], needs=("iverilog",))
def _iverilog(root):
    """Write the `iverilog-syntax-errors` project under `root`; return its command and signals."""
    write(root, "counter.v", "module counter(input clk, input rst, output reg [7:0] q);\n"
          "  always @(posedge clk) begin\n    if (rst) q <= 0\n    else q <= q + 1;\n  end\nendmodule\n")
    write(root, "top.v", "module top;\n  reg clk = 0;\n  wire [7:0] value;\n"
          "  counter c(.clk(clk), .rst(reset), .q(value));\nendmodule\n")
    return Run(["iverilog", "-o", "sim", "top.v", "counter.v"], [
        S("stderr", r"^counter\.v:4: syntax error$", "the syntax error"),
        S("stderr", r"^counter\.v:4: Syntax in assignment statement l-value\.$", "what it means"),
    ], expect_exit=exits(1, 2))


def _doxy_header(n: int) -> str:
    """A header with undocumented members, the kind doxygen warns about one by one."""
    members = "".join(f"    int field_{k};\n    void method_{k}(int value);\n" for k in range(8))
    return f"/** @file\n * Module {n}. */\n\nclass Widget{n} {{\npublic:\n{members}}};\n"


@recipe("doxygen-undocumented-warnings", "doxygen", "docs", ["doxygen", "--version"], needs=("doxygen",))
def _doxygen(root):
    """Write the `doxygen-undocumented-warnings` project under `root`; return its command and signals."""
    for n in range(40):
        write(root, f"include/widget{n:02d}.h", _doxy_header(n))
    write(root, "include/registry.h", "/** @file\n * Registry. */\n\n/** Looks up a widget.\n"
          " * @param name the widget's name\n * @param missing not a parameter\n * @return the widget, see @ref NoSuchPage\n */\n"
          "int lookup(const char *name);\n")
    write(root, "Doxyfile", "PROJECT_NAME = Widgets\nINPUT = include\nOUTPUT_DIRECTORY = out\nGENERATE_LATEX = NO\n"
          "QUIET = YES\nWARN_IF_UNDOCUMENTED = YES\nHAVE_DOT = NO\n")
    return Run(["doxygen", "Doxyfile"], [
        S("stderr", r"registry\.h:\d+: warning: (argument 'missing'|unable to resolve reference to 'NoSuchPage')",
          "the two warnings of another kind among hundreds of undocumented members"),
    ], expect_exit=exits(0))


@recipe("dot-syntax-error", "dot", "build", ["dot", "-V"], needs=("dot",))
def _dot(root):
    """Write the `dot-syntax-error` project under `root`; return its command and signals."""
    write(root, "deps.dot", "digraph deps {\n  api -> db;\n  api -> cache\n  worker -> db [label=\"jobs\"];\n"
          "  worker -> -> queue;\n}\n")
    return Run(["dot", "-Tsvg", "-o", "deps.svg", "deps.dot"], [
        S("stderr", r"^Error: deps\.dot: syntax error in line 5 near '->'$", "the error and its line"),
    ], expect_exit=exits(1))


@recipe("flex-scanner-errors", "flex", "build", ["flex", "--version"], needs=("flex",))
def _flex(root):
    """Write the `flex-scanner-errors` project under `root`; return its command and signals."""
    write(root, "scan.l", "%option noyywrap\n%%\n[0-9]+      { return 1; }\n[a-z]+      { return 2; }\n"
          "\"if\"        { return 3; }\n[ \\t\\n]    ;\n{IDENT}     { return 4; }\n%%\n")
    return Run(["flex", "-o", "scan.c", "scan.l"], [
        S("stderr", r"^scan\.l:7: undefined definition \{IDENT\}$", "the error"),
    ], expect_exit=exits(1))


@recipe("m4-unterminated-string", "m4", "build", ["m4", "--version"], needs=("m4",))
def _m4(root):
    """Write the `m4-unterminated-string` project under `root`; return its command and signals."""
    body = "".join(f"define(`PORT_{n}', `{8000 + n}')dnl\n" for n in range(60))
    write(root, "config.m4", body + "server { listen PORT_7; }\ndefine(`BROKEN', `unfinished\n")
    return Run(["m4", "config.m4"], [
        S("stderr", r"^m4:config\.m4:\d+: ERROR: end of file in string$", "the error and its place"),
    ], expect_exit=exits(1))


@recipe("patch-hunk-failed", "patch", "vcs", ["patch", "--version"], needs=("patch",))
def _patch(root):
    """Write the `patch-hunk-failed` project under `root`; return its command and signals."""
    for n in range(700):
        write(root, f"src/mod{n}.py", "".join(f"def f{k}():\n    return {k}\n\n" for k in range(20)))
    diff = ""
    for n in range(700):
        old = "    return 3\n" if n != 404 else "    return 33\n"
        diff += (f"--- a/src/mod{n}.py\n+++ b/src/mod{n}.py\n@@ -7,3 +7,3 @@\n def f2():\n-    return 2\n+    return 20\n \n"
                 f"@@ -10,3 +10,3 @@\n def f3():\n-{old}+    return 30\n \n")
    write(root, "fix.diff", diff)
    return Run(["patch", "-p1", "-i", "fix.diff"], [
        S("stdout", r"^Hunk #2 FAILED at 10\.$", "the failed hunk"),
        S("stdout", r"^1 out of 2 hunks FAILED -- saving rejects to file src/mod404\.py\.rej$", "the failure summary"),
        S("stdout", r"^patching file src/mod404\.py$", "the file it belongs to"),
    ], expect_exit=exits(1))


@recipe("quilt-push-fails", "quilt", "vcs", ["quilt", "--version"], needs=("quilt",))
def _quilt(root):
    """Write the `quilt-push-fails` project under `root`; return its command and signals."""
    write(root, "app.conf", "port=80\nworkers=2\nlog=info\n")
    patches = {"01-port.patch": ("port=80", "port=8080"), "02-workers.patch": ("workers=2", "workers=8"),
               "03-log.patch": ("log=warn", "log=debug")}
    for name, (old, new) in patches.items():
        write(root, f"patches/{name}", "--- a/app.conf\n+++ b/app.conf\n@@ -1,3 +1,3 @@\n"
              + "".join(f"-{old}\n+{new}\n" if line.startswith(old.split("=")[0]) else f" {line}\n"
                        for line in ("port=80", "workers=2", "log=info")))
    extra = [f"02-{n:03d}-tune.patch" for n in range(200)]
    for n, name in enumerate(extra):
        write(root, f"files/f{n:03d}.conf", "value=1\n")
        write(root, f"patches/{name}", f"--- a/files/f{n:03d}.conf\n+++ b/files/f{n:03d}.conf\n@@ -1 +1 @@\n"
              "-value=1\n+value=2\n")
    write(root, "patches/series", "\n".join(["01-port.patch", "02-workers.patch", *extra, "03-log.patch"]) + "\n")
    return Run(["quilt", "push", "-a"], [
        S("stdout", r"^Hunk #1 FAILED at 1\.$", "the failed hunk"),
        S("stdout", r"^Patch patches/03-log\.patch does not apply \(enforce with -f\)$", "the verdict"),
    ], env={"QUILT_PATCHES": "patches"}, expect_exit=exits(1))


def _build_script() -> str:
    """A long shell build without `set -e` that traces every step; one copy deep inside fails and the
    build goes on."""
    steps = "".join(f"mkdir -p out/pkg{n:03d}\ncp src/pkg{n:03d}/*.txt out/pkg{n:03d}/\n"
                    f"sha1sum out/pkg{n:03d}/*.txt > out/pkg{n:03d}/SUMS\n" for n in range(1500))
    return "set -u\necho building\n" + steps + "echo done\n"


@recipe("bash-xtrace-deep-failure", "bash", "build", ["bash", "--version"], needs=("bash",))
def _bash_xtrace(root):
    """Write the `bash-xtrace-deep-failure` project under `root`; return its command and signals."""
    for n in range(1500):
        if n != 613:
            write(root, f"src/pkg{n:03d}/data.txt", f"package {n}\n")
    os.makedirs(os.path.join(root, "src/pkg613"))
    write(root, "build.sh", _build_script())
    return Run(["bash", "-x", "build.sh"], [
        S("stderr", r"^cp: cannot stat 'src/pkg613/\*\.txt': No such file or directory$", "the one failing step"),
        S("stderr", r"^\+ cp 'src/pkg613/\*\.txt' out/pkg613/$", "the command that failed"),
    ], expect_exit=exits(0))


@recipe("lua-runtime-error-traceback", "lua", "crash", ["lua", "-v"], needs=("lua",))
def _lua(root):
    """Write the `lua-runtime-error-traceback` project under `root`; return its command and signals."""
    write(root, "inventory.lua", "local M = {}\n\nfunction M.weight(item)\n  return item.mass * item.count\nend\n\n"
          "function M.total(items)\n  local sum = 0\n  for _, item in ipairs(items) do\n"
          "    sum = sum + M.weight(item)\n  end\n  return sum\nend\n\nreturn M\n")
    write(root, "main.lua", "local inv = require('inventory')\nlocal items = {\n  {mass = 2, count = 3},\n"
          "  {mass = 1, count = 10},\n  {count = 4},\n}\nprint('total', inv.total(items))\n")
    return Run(["lua", "main.lua"], [
        S("stderr", r"^lua: \./inventory\.lua:4: attempt to perform arithmetic on field 'mass' \(a nil value\)$", "the error"),
        S("stderr", r"^\s+\./inventory\.lua:4: in function 'weight'$", "the frame that failed"),
        S("stderr", r"^stack traceback:$", "the trace's start"),
        S("stderr", r"^\s+main\.lua:7: in main chunk$", "the caller's frame"),
    ], expect_exit=exits(1))


@recipe("sha256sum-check-one-failed", "sha256sum", "data", ["sha256sum", "--version"], needs=("sha256sum",))
def _sha256sum(root):
    """Write the `sha256sum-check-one-failed` project under `root`; return its command and signals."""
    for n in range(4000):
        write(root, f"mirror/pool/file{n:04d}.dat", f"payload {n}\n")
    sh("sha256sum mirror/pool/*.dat > SHA256SUMS", root)
    write(root, "mirror/pool/file2917.dat", "payload 2917 (truncated)\n")
    os.remove(os.path.join(root, "mirror/pool/file3502.dat"))
    return Run(["sha256sum", "-c", "SHA256SUMS"], [
        S("stdout", r"^mirror/pool/file2917\.dat: FAILED$", "the one mismatch among 4,000"),
        S("stdout", r"^mirror/pool/file3502\.dat: FAILED open or read$", "the one missing file"),
        S("stderr", r"^sha256sum: mirror/pool/file3502\.dat: No such file or directory$", "the error"),
        S("stderr", r"WARNING: 1 listed file could not be read$", "the unreadable count"),
        S("stderr", r"WARNING: 1 computed checksum did NOT match$", "the mismatch count"),
    ], expect_exit=exits(1))


@recipe("unzip-test-bad-crc", "unzip", "data", ["unzip", "-v"], needs=("unzip", "zip"))
def _unzip(root):
    """Write the `unzip-test-bad-crc` project under `root`; return its command and signals."""
    for n in range(3000):
        write(root, f"site/assets/img{n:04d}.txt", f"asset {n} " * 4 + "\n")
    sh(["zip", "-q", "-0", "-r", "site.zip", "site"], root)
    data = bytearray(open(os.path.join(root, "site.zip"), "rb").read())
    at = data.find(b"asset 2044 ")
    data[at] = ord("A")
    open(os.path.join(root, "site.zip"), "wb").write(bytes(data))
    return Run(["unzip", "-t", "site.zip"], [
        S("stdout", r"site/assets/img2044\.txt +bad CRC", "the one corrupt entry among 3,000"),
        S("stdout", r"^At least one error was detected in site\.zip\.$", "the verdict"),
    ], expect_exit=exits(2))


@recipe("comm-unsorted-package-lists", "comm", "data", ["comm", "--version"], needs=("comm",))
def _comm(root):
    """Write the `comm-unsorted-package-lists` project under `root`; return its command and signals."""
    before = [f"lib{n:04d}-dev 1.{n % 7}.0" for n in range(3000)]
    after = [line.replace(".0", ".1") if n % 6 == 0 else line for n, line in enumerate(before)]
    after[2400], after[2401] = after[2401], after[2400]
    write(root, "before.txt", "\n".join(before) + "\n")
    write(root, "after.txt", "\n".join(after) + "\n")
    return Run(["comm", "-3", "before.txt", "after.txt"], [
        S("stderr", r"^comm: file 2 is not in sorted order$", "the error"),
        S("stderr", r"^comm: input is not in sorted order$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("iconv-invalid-sequence", "iconv", "data", ["iconv", "--version"], needs=("iconv",))
def _iconv(root):
    """Write the `iconv-invalid-sequence` project under `root`; return its command and signals."""
    rows = "".join(f"{n},Customer {n},Berlin\n" for n in range(3000))
    with open(os.path.join(root, "customers.csv"), "wb") as handle:
        handle.write(rows.encode() + b"3000,M\xfcller GmbH,K\xf6ln\n" + b"3001,Customer 3001,Bonn\n")
    return Run(["iconv", "-f", "UTF-8", "-t", "ASCII//TRANSLIT", "customers.csv"], [
        S("stderr", r"^iconv: illegal input sequence at position \d+$", "the error"),
    ], expect_exit=exits(1))


@recipe("sort-check-disorder", "sort", "data", ["sort", "--version"], needs=("sort",))
def _sort(root):
    """Write the `sort-check-disorder` project under `root`; return its command and signals."""
    names = [f"user{n:05d}" for n in range(5000)]
    names[3211], names[3212] = names[3212], names[3211]
    write(root, "users.txt", "\n".join(names) + "\n")
    return Run(["sort", "-c", "users.txt"], [
        S("stderr", r"^sort: users\.txt:3213: disorder: user03211$", "the first line out of order"),
    ], expect_exit=exits(1))


@recipe("vvp-simulation-fatal", "vvp", "crash", ["vvp", "-V"], needs=("iverilog", "vvp"))
def _vvp(root):
    """Write the `vvp-simulation-fatal` project under `root`; return its command and signals."""
    write(root, "fifo_tb.v", "module fifo_tb;\n  integer i;\n  reg [7:0] depth;\n  initial begin\n"
          "    depth = 0;\n    for (i = 0; i < 3000; i = i + 1) begin\n"
          "      if (i % 3 != 2) depth = depth + 1; else depth = depth - 1;\n"
          "      $display(\"t=%0d push/pop ok depth=%0d\", i, depth);\n"
          "      if (depth > 250) $fatal(1, \"FIFO overflow at t=%0d: depth %0d exceeds 250\", i, depth);\n"
          "    end\n    $display(\"PASS\");\n    $finish;\n  end\nendmodule\n")
    sh(["iverilog", "-g2012", "-o", "sim", "fifo_tb.v"], root)
    return Run(["vvp", "-n", "sim"], [
        S("stdout", r"^FATAL: fifo_tb\.v:\d+: FIFO overflow at t=\d+: depth 251 exceeds 250$", "the fatal error"),
        S("stdout", r"^\s+Time: 0 Scope: fifo_tb$", "where it stopped"),
    ], expect_exit=exits(1))


@recipe("tcc-run-segfault", "tcc", "crash", ["tcc", "-v"], needs=("tcc",))
def _tcc_run(root):
    """Write the `tcc-run-segfault` project under `root`; return its command and signals."""
    write(root, "parse.c", "#include <stdio.h>\n#include <string.h>\n\nstruct rec { char name[16]; int qty; };\n\n"
          "static struct rec *find(struct rec *rows, int n, const char *name) {\n"
          "    for (int i = 0; i < n; i++) if (!strcmp(rows[i].name, name)) return &rows[i];\n    return NULL;\n}\n\n"
          "int main(void) {\n    struct rec rows[3] = {{\"bolt\", 4}, {\"nut\", 9}, {\"gear\", 1}};\n"
          "    for (int i = 0; i < 3; i++) printf(\"%s: %d\\n\", rows[i].name, rows[i].qty);\n"
          "    printf(\"washer: %d\\n\", find(rows, 3, \"washer\")->qty);\n    return 0;\n}\n")
    return Run(["tcc", "-run", "parse.c"], [
        S("stderr", r"Segmentation fault", "the crash"),
    ], command="tcc -run parse.c; exit $?", expect_exit=exits(139))
