"""Draped recipes for compilers, build tools, test frameworks, checkers, profilers and crashes: Checkstyle,
PHP_CodeSniffer, rpmbuild, rebar3 EUnit, abidiff, include-what-you-use, uftrace, Chez Scheme, mtrace, Clang's
CFI sanitizer, llvm-cov.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from draped_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "checkstyle": "8.36.1-1", "php-codesniffer": "3.7.1-2", "rpm": "4.18.0+dfsg-1+deb12u1", "abigail-tools": "2.2-2",
    "rebar3": "3.19.0-1", "iwyu": "8.18-2", "uftrace": "0.13-1", "chezscheme": "9.5.8+dfsg-1",
    "libc-devtools": "2.36-9+deb12u14", "llvm": "1:14.0-55.7~deb12u1",
}


# --- checkstyle: an inventory service's 300 classes under a house config; two findings are errors ------------

_CHECKSTYLE_XML = """\
<?xml version="1.0"?>
<!DOCTYPE module PUBLIC "-//Checkstyle//DTD Checkstyle Configuration 1.3//EN"
    "https://checkstyle.org/dtds/configuration_1_3.dtd">
<module name="Checker">
  <property name="severity" value="warning"/>
  <module name="LineLength"><property name="max" value="100"/></module>
  <module name="TreeWalker">
    <module name="MagicNumber"/>
    <module name="FinalParameters"/>
    <module name="HiddenField"/>
    <module name="NeedBraces"/>
    <module name="MissingJavadocMethod"/>
    <module name="EqualsHashCode"><property name="severity" value="error"/></module>
    <module name="EmptyCatchBlock"><property name="severity" value="error"/></module>
  </module>
</module>
"""


def _java_class(n: int) -> str:
    """One stock handler; handler 88 overrides equals alone, handler 231 swallows a parse failure."""
    extra = ""
    if n == 88:
        extra = ("    @Override\n    public boolean equals(Object other) {\n"
                 "        return other instanceof StockHandler088 && ((StockHandler088) other).quantity == quantity;\n    }\n")
    if n == 231:
        extra = ("    public int parse(String text) {\n        try {\n            return Integer.parseInt(text);\n"
                 "        } catch (NumberFormatException e) {\n        }\n        return 0;\n    }\n")
    body = []
    for k in range(6):
        body.append(f"    public int adjust{k}(int quantity) {{\n        if (quantity > {k * 25 + 40}) return quantity - {k + 7};\n"
                    f"        this.quantity = quantity * {k + 3} + warehouseOffset(\"zone-{k}\", quantity, {n % 9 + 2});"
                    f" // reserve stock for zone {k}\n        return this.quantity;\n    }}\n\n")
    return (f"package com.example.inventory.handlers;\n\n/** Stock handler {n}. */\npublic class StockHandler{n:03d} {{\n"
            f"    private int quantity;\n\n" + "".join(body) +
            "    private int warehouseOffset(String zone, int quantity, int factor) {\n"
            "        return zone.length() * factor + quantity % 13;\n    }\n" + extra + "}\n")


@recipe("checkstyle-inventory-two-errors", "checkstyle", "linter", ["checkstyle", "--version"], needs=("checkstyle",))
def _checkstyle(root):
    """Write the `checkstyle-inventory-two-errors` project under `root`; return its command and signals."""
    write(root, "config/checkstyle.xml", _CHECKSTYLE_XML)
    for n in range(300):
        write(root, f"src/main/java/com/example/inventory/handlers/StockHandler{n:03d}.java", _java_class(n))
    return Run(["checkstyle", "-c", "config/checkstyle.xml", "src/main/java"], [
        S("stdout", r"^\[ERROR\] ", "the two errors among thousands of warnings"),
        S("stderr", r"^Checkstyle ends with 2 errors\.$", "the count"),
    ], expect_exit=exits(2))


# --- phpcs: a billing app's 200 classes, long lines everywhere; one file writes TRUE in upper case --------------

def _php_class(n: int) -> str:
    """One invoice rule; its messages run long, and rule 147 still compares with an upper-case constant."""
    check = "if ($invoice->isPaid() == TRUE) {" if n == 147 else "if ($invoice->isPaid()) {"
    lines = [f"<?php\n\ndeclare(strict_types=1);\n\nnamespace Billing\\Rules;\n\nfinal class InvoiceRule{n:03d}\n{{\n"]
    for k in range(4):
        lines.append(f"    public function check{k}(Invoice $invoice): array\n    {{\n        $messages = [];\n"
                     f"        if ($invoice->total() > {k * 500 + n}) {{\n            $messages[] = sprintf('Invoice %s of customer %s "
                     f"exceeds the limit of rule {n} step {k} by %0.2f and needs a second approval', $invoice->number(), "
                     f"$invoice->customer(), $invoice->total() - {k * 500 + n});\n        }}\n")
        if k == 2:
            lines.append(f"        {check}\n            $messages[] = 'already paid';\n        }}\n")
        lines.append("        return $messages;\n    }\n\n")
    return "".join(lines).rstrip("\n") + "\n}\n"


@recipe("phpcs-billing-one-error-among-warnings", "phpcs", "linter", ["phpcs", "--version"], needs=("phpcs",))
def _phpcs(root):
    """Write the `phpcs-billing-one-error-among-warnings` project under `root`; return its command and signals."""
    for n in range(200):
        write(root, f"src/Rules/InvoiceRule{n:03d}.php", _php_class(n))
    return Run(["phpcs", "--standard=PSR12", "--report-width=100", "src"], [
        S("stdout", r"^FILE: .*/src/Rules/InvoiceRule147\.php$", "the heading of the file with the error"),
        S("stdout", r"\| ERROR\s+\|", "the one error among hundreds of line-length warnings"),
        S("stdout", r"^FOUND 1 ERROR AND", "that file's count"),
    ], expect_exit=exits(2))


# --- rpmbuild: packaging a metering daemon of 160 sources; one source uses a field the header renamed ------

_METERD_SPEC = """\
Name:           meterd
Version:        2.4.1
Release:        1
Summary:        Metering daemon for the plant's sensor bus
License:        MIT

