"""Cowled recipes for compilers, test suites, crashes and profilers: autotest, PyPy, dtc, lacheck, protoc,
ECL, _FORTIFY_SOURCE, google-pprof, iasl, re2c, puppet-lint.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from cowled_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "pypy3": "7.3.11+dfsg-2+deb12u3", "ecl": "21.2.1+ds-4", "device-tree-compiler": "1.6.1-4+b1",
    "acpica-tools": "20200925-8", "lacheck": "1.26-17", "protobuf-compiler": "3.21.12-3+deb12u1", "re2c": "3.0-2",
    "google-perftools": "2.10-1", "libgoogle-perftools-dev": "2.10-1", "autoconf": "2.71-3", "puppet-lint": "3.0.1-1",
}


# --- autotest: a unit converter's generated testsuite of 840 checks; one unit alias is not known -----------

_CONV_SH = """\
#!/bin/sh
# conv VALUE FROM TO: convert a length between units.
factor() {
  case "$1" in
    mm) echo 0.001 ;; cm) echo 0.01 ;; m|meter) echo 1 ;; km) echo 1000 ;;
    in) echo 0.0254 ;; ft) echo 0.3048 ;; yd) echo 0.9144 ;; mi) echo 1609.344 ;;
    *) echo "conv: unknown unit: $1" >&2; exit 2 ;;
  esac
}
from=$(factor "$2") || exit 2
to=$(factor "$3") || exit 2
awk -v v="$1" -v f="$from" -v t="$to" 'BEGIN { printf "%.6g\\n", v * f / t }'
"""

_UNITS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "yd": 0.9144, "mi": 1609.344}


def _conv_tests() -> str:
    """The testsuite's source: a banner per source unit, 105 conversions under each; one uses `metre`."""
    out = ["m4_define([AT_PACKAGE_NAME], [conv])m4_define([AT_PACKAGE_TARNAME], [conv])\n"
           "m4_define([AT_PACKAGE_VERSION], [2.4])m4_define([AT_PACKAGE_STRING], [conv 2.4])\n"
           "m4_define([AT_PACKAGE_BUGREPORT], [conv-bugs@example.org])\n\nAT_INIT\n\n"]
    for src, sf in _UNITS.items():
        out.append(f"AT_BANNER([Conversions from {src}])\n\n")
        for n in range(105):
            dst = list(_UNITS)[n % 8]
            value = n * 3 + 1
            name = "metre" if (src, n) == ("ft", 66) else dst
            want = f"{value * sf / _UNITS[dst]:.6g}"
            out.append(f"AT_SETUP([{value} {src} to {name}])\nAT_KEYWORDS([{src} {dst}])\n"
                       f"AT_CHECK([sh $abs_top_srcdir/conv.sh {value} {src} {name}], [0], [{want}\n])\nAT_CLEANUP\n\n")
    return "".join(out)


@recipe("autotest-conv-suite-one-unknown-unit", "autotest", "test-runner", ["autom4te", "--version"], needs=("autom4te",))
def _autotest(root):
    """Write the `autotest-conv-suite-one-unknown-unit` project under `root`; return its command and signals."""
    write(root, "conv.sh", _CONV_SH, mode=0o755)
    write(root, "tests/testsuite.at", _conv_tests())
    write(root, "tests/atconfig", f"at_testdir='tests'\nabs_builddir='{root}/tests'\nat_srcdir='.'\n"
          f"abs_srcdir='{root}/tests'\nat_top_srcdir='..'\nabs_top_srcdir='{root}'\nat_top_build_prefix='../'\n"
          f"abs_top_builddir='{root}'\n")
    write(root, "config.log", "")
    sh(["autom4te", "--language=autotest", "-o", "testsuite", "testsuite.at"], os.path.join(root, "tests"))
    return Run(["./testsuite"], [
        S("stdout", r"FAILED \(testsuite\.at:\d+\)", "the one failed test among 840"),
        S("stderr", r"^ERROR: All 840 tests were run,$", "the totals"),
        S("stderr", r"^\d+ failed unexpectedly\.$", "the failure count"),
    ], cwd="tests", expect_exit=exits(1))


# --- pypy3: a user migration prints a line a user for 6,000 users; one row has no e-mail column ----------

