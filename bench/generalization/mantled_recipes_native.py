"""Mantled recipes for compilers, interpreters, build tools, test frameworks, checkers, profilers and crashes:
Erlang Common Test, Dialyzer, Octave, Frama-C's Eva, buttercup, Icon, DUMA, memusage, makeinfo, Spin,
glslangValidator.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from mantled_common import HOME, Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "erlang-common-test": "1:25.2.3+dfsg-1+deb12u4", "erlang-dialyzer": "1:25.2.3+dfsg-1+deb12u4",
    "octave": "7.3.0-2", "frama-c-base": "20220511-manganese-3+b4", "elpa-buttercup": "1.26-4",
    "icont": "9.4.3-7", "iconx": "9.4.3-7", "duma": "2.5.21-6", "libc-devtools": "2.36-9+deb12u14", "texinfo": "6.8-6+b1",
    "spin": "6.5.2+dfsg-1", "glslang-tools": "12.0.0-2",
}

# --- ct_run: an inventory service's six Common Test suites, 360 cases; one case's match fails -------------

def _ct_suite(n: int) -> str:
    """One suite of 60 cases checking the stock arithmetic; suite 4's case 37 expects the wrong reservation."""
    cases = [f"reserve_{k}" for k in range(60)]
    body = []
    for k, case in enumerate(cases):
        want = k * 3 + n if not (n == 4 and k == 37) else k * 3 + n + 1
        body.append(f"{case}(_Config) ->\n    Stock = stock:new({k * 5 + n}),\n    {{ok, S2}} = stock:reserve(Stock, {2 * k}),\n"
                    f"    {want} = stock:available(S2),\n    ok.\n\n")
    return (f"-module(stock_{n}_SUITE).\n-include_lib(\"common_test/include/ct.hrl\").\n-export([all/0]).\n"
            f"-export([{', '.join(c + '/1' for c in cases)}]).\n\nall() -> [{', '.join(cases)}].\n\n" + "".join(body))


_STOCK_ERL = """\
-module(stock).
-export([new/1, reserve/2, available/1]).

new(Quantity) -> #{quantity => Quantity, reserved => 0}.

reserve(#{quantity := Q, reserved := R} = Stock, N) when R + N =< Q + 1000 ->
    {ok, Stock#{reserved := R + N}};
reserve(_Stock, _N) ->
    {error, insufficient}.

available(#{quantity := Q, reserved := R}) -> Q - R.
"""


@recipe("ct-run-stock-suites-one-badmatch", "ct_run", "test-runner", ["erl", "-noshell", "-eval",
        "io:format(\"~s~n\", [erlang:system_info(otp_release)]), halt()."], needs=("ct_run", "erlc"))
def _ct_run(root):
    """Write the `ct-run-stock-suites-one-badmatch` project under `root`; return its command and signals."""
    write(root, "src/stock.erl", _STOCK_ERL)
    for n in range(6):
        write(root, f"test/stock_{n}_SUITE.erl", _ct_suite(n))
    sh(["mkdir", "-p", "ebin", "logs"], root)
    sh(["erlc", "-o", "ebin", "src/stock.erl"], root)
    return Run(["ct_run", "-noshell", "-dir", "test", "-logdir", "logs", "-pa", "ebin"], [
        S("stdout", r"^stock_4_SUITE:reserve_37 failed on line \d+$", "the failed case and its line"),
        S("stdout", r"^Reason: \{badmatch,115\}$", "why it failed"),
        S("stdout", r"\*\*\* FAILED test case 278 of 360 \*\*\*$", "the runner's failure notice"),
        S("stdout", r"TEST COMPLETE, 359 ok, 1 failed of 360 test cases$", "the totals"),
    ], expect_exit=exits(1))


# --- octave: a sensor-cleaning script prints a line per reading, then indexes past the calibration table --

_CLEAN_M = """\
function out = clean_reading(row, calib)
  % Apply the sensor's calibration: offset and gain are looked up by the sensor's id.
  sensor = row(2);
  offset = calib(sensor, 1);
  gain = calib(sensor, 2);
  out = (row(3) - offset) * gain;
end
"""