%description
Collects the sensor bus readings and forwards them to the historian.

%build
make CFLAGS="%{optflags} -Wall -Wextra -Iinclude"

%install
make install DESTDIR=%{buildroot} PREFIX=/usr

%files
/usr/sbin/meterd
"""

_METERD_MAKEFILE = """\
SOURCES := $(sort $(wildcard src/*.c))
OBJECTS := $(SOURCES:.c=.o)

meterd: $(OBJECTS)
\t$(CC) $(CFLAGS) -o $@ $(OBJECTS) -lm

%.o: %.c include/meter.h
\t$(CC) $(CFLAGS) -c -o $@ $<

install: meterd
\tinstall -D -m 0755 meterd $(DESTDIR)$(PREFIX)/sbin/meterd
"""


def _meterd_source(n: int) -> str:
    """One sensor driver; driver 117 still reads the reading's old field name."""
    field = "raw_value" if n == 117 else "value"
    return (f"#include \"meter.h\"\n\nstatic double scale_{n}(double v)\n{{\n    return v * {n % 17 + 1}.0 / 16.0;\n}}\n\n"
            f"double sensor_{n}_read(const struct reading *r)\n{{\n    if (r->channel != {n % 32})\n        return 0.0;\n"
            f"    return scale_{n}(r->{field});\n}}\n")


@recipe("rpmbuild-meterd-compile-error", "rpmbuild", "build", ["rpmbuild", "--version"], needs=("rpmbuild",))
def _rpmbuild(root):
    """Write the `rpmbuild-meterd-compile-error` project under `root`; return its command and signals."""
    write(root, "packaging/meterd.spec", _METERD_SPEC)
    write(root, "Makefile", _METERD_MAKEFILE)
    write(root, "include/meter.h", "struct reading {\n    int channel;\n    double value;\n};\n")
    for n in range(160):
        write(root, f"src/sensor_{n:03d}.c", _meterd_source(n))
    write(root, "src/main.c", "int main(void)\n{\n    return 0;\n}\n")
    return Run(["rpmbuild", "-bb", "--build-in-place", "--define", f"_topdir {root}/rpmbuild", "packaging/meterd.spec"], [
        S("stderr", r"^src/sensor_117\.c:\d+:\d+: error: ", "the compile error"),
        S("stderr", r"^make: \*\*\* \[Makefile:\d+: src/sensor_117\.o\] Error 1$", "make's failure"),
        S("stderr", r"^error: Bad exit status from .* \(%build\)$", "rpmbuild's failure"),
        S("stdout", r"^RPM build errors:$", "the start of rpmbuild's summary of errors"),
    ], expect_exit=exits(1))


# --- rebar3 eunit -v: a rate-limiter app's 600 EUnit tests, verbose; one bucket refill test fails -------------

def _erl_module(n: int) -> str:
    """One limiter policy: a token bucket with its own capacity."""
    return (f"-module(policy_{n:02d}).\n-export([take/2, refill/2]).\n\n"
            f"take(Tokens, N) when Tokens >= N -> {{ok, Tokens - N}};\ntake(Tokens, _N) -> {{limited, Tokens}}.\n\n"
            f"refill(Tokens, Elapsed) -> min({n + 10}, Tokens + Elapsed div {n % 4 + 1}).\n")


def _erl_tests(n: int) -> str:
    """Fifteen tests of one policy; policy 27's refill test expects the bucket to overflow its capacity."""
    tests = [f"-module(policy_{n:02d}_tests).\n-include_lib(\"eunit/include/eunit.hrl\").\n\n"]
    for k in range(14):
        tests.append(f"take_{k}_test() ->\n    ?assertEqual({{ok, {k}}}, policy_{n:02d}:take({k + 3}, 3)).\n\n")
    want = n + 14 if n == 27 else n + 10
    tests.append(f"refill_caps_at_capacity_test() ->\n    ?assertEqual({want}, policy_{n:02d}:refill({n + 8}, 40)).\n")
    return "".join(tests)


@recipe("rebar3-eunit-verbose-one-failure", "rebar3", "test-runner", ["rebar3", "version"], needs=("rebar3", "erl"))
def _rebar3(root):
    """Write the `rebar3-eunit-verbose-one-failure` project under `root`; return its command and signals."""
    write(root, "rebar.config", "{erl_opts, [debug_info]}.\n{deps, []}.\n")
    write(root, "src/ratelimit.app.src", "{application, ratelimit, [{description, \"Token bucket rate limiter\"},\n"
          " {vsn, \"1.3.0\"}, {registered, []}, {applications, [kernel, stdlib]}, {env, []}]}.\n")
    for n in range(40):
        write(root, f"src/policy_{n:02d}.erl", _erl_module(n))
        write(root, f"test/policy_{n:02d}_tests.erl", _erl_tests(n))
    return Run(["rebar3", "eunit", "-v"], [
        S("stdout", r"refill_caps_at_capacity_test\.\.\.\*failed\*$", "the failed test among 600"),
        S("stdout", r"^in function policy_27_tests:", "the frame in the project's own test"),
        S("stdout", r"^\*\*error:\{assertEqual", "the assertion that failed"),
        S("stdout", r"^\s+\{(expected|value),\d+\}", "what was expected and what came"),
        S("stdout", r"^\s+Failed: 1\.\s+Skipped: 0\.\s+Passed: 599\.$", "the counts"),
        S("stdout", r"^===> Error running tests$", "rebar3's verdict"),
    ], expect_exit=exits(1))


# --- abidiff: a geometry library's next release against the last one; a struct grew and a function went ------

def _geo_library(version: int) -> str:
    """The library's source at a release: 120 functions; release 2 adds a field and drops a function."""
    extra = "    double m;\n" if version == 2 else ""
    parts = [f"struct geo_point {{\n    double x;\n    double y;\n{extra}}};\n\n"]
    for n in range(120):
        if version == 2 and n == 73:
            continue
        parts.append(f"double geo_measure_{n:03d}(const struct geo_point *a, const struct geo_point *b)\n{{\n"
                     f"    return (a->x - b->x) * {n + 1} + (a->y - b->y) / {n % 7 + 1};\n}}\n\n")
    return "".join(parts)


@recipe("abidiff-geo-struct-grew-function-removed", "abidiff", "checker", ["abidiff", "--version"], needs=("abidiff", "gcc"))
def _abidiff(root):
    """Write the `abidiff-geo-struct-grew-function-removed` project under `root`; return its command and signals."""
    for version in (1, 2):
        write(root, f"v{version}/geo.c", _geo_library(version))
        sh(["gcc", "-g", "-O0", "-shared", "-fPIC", "-Wl,-soname,libgeo.so.1", "-o", f"v{version}/libgeo.so.1",
            f"v{version}/geo.c"], root)
    return Run(["abidiff", "v1/libgeo.so.1", "v2/libgeo.so.1"], [
        S("stdout", r"^Functions changes summary: 1 Removed, 1 Changed", "the summary of function changes"),
        S("stdout", r"^\s+\[D\] 'function double geo_measure_073\(", "the removed function"),
        S("stdout", r"^\s+type size changed from 128 to 192 \(in bits\)$", "the struct that grew"),
    ], expect_exit=exits(12))


# --- iwyu_tool: include-what-you-use over a route planner's 140 sources; one does not compile -------------------

def _route_source(n: int) -> str:
    """One planner stage: includes it does not use; stage 96 uses std::optional without its header."""
    if n == 96:
        return ("#include <vector>\n#include <string>\n\nstd::optional<int> stage_96_pick(const std::vector<int> &costs)\n"
                "{\n    if (costs.empty())\n        return std::nullopt;\n    return costs.front();\n}\n")
    return (f"#include <map>\n#include <string>\n#include <vector>\n#include <algorithm>\n#include <iostream>\n\n"
            f"int stage_{n}_cost(const std::vector<int> &legs)\n{{\n    int total = 0;\n"
            f"    for (int leg : legs)\n        total += leg * {n % 5 + 1};\n    return std::max(total, {n});\n}}\n")


@recipe("iwyu-route-planner-one-compile-error", "iwyu_tool", "static-analyzer", ["include-what-you-use", "--version"],
        needs=("iwyu_tool", "include-what-you-use"))
def _iwyu(root):
    """Write the `iwyu-route-planner-one-compile-error` project under `root`; return its command and signals."""
    import json

    commands = []
    for n in range(140):
        write(root, f"src/stage_{n:03d}.cc", _route_source(n))
        commands.append({"directory": root, "file": f"src/stage_{n:03d}.cc",
                         "command": f"c++ -std=c++17 -Wall -c src/stage_{n:03d}.cc -o build/stage_{n:03d}.o"})
    write(root, "compile_commands.json", json.dumps(commands, indent=1))
    return Run(["iwyu_tool", "-p", ".", "-j", "1"], [
        S("stdout", r"^src/stage_096\.cc:\d+:\d+: error: ", "the one source that does not compile, among 139 include suggestions"),
    ], expect_exit=exits(1))


# --- uftrace: tracing a packet relay over 3,000 packets; one packet fails its checksum and is dropped ------------

_RELAY_C = """\
#include <stdio.h>

struct packet { int id; int length; int sum; };

static int checksum(const struct packet *p) { return (p->id * 31 + p->length) % 251; }
static int parse(struct packet *p, int id) { p->id = id; p->length = 64 + id % 900; p->sum = checksum(p); return 0; }
static void log_error(const char *what, int id) { fprintf(stderr, "relay: %s on packet %d\\n", what, id); }
static void drop_packet(struct packet *p) { log_error("checksum mismatch", p->id); p->length = 0; }
static int forward(const struct packet *p) { return p->length > 0; }

static int relay(int id)
{
    struct packet p;
    parse(&p, id);
    if (id == 2217)
        p.sum ^= 1;
    if (checksum(&p) != p.sum) {
        drop_packet(&p);
        return 0;
    }
    return forward(&p);
}

int main(void)
{
    int sent = 0;
    for (int id = 0; id < 3000; id++)
        sent += relay(id);
    printf("relayed %d of 3000 packets\\n", sent);
    return 0;
}
"""


@recipe("uftrace-relay-one-dropped-packet", "uftrace", "profiler", ["uftrace", "--version"], needs=("uftrace", "gcc"))
def _uftrace(root):
    """Write the `uftrace-relay-one-dropped-packet` project under `root`; return its command and signals."""
    write(root, "relay.c", _RELAY_C)
    sh(["gcc", "-O0", "-g", "-pg", "-o", "relay", "relay.c"], root)
    return Run(["uftrace", "--no-pager", "./relay"], [
        S("stdout", r"^relayed 2999 of 3000 packets$", "the program's own count: one packet lost"),
        S("stdout", r"\|\s+(drop_packet|log_error)\(\) \{$", "the one call path into the error handling among 3,000 relays"),
        S("stderr", r"^relay: checksum mismatch on packet 2217$", "the program's error"),
    ], expect_exit=exits(0))


# --- chezscheme --script: a ledger replay prints 700 running balances, then entry 612 lacks its amount -------------

_LEDGER_SS = """\
(define (entry-account e) (car e))
(define (entry-amount e) (cadr e))

(define (read-entries port)
  (let loop ([acc '()])
    (let ([e (read port)])
      (if (eof-object? e) (reverse acc) (loop (cons e acc))))))

(define (replay entries)
  (let loop ([es entries] [n 1] [balance 0])
    (unless (null? es)
      (let ([b (+ balance (entry-amount (car es)))])
        (printf "entry ~a ~a: balance ~a~n" n (entry-account (car es)) b)
        (loop (cdr es) (+ n 1) b)))))

(replay (call-with-input-file "entries.dat" read-entries))
"""


@recipe("chezscheme-ledger-replay-not-a-pair", "chezscheme", "crash", ["chezscheme", "--version"], needs=("chezscheme",))
def _chezscheme(root):
    """Write the `chezscheme-ledger-replay-not-a-pair` project under `root`; return its command and signals."""
    entries = [f"(acct-{n % 37:02d})\n" if n == 611 else f"(acct-{n % 37:02d} {(n * 53) % 400 - 180})\n" for n in range(700)]
    write(root, "entries.dat", "".join(entries))
    write(root, "ledger.ss", _LEDGER_SS)
    return Run(["chezscheme", "--script", "ledger.ss"], [
        S("stderr", r"^Exception in cadr: incorrect list structure", "the exception"),
        S("stdout", r"^entry 611 ", "the last entry replayed before it"),
    ], expect_exit=exits(255))


# --- mtrace: a tokenizer's malloc trace over 400 documents; the error path leaks, one free is of an untraced block -

_TOKENIZE_C = """\
#include <mcheck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *copy_token(const char *text, int n)
{
    char *token = malloc(n + 1);
    memcpy(token, text, n);
    token[n] = 0;
    return token;
}

static int tokenize(int doc)
{
    char text[64];
    int length = snprintf(text, sizeof text, "document %d body words", doc);
    char *first = copy_token(text, 8);
    char *rest = copy_token(text + 9, length - 9);
    if (doc % 23 == 0) {
        fprintf(stderr, "tokenize: document %d has no title\\n", doc);
        free(first);
        return -1;
    }
    free(first);
    free(rest);
    return 0;
}

int main(void)
{
    int failed = 0;
    char *stopwords = strdup("a an the of");
    mtrace();
    for (int doc = 1; doc <= 400; doc++)
        failed += tokenize(doc) != 0;
    free(stopwords);
    muntrace();
    printf("tokenized 400 documents, %d without a title\\n", failed);
    return 0;
}
"""


@recipe("mtrace-tokenizer-leaks-untraced-free", "mtrace", "profiler", ["mtrace", "--version"], needs=("mtrace", "gcc"))
def _mtrace(root):
    """Write the `mtrace-tokenizer-leaks-untraced-free` project under `root`; return its command and signals."""
    write(root, "tokenize.c", _TOKENIZE_C)
    sh(["gcc", "-O0", "-g", "-o", "tokenize", "tokenize.c"], root)
    sh("MALLOC_TRACE=malloc.trace LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 ./tokenize", root)
    return Run(["mtrace", "./tokenize", "malloc.trace"], [
        S("stdout", r"Free \d+ was never alloc'd .*/tokenize\.c:\d+$", "the free of a block the trace never saw allocated"),
        S("stdout", r"^Memory not freed:$", "the start of the leaks"),
    ], expect_exit=exits(1))