_MIGRATE_PY = """\
import csv
import sys

from accounts import normalize


def main(path):
    shards = [0] * 8
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            user = normalize(row)
            shard = int(user["id"]) % 8
            shards[shard] += 1
            print(f"migrated user {user['id']:>5} {user['email']:<34} -> shard {shard} (plan {user['plan']})")
    print("done:", ", ".join(f"shard {n}: {count}" for n, count in enumerate(shards)))


if __name__ == "__main__":
    main(sys.argv[1])
"""

_ACCOUNTS_PY = """\
PLANS = {"free": "free", "pro": "pro", "team": "team", "ent": "enterprise"}


def domain_of(email):
    return email.rsplit("@", 1)[1].lower()


def normalize(row):
    email = row["email"].strip()
    return {
        "id": row["id"],
        "email": email.lower(),
        "domain": domain_of(email),
        "plan": PLANS[row["plan"]],
    }
"""


@recipe("pypy3-migration-row-without-email", "pypy3", "crash", ["pypy3", "--version"], needs=("pypy3",))
def _pypy3(root):
    """Write the `pypy3-migration-row-without-email` project under `root`; return its command and signals."""
    rows = ["id,email,plan\n"]
    plans = ("free", "pro", "team", "ent")
    for n in range(1, 6001):
        rows.append(f"{n},user{n}@example.org,{plans[n % 4]}\n" if n != 5213 else f"{n},{plans[n % 4]}\n")
    write(root, "users.csv", "".join(rows))
    write(root, "accounts.py", _ACCOUNTS_PY)
    write(root, "migrate.py", _MIGRATE_PY)
    return Run(["pypy3", "migrate.py", "users.csv"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the start of the trace"),
        S("stderr", r'^  File ".*/migrate\.py", line \d+, in main$', "the script's frame"),
        S("stderr", r'^  File .*accounts\.py", line \d+, in (normalize|domain_of)$', "the frames in the project's code"),
        S("stderr", r"^(AttributeError|IndexError|KeyError|TypeError)", "the exception"),
    ], expect_exit=exits(1))


# --- dtc: a carrier board's device tree of 3 I2C buses and 288 sensors; one LED names a GPIO bank the SoC lacks

def _board_dts() -> str:
    """The board's source: sensors written with unit addresses but, as the vendor tree has them, no `reg`."""
    out = ["/dts-v1/;\n\n/ {\n\tmodel = \"Acme Field Carrier rev C\";\n\tcompatible = \"acme,field-carrier\";\n"
           "\t#address-cells = <1>;\n\t#size-cells = <1>;\n\n"]
    for bank in range(4):
        out.append(f"\tgpio{bank}: gpio@4804{bank}000 {{\n\t\tcompatible = \"acme,gpio\";\n\t\treg = <0x4804{bank}000 0x1000>;\n"
                   f"\t\tgpio-controller;\n\t\t#gpio-cells = <2>;\n\t}};\n\n")
    for bus in range(3):
        out.append(f"\ti2c{bus}: i2c@4802{bus}000 {{\n\t\tcompatible = \"acme,i2c\";\n\t\treg = <0x4802{bus}000 0x1000>;\n"
                   f"\t\t#address-cells = <1>;\n\t\t#size-cells = <0>;\n\t\tclock-frequency = <400000>;\n\n")
        for n in range(96):
            addr = 0x08 + n
            out.append(f"\t\tsensor@{addr:x} {{\n\t\t\tcompatible = \"acme,temp-{'hi' if n % 3 else 'lo'}\";\n"
                       f"\t\t\tlabel = \"bus{bus}-probe{n}\";\n\t\t\tinterrupt-parent = <&gpio{n % 4}>;\n"
                       f"\t\t\tinterrupts = <{n % 32} 8>;\n\t\t}};\n")
        out.append("\t};\n\n")
    out.append("\tleds {\n\t\tcompatible = \"gpio-leds\";\n")
    for n in range(12):
        bank = 5 if n == 9 else n % 4
        out.append(f"\t\tled-{n} {{\n\t\t\tlabel = \"status:{n}\";\n\t\t\tgpios = <&gpio{bank} {n} 0>;\n\t\t}};\n")
    return "".join(out + ["\t};\n};\n"])