_RUN_M = """\
readings = dlmread('readings.csv', ',', 1, 0);
calib = dlmread('calibration.csv', ',', 1, 0);
total = 0;
for i = 1:rows(readings)
  value = clean_reading(readings(i, :), calib);
  total = total + value;
  printf('reading %5d sensor %2d raw %8.3f clean %9.4f running mean %9.4f\\n', readings(i, 1), readings(i, 2), readings(i, 3), value, total / i);
end
printf('cleaned %d readings, mean %.4f\\n', rows(readings), total / rows(readings));
"""


@recipe("octave-clean-readings-index-out-of-bound", "octave", "crash", ["octave-cli", "--version"], needs=("octave-cli",))
def _octave(root):
    """Write the `octave-clean-readings-index-out-of-bound` project under `root`; return its command and signals."""
    write(root, "calibration.csv", "sensor,offset,gain\n" + "".join(f"{0.1 * s:.2f},{1 + s / 100:.3f}\n" for s in range(1, 25)))
    rows = ["id,sensor,raw\n"]
    for n in range(1, 4801):
        sensor = 25 if n == 4633 else (n * 7) % 24 + 1
        rows.append(f"{n},{sensor},{(n * 37) % 1000 / 10 + 20:.3f}\n")
    write(root, "readings.csv", "".join(rows))
    write(root, "clean_reading.m", _CLEAN_M)
    write(root, "run_clean.m", _RUN_M)
    return Run(["octave-cli", "--no-window-system", "--quiet", "run_clean.m"], [
        S("stderr", r"^error: calib\(25,_\): out of bound 24", "the error: sensor 25 has no calibration row"),
        S("stderr", r"^error: called from$", "the start of the trace"),
        S("stderr", r"^\s+clean_reading at line 4 column \d+$", "the function where it failed"),
        S("stderr", r"^\s+run_clean at line 5 column \d+$", "the script's own frame"),
    ], expect_exit=exits(1))


# --- frama-c -eva: a packet-parsing library's 40 field decoders analysed with Eva; one loop writes past its buffer ------------

def _frama_source(n: int) -> str:
    """One field decoder; decoder 9's copy loop runs one byte too far."""
    bound = "i <= len" if n == 9 else "i < len"
    return (f"#include \"pkt.h\"\n\nint decode_field_{n}(const unsigned char *in, int len, unsigned char out[16])\n{{\n"
            f"    int sum = 0;\n    if (len > 16)\n        len = 16;\n    for (int i = 0; {bound}; i++) {{\n"
            f"        out[i] = (unsigned char)(in[i] ^ {n + 1});\n        sum += out[i];\n    }}\n    return sum % {n + 7};\n}}\n")


@recipe("frama-c-eva-decoder-out-of-bounds", "frama-c", "linter", ["frama-c", "-version"], needs=("frama-c", "gcc"))
def _frama_c(root):
    """Write the `frama-c-eva-decoder-out-of-bounds` project under `root`; return its command and signals."""
    protos = "".join(f"int decode_field_{n}(const unsigned char *in, int len, unsigned char out[16]);\n" for n in range(40))
    write(root, "src/pkt.h", "#ifndef PKT_H\n#define PKT_H\n" + protos + "#endif\n")
    for n in range(40):
        write(root, f"src/field_{n:02d}.c", _frama_source(n))
    calls = "".join(f"    total += decode_field_{n}(packet + {n}, {n + 4 if n != 9 else 16}, out);\n" for n in range(40))
    write(root, "src/main.c", "#include \"pkt.h\"\n\nunsigned char packet[96];\n\nint main(void)\n{\n"
          "    unsigned char out[16];\n    int total = 0;\n    for (int i = 0; i < 96; i++)\n        packet[i] = (unsigned char)(i * 7);\n"
          + calls + "    return total & 0xff;\n}\n")
    return Run(["frama-c", "-eva", "-cpp-extra-args=-Isrc", "src/*.c"], [
        S("stdout", r"^\[eva:alarm\] src/field_09\.c:9: Warning:", "the one alarm of its kind: its place"),
        S("stdout", r"^\s+out of bounds write\. assert \\valid\(out \+ i\);$", "the out-of-bounds write"),
        S("stdout", r"^\s+81 alarms generated by the analysis:$", "the alarm count"),
        S("stdout", r"^\s+1 invalid memory access$", "the summary's rare kind"),
    ], expect_exit=exits(0),
               command="frama-c -eva -cpp-extra-args=-Isrc src/*.c")