# --- clang -fsanitize=cfi: an export pipeline logs 9,000 records; a legacy record's stage is cast to the wrong kind ---

_PIPELINE_CC = """\
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

struct Stage {
    virtual ~Stage() {}
    virtual std::string name() const = 0;
};

struct CsvExport : Stage {
    std::string name() const override { return "csv-export"; }
    virtual int write_row(int id) const { return id % 97; }
};

struct LegacyImport : Stage {
    std::string name() const override { return "legacy-import"; }
    virtual int read_row(int id) const { return id % 89; }
};

static int export_record(const Stage &stage, int id)
{
    const CsvExport &exporter = static_cast<const CsvExport &>(stage);
    return exporter.write_row(id);
}

int main()
{
    std::vector<std::unique_ptr<Stage>> stages;
    stages.emplace_back(new CsvExport);
    stages.emplace_back(new LegacyImport);
    long total = 0;
    for (int id = 1; id <= 9000; id++) {
        const Stage &stage = *stages[id == 8571 ? 1 : 0];
        std::fprintf(stderr, "export: record %d via %s\\n", id, stage.name().c_str());
        total += export_record(stage, id);
    }
    std::printf("exported 9000 records, checksum %ld\\n", total);
    return 0;
}
"""


@recipe("cfi-export-pipeline-bad-cast", "cfi", "sanitizer", ["clang++", "--version"], needs=("clang++",))
def _cfi(root):
    """Write the `cfi-export-pipeline-bad-cast` project under `root`; return its command and signals."""
    write(root, "pipeline.cc", _PIPELINE_CC)
    sh(["clang++", "-O1", "-g", "-flto", "-fvisibility=hidden", "-fsanitize=cfi", "-fno-sanitize-trap=cfi", "-o", "pipeline",
        "pipeline.cc"], root)
    return Run(["./pipeline"], [
        S("stderr", r"^export: record 8571 via legacy-import$", "the one record of the other kind, the last before the failure"),
        S("stderr", r"^pipeline\.cc:\d+:\d+: runtime error: control flow integrity check", "the failure and where"),
        S("stderr", r": note: vtable is of type 'LegacyImport'$", "what the object really was"),
        S("stderr", r"^SUMMARY: UndefinedBehaviorSanitizer: ", "the summary"),
    ], expect_exit=exits(1))