@recipe("dtc-board-sensor-warnings-missing-label", "dtc", "compiler", ["dtc", "--version"], needs=("dtc",))
def _dtc(root):
    """Write the `dtc-board-sensor-warnings-missing-label` project under `root`; return its command and signals."""
    write(root, "board.dts", _board_dts())
    return Run(["dtc", "-I", "dts", "-O", "dtb", "-o", "board.dtb", "board.dts"], [
        S("stderr", r"gpio5", "the error: a reference to a GPIO bank that does not exist"),
        S("stderr", r"^(FATAL )?ERROR: Input tree has errors", "why no blob was written"),
    ], expect_exit=exits(2))


# --- lacheck: a 24-chapter thesis with the usual spacing and quoting slips; one chapter never closes a list --

_CHAPTER = r"""\chapter{Results of series NUM}
\label{ch:seriesNUM}

The measurements of series NUM were taken at the north site , as in Chapter~\ref{ch:series0}. The probes were
calibrated before each run, e.g. against the reference cell, and the drift was below 0.1\,K.
We call this the "warm" configuration, following the earlier work \cite{smith2019} .

\section{Setup}
The setup follows Section~\ref{sec:method}. Each probe reports every 10\,s; the logger keeps the last value
i.e. it does not average. Figure \ref{fig:seriesNUM} shows the layout.

\begin{figure}[ht]
  \centering
  \fbox{Layout of series NUM}
  \caption{Probe layout for series NUM .}
  \label{fig:seriesNUM}
\end{figure}

\section{Observations}
\begin{itemize}
  \item The first probe read high during the morning , by about 0.2\,K.
  \item The second probe agreed with the reference within 0.05\,K.
  \item The third probe was replaced after run 3 ( see the log ).
END
After the replacement all probes agreed, so the series NUM is kept in full.
"""


@recipe("lacheck-thesis-warnings-unclosed-itemize", "lacheck", "linter", ["sh", "-c", "dpkg-query -W -f '${Version}' lacheck"],
        needs=("lacheck",))
def _lacheck(root):
    """Write the `lacheck-thesis-warnings-unclosed-itemize` project under `root`; return its command and signals."""
    inputs = []
    for n in range(24):
        end = "" if n == 17 else "\\end{itemize}"
        write(root, f"chapters/series{n:02d}.tex", _CHAPTER.replace("NUM", str(n)).replace("END", end))
        inputs.append(f"\\input{{chapters/series{n:02d}}}\n")
    write(root, "thesis.tex", "\\documentclass{report}\n\\begin{document}\n\\chapter{Method}\\label{sec:method}\n"
          + "".join(inputs) + "\\bibliographystyle{plain}\n\\end{document}\n")
    return Run(["lacheck", "thesis.tex"], [
        S("stdout", r"unmatched .*itemize", "the list chapter 17 never closes"),
    ], expect_exit=exits(0))


# --- protoc: a shop's 48 proto files; one message uses a type from a package it does not import ----------

_STEMS = {"orders": "order", "catalog": "product", "billing": "invoice"}


def _proto(domain: str, n: int) -> str:
    """One API file: a message and a service; `orders/v1/order_11.proto` uses `Money` without its import."""
    imports = "" if (domain, n) == ("orders", 11) else 'import "common/v1/money.proto";\n'
    return (f'syntax = "proto3";\n\npackage shop.{domain}.v1;\n\n{imports}\n'
            f"message {domain.title()}{n}Item {{\n  string id = 1;\n  common.v1.Money price = 2;\n"
            f"  int64 updated_at_unix = 3;\n  repeated string tags = 4;\n}}\n\n"
            f"message Get{domain.title()}{n}Request {{\n  string id = 1;\n}}\n\n"
            f"service {domain.title()}{n}Service {{\n  rpc Get(Get{domain.title()}{n}Request) returns ({domain.title()}{n}Item);\n}}\n")