# --- buttercup: an Emacs date-parsing package's 4,200 table-driven specs; one spec fails ------------------

_DATES_EL = """\
;;; dates.el --- parse dates written in a few ways  -*- lexical-binding: t -*-

(defun dates-parse (text)
  "Parse TEXT written as YYYY-MM-DD, DD/MM/YYYY or YYYYMMDD into (YEAR MONTH DAY)."
  (cond
   ((string-match "\\\\`\\\\([0-9]\\\\{4\\\\}\\\\)-\\\\([0-9]\\\\{2\\\\}\\\\)-\\\\([0-9]\\\\{2\\\\}\\\\)\\\\'" text)
    (list (string-to-number (match-string 1 text)) (string-to-number (match-string 2 text))
          (string-to-number (match-string 3 text))))
   ((string-match "\\\\`\\\\([0-9]\\\\{2\\\\}\\\\)/\\\\([0-9]\\\\{2\\\\}\\\\)/\\\\([0-9]\\\\{4\\\\}\\\\)\\\\'" text)
    (list (string-to-number (match-string 3 text)) (string-to-number (match-string 2 text))
          (string-to-number (match-string 1 text))))
   ((string-match "\\\\`\\\\([0-9]\\\\{4\\\\}\\\\)\\\\([0-9]\\\\{2\\\\}\\\\)\\\\([0-9]\\\\{2\\\\}\\\\)\\\\'" text)
    (list (string-to-number (match-string 1 text)) (string-to-number (match-string 2 text))
          (string-to-number (match-string 3 text))))
   (t (error "Unparsable date: %s" text))))

(provide 'dates)
;;; dates.el ends here
"""


def _buttercup_specs(month: int) -> str:
    """One spec file: every day of 2020-2026 in month `month`, in three spellings each."""
    lines = [f";;; dates-{month:02d}-test.el --- specs  -*- lexical-binding: t -*-\n(require 'buttercup)\n(require 'dates)\n\n",
             f"(describe \"dates-parse in month {month:02d}\"\n"]
    for year in range(2020, 2026):
        for day in range(1, 20):
            want = f"({year} {month} {day})"
            lines.append(f"  (it \"reads {year}-{month:02d}-{day:02d}\" (expect (dates-parse \"{year}-{month:02d}-{day:02d}\")"
                         f" :to-equal '{want}))\n")
            lines.append(f"  (it \"reads {day:02d}/{month:02d}/{year}\" (expect (dates-parse \"{day:02d}/{month:02d}/{year}\")"
                         f" :to-equal '{want}))\n")
            lines.append(f"  (it \"reads {year}{month:02d}{day:02d}\" (expect (dates-parse \"{year}{month:02d}{day:02d}\")"
                         f" :to-equal '{want}))\n")
    if month == 7:
        lines.append("  (it \"reads 2023-7-15 without a leading zero\" (expect (dates-parse \"2023-7-15\") :to-equal '(2023 7 15)))\n")
    return "".join(lines) + ")\n"


@recipe("buttercup-dates-one-spec-fails", "buttercup", "test-runner", ["emacs", "--version"], needs=("buttercup", "emacs"))
def _buttercup(root):
    """Write the `buttercup-dates-one-spec-fails` project under `root`; return its command and signals."""
    write(root, "dates.el", _DATES_EL)
    for month in range(1, 13):
        write(root, f"tests/dates-{month:02d}-test.el", _buttercup_specs(month))
    return Run(["buttercup", "-L", "."], [
        S("stdout", r"^\s+reads 2023-7-15 without a leading zero.*FAILED", "the failed spec among 4,105"),
        S("stdout", r"^(\x1b\[\d+m)?dates-parse in month 07 reads 2023-7-15 without a leading zero", "its heading in the report"),
        S("stdout", r"^Traceback \(most recent call last\):$", "the start of the trace"),
        S("stdout", r"^\s+dates-parse\(\"2023-7-15\"\)$", "the project's own frame"),
        S("stdout", r"^error: \(error \"Unparsable date: 2023-7-15\"\)$", "the error"),
        S("stdout", r"^Ran 4105 specs, .*1 failed", "the totals"),
    ], expect_exit=exits(255))