# --- llvm-cov report: a text library's 150 modules under its test program; one module is never exercised -------------

def _text_module(n: int) -> str:
    """One text transform with a branch the tests do not take; module 104 (hyphenation) has no test at all."""
    return (f"int text_{n:03d}_apply(const char *s, int width)\n{{\n    int count = 0;\n    if (width <= 0)\n        return -1;\n"
            f"    for (; *s; s++) {{\n        if (*s == ' ')\n            count += {n % 4 + 1};\n        else if (*s == '\\t')\n"
            f"            count += width;\n        else\n            count++;\n    }}\n    return count % width;\n}}\n")


@recipe("llvm-cov-report-one-module-untested", "llvm-cov", "coverage", ["llvm-cov", "--version"], needs=("llvm-cov", "clang"))
def _llvm_cov(root):
    """Write the `llvm-cov-report-one-module-untested` project under `root`; return its command and signals."""
    calls = []
    for n in range(150):
        write(root, f"src/text_{n:03d}.c", _text_module(n))
        if n != 104:
            calls.append(f"    int text_{n:03d}_apply(const char *, int);\n    failures += text_{n:03d}_apply(\"ab cd\", 8) < 0;\n")
    write(root, "tests/run_tests.c", "#include <stdio.h>\n\nint main(void)\n{\n    int failures = 0;\n" + "".join(calls) +
          "    printf(\"%d failures\\n\", failures);\n    return failures != 0;\n}\n")
    flags = ["-fprofile-instr-generate", "-fcoverage-mapping", "-O0"]
    sh("clang " + " ".join(flags) + " -o run_tests tests/run_tests.c src/*.c", root)
    sh("LLVM_PROFILE_FILE=tests.profraw ./run_tests && llvm-profdata merge -o tests.profdata tests.profraw", root)
    return Run(["llvm-cov", "report", "./run_tests", "-instr-profile=tests.profdata"], [
        S("stdout", r"^src/text_104\.c\s.*\s0\.00%", "the one module at 0 % among 150"),
        S("stdout", r"^TOTAL\s", "the totals"),
    ], expect_exit=exits(0))