@recipe("protoc-missing-import-money", "protoc", "compiler", ["protoc", "--version"], needs=("protoc",))
def _protoc(root):
    """Write the `protoc-missing-import-money` project under `root`; return its command and signals."""
    write(root, "proto/common/v1/money.proto", 'syntax = "proto3";\n\npackage shop.common.v1;\n\n'
          "message Money {\n  string currency = 1;\n  int64 units = 2;\n  int32 nanos = 3;\n}\n")
    for domain in ("orders", "catalog", "billing"):
        for n in range(16):
            write(root, f"proto/{domain}/v1/{_STEMS[domain]}_{n}.proto", _proto(domain, n))
    return Run(["protoc", "-Iproto", "--python_out=gen", "proto/**/*.proto"], [
        S("stderr", r"^orders/v1/order_11\.proto:\d+:\d+: ", "the error in the file without the import"),
    ], command="mkdir -p gen && protoc -Iproto --python_out=gen $(find proto -name '*.proto' | sort)", expect_exit=exits(1))


# --- ecl: a stock report loads its modules and prints 480 rows; one warehouse has no shelves yet ----------

_STOCK_LISP = """\
(in-package :cl-user)

(defun shelf-fill (shelves items)
  (/ items shelves))

(defun warehouse-row (name shelves items)
  (format t "~&~20a shelves ~4d items ~6d fill ~,2f~%" name shelves items (shelf-fill shelves items)))
"""

_REPORT_LISP = """\
(in-package :cl-user)

(defun report ()
  (loop for n from 0 below 480
        for shelves = (if (= n 417) 0 (+ 10 (mod (* n 7) 40)))
        do (warehouse-row (format nil "WH-~4,'0d" n) shelves (* 37 (+ n 11)))))
"""


@recipe("ecl-report-division-by-zero", "ecl", "crash", ["ecl", "--version"], needs=("ecl",))
def _ecl(root):
    """Write the `ecl-report-division-by-zero` project under `root`; return its command and signals."""
    write(root, "src/stock.lisp", _STOCK_LISP)
    write(root, "src/report.lisp", _REPORT_LISP)
    write(root, "run.lisp", '(load "src/stock.lisp" :verbose t)\n(load "src/report.lisp" :verbose t)\n(report)\n')
    return Run(["ecl", "--norc", "--load", "run.lisp", "--eval", "(quit)"], [
        S("stderr", r"^An error occurred during initialization:$", "the failure"),
        S("stderr", r"(?i)division.by.zero|DIVISION-BY-ZERO", "the condition"),
    ], expect_exit=exits(0, 1))


# --- _FORTIFY_SOURCE: a label printer prints 9,000 shipping labels; one consignee name overruns its field --

_LABELS_C = r"""
#include <stdio.h>
#include <string.h>

struct label {
    char consignee[32];
    char city[24];
    int parcels;
};

static void fill(struct label *out, const char *name, const char *city, int parcels)
{
    strcpy(out->consignee, name);
    strcpy(out->city, city);
    out->parcels = parcels;
}

int main(void)
{
    char name[128], city[64];
    int parcels, count = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (scanf(" %127[^;];%63[^;];%d", name, city, &parcels) == 3) {
        struct label label;
        fill(&label, name, city, parcels);
        printf("label %05d  %-32s %-24s parcels %3d\n", ++count, label.consignee, label.city, label.parcels);
    }
    printf("printed %d labels\n", count);
    return 0;
}
"""


@recipe("fortify-labels-buffer-overflow", "fortify-source", "crash", ["gcc", "--version"], needs=("gcc",))
def _fortify(root):
    """Write the `fortify-labels-buffer-overflow` project under `root`; return its command and signals."""
    write(root, "labels.c", _LABELS_C)
    cities = ("Lyon", "Porto", "Gdansk", "Utrecht", "Brno", "Aarhus", "Ghent", "Turku")
    rows = []
    for n in range(9000):
        name = f"Consignee {n:04d} GmbH" if n != 7402 else "Internationale Spedition Rheinland-Westfalen Logistik GmbH"
        rows.append(f"{name};{cities[n % 8]};{n % 17 + 1}\n")
    write(root, "shipments.txt", "".join(rows))
    sh("gcc -O2 -D_FORTIFY_SOURCE=2 -o labels labels.c", root)
    return Run(["./labels"], [
        S("stderr", r"buffer overflow detected", "the abort: a name longer than its field"),
        S("stderr", r" Aborted ", "the shell's report of the killed program"),
        S("stdout", r"^label 07402 ", "the last label printed before the overflow"),
    ], command="./labels < shipments.txt", expect_exit=exits(-6, 134))