# --- icont -s ... && ./report: an Icon report program totals invoices; one line has no amount field --------

_REPORT_ICN = """\
procedure main()
   total := 0
   count := 0
   f := open("invoices.txt") | stop("cannot open invoices.txt")
   while line := read(f) do {
      count +:= 1
      total +:= amount_of(line)
      write("invoice ", right(count, 5), " ", left(customer_of(line), 14), right(total, 12))
   }
   write("total of ", count, " invoices: ", total)
end

procedure field(line, n)
   local fields
   fields := []
   line ? while put(fields, tab(upto(';') | 0)) do if pos(0) then break else move(1)
   return fields[n]
end

procedure customer_of(line)
   return field(line, 2)
end

procedure amount_of(line)
   return field(line, 3) * 100 + field(line, 4)
end
"""


@recipe("icon-invoice-report-runtime-error", "icont", "crash", ["icont", "-V"], needs=("icont",))
def _icon(root):
    """Write the `icon-invoice-report-runtime-error` project under `root`; return its command and signals."""
    write(root, "report.icn", _REPORT_ICN)
    lines = []
    for n in range(1, 1201):
        amount = ";n/a;00" if n == 1077 else f";{(n * 31) % 500};{n % 100:02d}"
        lines.append(f"INV{n:05d};customer-{n % 97:03d}{amount}\n")
    write(root, "invoices.txt", "".join(lines))
    return Run(["icont", "-s", "report.icn", "-x"], [
        S("stderr", r"^Run-time error 102$", "the error"),
        S("stderr", r"^File report\.icn; Line 25$", "where"),
        S("stderr", r"^numeric expected$", "what it needed"),
        S("stderr", r"^offending value: \"n/a\"$", "the bad value"),
        S("stderr", r"^Traceback:$", "the start of the trace"),
        S("stderr", r"^amount_of\(\"INV01077", "the frame with the bad invoice"),
    ], expect_exit=exits(1))


# --- duma: a session cache's request log, one line per request on stderr; an evicted session is freed twice --

_SESSIONS_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session { int id; char user[24]; int hits; };

static struct session *slots[64];
static struct session *recent[8];
static int opened;

static struct session *open_session(int id)
{
    struct session *s = calloc(1, sizeof *s);
    s->id = id;
    snprintf(s->user, sizeof s->user, "user-%04d", id % 977);
    recent[opened++ % 8] = s;
    return s;
}

static void evict(int slot)
{
    free(slots[slot]);
    slots[slot] = NULL;
}

static void shutdown_cache(void)
{
    for (int k = 0; k < 64; k++)
        if (slots[k])
            evict(k);
    fprintf(stderr, "closed all sessions\n");
    for (int k = 0; k < 8; k++)
        free(recent[k]);
}

int main(void)
{
    for (int request = 1; request <= 5200; request++) {
        int slot = (request * 7) % 64;
        if (slots[slot] == NULL)
            slots[slot] = open_session(request);
        slots[slot]->hits++;
        fprintf(stderr, "request %5d slot %2d session %5d %-10s hits %3d\n", request, slot, slots[slot]->id,
                slots[slot]->user, slots[slot]->hits);
        if (request % 500 == 0)
            for (int k = 0; k < 64; k += 3)
                if (slots[k] && slots[k]->hits > 8)
                    evict(k);
    }
    fprintf(stderr, "served 5200 requests\n");
    shutdown_cache();
    return 0;
}
"""


@recipe("duma-session-cache-double-free", "duma", "sanitizer", ["dpkg-query", "-W", "-f=${Version}", "duma"],
        needs=("duma", "gcc"))
def _duma(root):
    """Write the `duma-session-cache-double-free` project under `root`; return its command and signals."""
    write(root, "sessions.c", _SESSIONS_C)
    sh(["gcc", "-g", "-O0", "-o", "sessions", "sessions.c"], root)
    return Run(["duma", "./sessions"], [
        S("stderr", r"^DUMA Aborting: free\([0-9a-f]+\): memory already freed\.$", "the double free"),
        S("stderr", r"^closed all sessions$", "the last step before it: the shutdown path"),
    ], expect_exit=exits(-4))


# --- memusage: a word-index builder run under glibc's memusage; it succeeds, the summary is the point -------

_INDEX_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry { char *word; int count; };

int main(void)
{
    size_t cap = 16, len = 0;
    struct entry *index = malloc(cap * sizeof *index);
    char word[32];
    for (int n = 0; n < 40000; n++) {
        snprintf(word, sizeof word, "w%05d", (n * 7919) % 12000);
        size_t k;
        for (k = 0; k < len && strcmp(index[k].word, word); k++)
            ;
        if (k == len) {
            if (len == cap)
                index = realloc(index, (cap *= 2) * sizeof *index);
            index[len].word = strdup(word);
            index[len++].count = 0;
        }
        index[k].count++;
    }
    printf("indexed %zu distinct words\n", len);
    for (size_t k = 0; k < len; k++)
        free(index[k].word);
    free(index);
    return 0;
}
"""


@recipe("memusage-word-index-summary", "memusage", "profiler", ["dpkg-query", "-W", "-f=${Version}", "libc-devtools"],
        needs=("memusage", "gcc"))
def _memusage(root):
    """Write the `memusage-word-index-summary` project under `root`; return its command and signals."""
    write(root, "index.c", _INDEX_C)
    sh(["gcc", "-O1", "-o", "build_index", "index.c"], root)
    return Run(["memusage", "./build_index"], [
        S("stdout", r"^indexed 12000 distinct words$", "the program's result"),
        S("stderr", r"Memory usage summary:.*heap total: \d+, heap peak: \d+, stack peak: \d+", "the summary"),
    ], expect_exit=exits(0))


# --- makeinfo: a 36-chapter user manual; one cross-reference names a node that does not exist ------------

def _texi_chapter(n: int) -> str:
    """One chapter with two sections; chapter 23 refers to a misspelt node."""
    ref = "@xref{Instalation}" if n == 23 else "@xref{Installation}"
    return (f"@node Chapter {n}\n@chapter Chapter {n}: working with stores of kind {n}\n\n"
            f"Stores of kind {n} keep their records in blocks of @code{{{2 ** (n % 10)}}} kilobytes. {ref}, for\n"
            f"the programs this needs.\n\n@menu\n* Section {n}.1::\n* Section {n}.2::\n@end menu\n\n"
            f"@node Section {n}.1\n@section Opening a store of kind {n}\n\n@example\nstore open --kind={n} data/\n@end example\n\n"
            f"@node Section {n}.2\n@section Closing a store of kind {n}\n\nClose it with @samp{{store close}}; "
            f"the index is written back first.\n\n")


@recipe("makeinfo-manual-missing-node", "makeinfo", "build", ["makeinfo", "--version"], needs=("makeinfo",))
def _makeinfo(root):
    """Write the `makeinfo-manual-missing-node` project under `root`; return its command and signals."""
    menu = "".join(f"* Chapter {n}::\n" for n in range(1, 37))
    write(root, "store.texi", "\\input texinfo\n@setfilename store.info\n@settitle Store manual\n\n@node Top\n@top Store\n\n"
          f"@menu\n* Installation::\n{menu}@end menu\n\n@node Installation\n@chapter Installation\n\nRun @code{{make install}}.\n\n"
          + "".join(_texi_chapter(n) for n in range(1, 37)) + "@bye\n")
    return Run(["makeinfo", "store.texi"], [
        S("stderr", r"^store\.texi:\d+: @xref reference to nonexistent node .Instalation'$", "the error and its line"),
    ], expect_exit=exits(1))


# --- spin -run: a two-process lock protocol model; the safety assertion is violated -------------------------

_LOCK_PML = """\
bool flag[2];
byte inside;

active [2] proctype worker()
{
  byte me = _pid;
  byte other = 1 - _pid;
  do
  :: (flag[other] == false) ->
     flag[me] = true;
     inside++;
     assert(inside == 1);
     inside--;
     flag[me] = false
  od
}
"""