# --- google-pprof: a CPU profile of an image tool's resize; most time is in one inner loop ----------------

_RESIZE_C = r"""
#include <stdio.h>
#include <stdlib.h>

static unsigned char *image;
static int width = 1600, height = 1200;

static double sample(int x, int y)
{
    return image[(y % height) * width + (x % width)];
}

static double kernel(double t)
{
    t = t < 0 ? -t : t;
    return t < 1 ? 1.5 * t * t * t - 2.5 * t * t + 1 : t < 2 ? -0.5 * t * t * t + 2.5 * t * t - 4 * t + 2 : 0;
}

static double bicubic(double fx, double fy)
{
    int x0 = (int)fx, y0 = (int)fy;
    double sum = 0;
    for (int j = -1; j <= 2; j++)
        for (int i = -1; i <= 2; i++)
            sum += sample(x0 + i, y0 + j) * kernel(fx - (x0 + i)) * kernel(fy - (y0 + j));
    return sum;
}

static unsigned long checksum(const unsigned char *out, int n)
{
    unsigned long sum = 0;
    for (int i = 0; i < n; i++)
        sum = sum * 31 + out[i];
    return sum;
}

int main(void)
{
    int ow = 1100, oh = 900;
    image = malloc((size_t)width * height);
    unsigned char *out = malloc((size_t)ow * oh);
    for (int i = 0; i < width * height; i++)
        image[i] = (unsigned char)(i * 7 + i / width);
    for (int pass = 0; pass < 4; pass++)
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++)
                out[y * ow + x] = (unsigned char)bicubic(x * (double)width / ow, y * (double)height / oh);
    printf("checksum %lu\n", checksum(out, ow * oh));
    return 0;
}
"""


@recipe("pprof-resize-cpu-profile", "google-pprof", "profiler", ["sh", "-c", "dpkg-query -W -f '${Version}' google-perftools"],
        needs=("google-pprof", "gcc"))
def _pprof(root):
    """Write the `pprof-resize-cpu-profile` project under `root`; return its command and signals."""
    write(root, "resize.c", _RESIZE_C)
    sh("gcc -O1 -g -fno-inline -o resize resize.c -Wl,--no-as-needed -lprofiler", root)
    sh("CPUPROFILE=resize.prof CPUPROFILE_FREQUENCY=500 ./resize", root)
    return Run(["google-pprof", "--text", "./resize", "resize.prof"], [
        S("stdout", r"^Total: \d+ samples$", "the profile's size"),
        S("stdout", r"^\s+\d+\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+% (bicubic|kernel|sample)\b", "the functions where the time goes"),
    ], expect_exit=exits(0))


# --- iasl: a board's SSDT of 72 thermal sensors, each keeping a scratch local; one method returns an unset one

def _sensor_asl(n: int) -> str:
    """One sensor device; its RDTM keeps the raw reading in Local1, as the vendor template does."""
    ret = "Local2" if n == 53 else "Local0"
    return (f"        Device (TS{n:02X})\n        {{\n            Name (_HID, \"ACME0{n % 10}01\")\n"
            f"            Name (_UID, {n})\n            Method (_STA, 0, NotSerialized)\n            {{\n"
            f"                Return (0x0F)\n            }}\n            Method (RDTM, 1, Serialized)\n            {{\n"
            f"                Local0 = (Arg0 * 10) + {n}\n                Local1 = Arg0\n                Return ({ret})\n"
            f"            }}\n        }}\n\n")


@recipe("iasl-ssdt-unused-locals-one-uninitialized", "iasl", "compiler", ["iasl", "-v"], needs=("iasl",))
def _iasl(root):
    """Write the `iasl-ssdt-unused-locals-one-uninitialized` project under `root`; return its command and signals."""
    write(root, "thermal.asl", "DefinitionBlock (\"\", \"SSDT\", 2, \"ACME\", \"THERMAL\", 0x00000001)\n{\n"
          "    External (\\_SB.PCI0, DeviceObj)\n    Scope (\\_SB.PCI0)\n    {\n"
          + "".join(_sensor_asl(n) for n in range(72)) + "    }\n}\n")
    return Run(["iasl", "thermal.asl"], [
        S("stderr", r"^Error\s+\d+ - ", "the error: a local returned before it is set"),
        S("stderr", r"^thermal\.asl\s+\d+:\s+Return \(Local2\)$", "the error's location heading"),
        S("stdout", r"^Compilation failed\. 1 Errors, \d+ Warnings", "the totals"),
        S("stdout", r"^No AML files were generated", "no table was built"),
    ], expect_exit=exits(255))