@recipe("spin-lock-protocol-assertion-violated", "spin", "linter", ["spin", "-V"], needs=("spin", "gcc"))
def _spin(root):
    """Write the `spin-lock-protocol-assertion-violated` project under `root`; return its command and signals."""
    write(root, "lock.pml", _LOCK_PML)
    return Run(["spin", "-run", "lock.pml"], [
        S("stdout", r"^pan:1: assertion violated \(inside==1\) \(at depth \d+\)$", "the violated assertion"),
        S("stdout", r"^pan: wrote lock\.pml\.trail$", "where the counterexample is"),
        S("stdout", r"^Warning: Search not completed$", "the search stopped at the error"),
        S("stdout", r"errors: 1$", "the error count"),
    ], expect_exit=exits(0))


# --- glslangValidator: a renderer's 360 shaders checked before packaging; one assigns a vec3 to a vec4 ------

def _shader(n: int, stage: str) -> str:
    """One shader of stage `stage`; fragment shader 131 assigns a vec3 to its vec4 output."""
    if stage == "vert":
        return (f"#version 450\nlayout(location = 0) in vec3 position;\nlayout(location = 1) in vec2 uv;\n"
                f"layout(location = 0) out vec2 v_uv;\nlayout(set = 0, binding = 0) uniform Camera {{ mat4 view_proj; }} cam;\n\n"
                f"void main()\n{{\n    v_uv = uv * {1 + n % 4}.0;\n    gl_Position = cam.view_proj * vec4(position, 1.0);\n}}\n")
    out = "color.rgb * light" if n == 131 else "vec4(color.rgb * light, color.a)"
    return (f"#version 450\nlayout(location = 0) in vec2 v_uv;\nlayout(location = 0) out vec4 frag;\n"
            f"layout(set = 1, binding = 0) uniform sampler2D albedo;\n\nvoid main()\n{{\n    vec4 color = texture(albedo, v_uv);\n"
            f"    float light = {0.5 + n / 100:.2f};\n    frag = {out};\n}}\n")


@recipe("glslang-shaders-one-type-mismatch", "glslangValidator", "compiler", ["glslangValidator", "--version"],
        needs=("glslangValidator",))
def _glslang(root):
    """Write the `glslang-shaders-one-type-mismatch` project under `root`; return its command and signals."""
    for n in range(180):
        write(root, f"shaders/material_{n:03d}.vert", _shader(n, "vert"))
        write(root, f"shaders/material_{n:03d}.frag", _shader(n, "frag"))
    return Run(["sh", "-c", "for f in shaders/*.vert shaders/*.frag; do glslangValidator -V -o build/$f.spv $f || rc=1; done; exit $rc"],
               [S("stdout", r"^ERROR: shaders/material_131\.frag:10: 'assign' :\s+cannot convert from", "the error and its place"),
                S("stdout", r"^ERROR: 2 compilation errors\.  No code generated\.$", "the count"),
                S("stdout", r"^SPIR-V is not generated for failed compile or link$", "the outcome")],
               expect_exit=exits(1), command="mkdir -p build/shaders; rc=0; for f in shaders/*.vert shaders/*.frag; do "
               "glslangValidator -V -o build/$f.spv $f || rc=1; done; exit $rc")


# --- octave oruntests: a signal-processing package's 240 function files with built-in tests; one assert fails

def _octave_fn(n: int) -> str:
    """One scaling function with three built-in tests; function 173's second expectation is off by one."""
    want = n * 3 + 1 if n == 173 else n * 3
    return (f"function y = scale_{n:03d}(x)\n  % Scale X by the factor of stage {n}.\n  y = x * {n};\nend\n\n"
            f"%!assert (scale_{n:03d}(2), {n * 2})\n%!assert (scale_{n:03d}(3), {want})\n"
            f"%!test\n%! assert (scale_{n:03d}([1 2]), [{n} {n * 2}])\n")


@recipe("octave-oruntests-one-assert-fails", "octave", "test-runner", ["octave-cli", "--version"], needs=("octave-cli",))
def _octave_tests(root):
    """Write the `octave-oruntests-one-assert-fails` project under `root`; return its command and signals."""
    for n in range(240):
        write(root, f"inst/scale_{n:03d}.m", _octave_fn(n))
    return Run(["octave-cli", "--no-window-system", "--quiet", "--eval", "addpath('inst'); oruntests('inst')"], [
        S("stdout", r"^\s+scale_173\.m \.+ PASS\s+2/3\s*$", "the one file whose tests did not all pass"),
        S("stdout", r"^\s+FAIL\s+1\s*$", "its failure count"),
    ], expect_exit=exits(0))