# --- re2c: a config-file lexer of named definitions; one rule uses a definition nobody wrote ---------------

_LEXER_RE = r"""
#include <stddef.h>

enum token { T_END, T_IDENT, T_NUMBER, T_STRING, T_EQUALS, T_SECTION, T_COMMENT, T_ERROR };

/*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:yyfill:enable = 0;

    digit   = [0-9];
    letter  = [a-zA-Z_];
    ident   = letter (letter | digit | "-")*;
    number  = "-"? digit+ ("." digit+)?;
    string  = "\"" ([^"\\\n] | "\\" [^\n])* "\"";
    blank   = [ \t]+;
*/

enum token next_token(const unsigned char **cursor)
{
    const unsigned char *YYCURSOR = *cursor, *YYMARKER;
    for (;;) {
        const unsigned char *start = YYCURSOR;
    /*!re2c
        "\x00"              { *cursor = YYCURSOR; return T_END; }
        blank               { continue; }
        "#" [^\n]*          { *cursor = YYCURSOR; return T_COMMENT; }
        "[" ident "]"       { *cursor = YYCURSOR; return T_SECTION; }
        ident               { *cursor = YYCURSOR; return T_IDENT; }
        number unit?        { *cursor = YYCURSOR; return T_NUMBER; }
        string              { *cursor = YYCURSOR; return T_STRING; }
        "="                 { *cursor = YYCURSOR; return T_EQUALS; }
        *                   { (void)start; *cursor = YYCURSOR; return T_ERROR; }
    */
    }
}
"""


@recipe("re2c-lexer-undefined-definition", "re2c", "compiler", ["re2c", "--version"], needs=("re2c",))
def _re2c(root):
    """Write the `re2c-lexer-undefined-definition` project under `root`; return its command and signals."""
    write(root, "src/lexer.re", _LEXER_RE)
    return Run(["re2c", "-W", "-o", "src/lexer.c", "src/lexer.re"], [
        S("stderr", r"^src/lexer\.re:\d+:\d+: error: ", "the error: a rule uses an undefined name"),
    ], expect_exit=exits(1))


# --- puppet-lint: a control repository's 140 profile classes in the usual style; two have layout errors ----

def _profile_pp(n: int) -> str:
    """One profile class: undocumented, double quotes everywhere; 57 indents with a tab, 112 ends a line in blanks."""
    indent = "\t" if n == 57 else "  "
    tail = "   " if n == 112 else ""
    return (f"class profile::service_{n:03d} (\n  String $version = \"1.{n}.0\",\n  Integer $port = {8000 + n},\n) {{\n"
            f"  package {{ \"service-{n:03d}\":\n    ensure => $version,\n  }}\n\n"
            f"  file {{ \"/etc/service-{n:03d}/config.yaml\":\n    ensure  => \"file\",\n    owner => \"root\",\n"
            f"    mode    => \"0644\",\n    content => template(\"profile/service_{n:03d}.yaml.erb\"),\n"
            f"{indent}  notify  => Service[\"service-{n:03d}\"],{tail}\n  }}\n\n"
            f"  service {{ \"service-{n:03d}\":\n    ensure => \"running\",\n    enable => true,\n  }}\n}}\n")


@recipe("puppet-lint-profiles-warnings-two-errors", "puppet-lint", "linter", ["puppet-lint", "--version"],
        needs=("puppet-lint",))
def _puppet_lint(root):
    """Write the `puppet-lint-profiles-warnings-two-errors` project under `root`; return its command and signals."""
    for n in range(140):
        write(root, f"site/profile/manifests/service_{n:03d}.pp", _profile_pp(n))
    return Run(["puppet-lint", "site/profile/manifests"], [
        S("stdout", r"ERROR", "the two layout errors among the style warnings"),
    ], expect_exit=exits(0, 1))