# --- spin -p: a random simulation of a relay with a 10-bit sequence number; the receiver's order check fails

_RELAY_PML = """\
chan link = [4] of { short };
int delivered;

active proctype sender()
{
  short seq = 0;
  do
  :: link!seq;
     seq = (seq + 1) % 1024
  od
}

active proctype receiver()
{
  short last = -1;
  short seq;
  do
  :: link?seq ->
     assert(seq > last);
     last = seq;
     delivered++
  od
}
"""


@recipe("spin-simulation-sequence-wrap-assertion", "spin", "runtime", ["spin", "-V"], needs=("spin",))
def _spin_sim(root):
    """Write the `spin-simulation-sequence-wrap-assertion` project under `root`; return its command and signals."""
    write(root, "relay.pml", _RELAY_PML)
    return Run(["spin", "-p", "-n7", "relay.pml"], [
        S("stdout", r"^spin: relay\.pml:19, Error: assertion violated$", "the error and its line"),
        S("stdout", r"^spin: text of failed assertion: assert\(\(seq>last\)\)$", "the assertion"),
        S("stdout", r"^\s+delivered = 1024$", "the state at the failure: the sequence number wrapped"),
        S("stdout", r"^2 processes created$", "the end of the run"),
    ], expect_exit=exits(1))


# --- dialyzer: an order service's 90 modules checked against a PLT of erts, kernel and stdlib -------------

def _erl_module(n: int) -> str:
    """One order-handling module; module 41 matches `lists:member/2`'s result against `yes`, module 63 calls
    `orders_12:total/2`, which takes one argument."""
    check = ("    case lists:member(Sku, Skus) of\n        yes -> {ok, Sku};\n        _ -> {error, unknown_sku}\n    end.\n"
             if n == 41 else "    case lists:member(Sku, Skus) of\n        true -> {ok, Sku};\n        false -> {error, unknown_sku}\n    end.\n")
    total = f"orders_12:total(Lines, {n})" if n == 63 else f"orders_{(n + 1) % 90:02d}:total(Lines)"
    return (f"-module(orders_{n:02d}).\n-export([total/1, check/2, summary/1]).\n\n"
            f"-spec total([{{binary(), pos_integer(), number()}}]) -> number().\n"
            f"total(Lines) -> lists:sum([Qty * Price * {100 + n} / 100 || {{_Sku, Qty, Price}} <- Lines]).\n\n"
            f"check(Sku, Skus) ->\n{check}\nsummary(Lines) ->\n    #{{count => length(Lines), total => {total}}}.\n")


@recipe("dialyzer-orders-pattern-and-arity", "dialyzer", "linter", ["erl", "-noshell", "-eval",
        "io:format(\"~s~n\", [erlang:system_info(otp_release)]), halt()."], needs=("dialyzer", "erlc"))
def _dialyzer(root):
    """Write the `dialyzer-orders-pattern-and-arity` project under `root`; return its command and signals."""
    plt = os.path.join(HOME, "erts-kernel-stdlib.plt")
    if not os.path.exists(plt):
        sh(["dialyzer", "--build_plt", "--apps", "erts", "kernel", "stdlib", "--output_plt", plt], root, check=False)
    for n in range(90):
        write(root, f"src/orders_{n:02d}.erl", _erl_module(n))
    sh(["mkdir", "-p", "ebin"], root)
    sh("erlc +debug_info -o ebin src/*.erl", root)
    return Run(["dialyzer", "--plt", plt, "ebin"], [
        S("stdout", r"^orders_41\.erl:9:9: The pattern\s*$", "the first warning's place"),
        S("stdout", r"^\s+'yes' can never match the type\s*$", "what is wrong there"),
        S("stdout", r"^orders_63\.erl:14:40: Call to missing or unexported function orders_12:total/2$", "the second warning"),
        S("stdout", r"^done \(warnings were emitted\)$", "the outcome"),
    ], expect_exit=exits(2))
