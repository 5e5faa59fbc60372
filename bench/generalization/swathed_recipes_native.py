"""Swathed recipes for compilers, build tools, test frameworks, checkers, profilers and crashes: mandoc's
lint, LLVM's lit, hlint, Google Benchmark, Helgrind, libstdc++'s debug mode, Pike, the stack protector,
gnuplot, debhelper's dh and Regina REXX.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from swathed_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "mandoc": "1.14.6-1+b1", "libbenchmark-dev": "1.7.1-1", "hlint": "3.3.6-1+b4", "pike8.0": "8.0.1738-1",
    "gnuplot-nox": "5.4.4+dfsg1-2+b2", "debhelper": "13.11.4", "llvm-14-tools": "1:14.0.6-12",
    "valgrind": "1:3.19.0-1", "regina-rexx": "3.6-2.4",
}

LIT = "/usr/lib/llvm-14/build/utils/lit/lit.py"


def _debver(package: str) -> list[str]:
    """A version command for a Debian package whose tool prints no version of its own."""
    return ["dpkg-query", "-W", "-f=${Version}\n", package]


# --- mandoc -T lint: a toolkit's 320 manual pages full of style findings; two pages have real errors ------

_MDOC_OPTION = """\
.It Fl {flag}
Use the {word} mode. The records are read in order, e.g. the first one first. See below for details.
"""


def _mdoc_page(n: int) -> str:
    """One mdoc page in the toolkit's house style (two sentences a line, trailing blanks here and there)."""
    flags = "".join(_MDOC_OPTION.format(flag=chr(97 + k), word=("strict", "lenient", "quiet", "fast")[k % 4])
                    for k in range(6 + n % 5))
    see_also = f".Xr rtool-{(n + 1) % 320:03d} 1 ,\n.Xr rtool 7\n"
    body = (f".Dd March {n % 28 + 1}, 2024\n.Dt RTOOL-{n:03d} 1\n.Os\n.Sh NAME\n.Nm rtool-{n:03d}\n"
            f".Nd run stage {n} of the record pipeline\n.Sh SYNOPSIS\n.Nm\n.Op Fl abcdef\n.Ar file ...\n"
            f".Sh DESCRIPTION\nThe\n.Nm\nutility reads each file. It writes stage {n} results. \n.Bl -tag -width Ds\n"
            f"{flags}.El\n.Sh EXIT STATUS\n.Ex -std\n.Sh SEE ALSO\n{see_also}")
    if n == 87:
        body = body.replace(".El\n", "")
    if n == 211:
        body = body.replace(".Sh EXIT STATUS\n", ".Sh EXIT STATUS\n.PP\n")
    return body


@recipe("mandoc-lint-toolkit-pages-two-errors", "mandoc", "linter", _debver("mandoc"), needs=("mandoc",))
def _mandoc(root):
    """Write the `mandoc-lint-toolkit-pages-two-errors` project under `root`; return its command and signals."""
    for n in range(320):
        write(root, f"man/man1/rtool-{n:03d}.1", _mdoc_page(n))
    return Run(["mandoc", "-T", "lint", "man/man1/*.1"], [
        S("stdout", r"rtool-087\.1:\d+:\d+: ERROR: ", "the unclosed list's error"),
        S("stdout", r"rtool-211\.1:\d+:\d+: ERROR: ", "the stray man macro's error"),
    ], command="mandoc -T lint man/man1/*.1", expect_exit=exits(3))


# --- lit -v: a unit converter's 420 shell tests; one conversion rounds the wrong way --------------------

_CONVERT_PY = """\
import sys

FACTORS = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mm": 0.001, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}


def convert(value, source, target):
    result = value * FACTORS[source] / FACTORS[target]
    return round(result, 3) if target != "mi" else int(result * 1000) / 1000


if __name__ == "__main__":
    print(f"{convert(float(sys.argv[1]), sys.argv[2], sys.argv[3]):.3f}")
"""

_UNITS = ("km", "m", "cm", "mm", "mi", "ft", "in")
_FACTORS = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mm": 0.001, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}


@recipe("lit-converter-suite-one-failure", "lit", "test-runner", ["python3", LIT, "--version"], needs=("python3",))
def _lit(root):
    """Write the `lit-converter-suite-one-failure` project under `root`; return its command and signals."""
    write(root, "tools/convert.py", _CONVERT_PY)
    write(root, "tests/lit.cfg.py", "import os\n\nimport lit.formats\n\nconfig.name = 'convert'\nconfig.test_format = "
          "lit.formats.ShTest(True)\nconfig.suffixes = ['.test']\nconfig.substitutions.append(('%convert', "
          "'python3 ' + os.path.join(os.path.dirname(__file__), '..', 'tools', 'convert.py')))\n")
    for source in _UNITS:
        for target in _UNITS:
            if source == target:
                continue
            for k in range(10):
                value = 1 + k * 7.5
                want = f"{round(value * _FACTORS[source] / _FACTORS[target], 3):.3f}"
                if target == "mi":
                    want = f"{int(value * _FACTORS[source] / _FACTORS[target] * 1000) / 1000:.3f}"
                if (source, target, k) == ("ft", "mi", 7):
                    want = f"{float(want) + 0.001:.3f}"  # the test expects rounding up; the tool truncates
                write(root, f"tests/{source}_to_{target}/case_{k:02d}.test",
                      f"# RUN: %convert {value} {source} {target} | grep -x '{want}'\n")
    return Run(["lit", "-v", "tests"], [
        S("stdout", r"^FAIL: convert :: ft_to_mi/case_07\.test", "the failed test among 420"),
        S("stdout", r"^\*+ TEST 'convert :: ft_to_mi/case_07\.test' FAILED \*+$", "the start of its report"),
        S("stdout", r"^Exit Code: 1$", "how it failed"),
        S("stdout", r"^\s+Passed\s*: \d+", "the passes count"),
        S("stdout", r"^\s+Failed\s*:\s+1$", "the failure count"),
    ], command=f"python3 {LIT} -v tests", expect_exit=exits(1))


# --- hlint: a Haskell service's 240 modules full of suggestions; one module does not parse ----------------

def _haskell_module(n: int) -> str:
    """One module, written before the team ran hlint: redundant brackets, ifs and lambdas."""
    lines = [f"module Service.Handler{n:03d} where\n\nimport Data.Char (toUpper)\n\n"]
    for k in range(4):
        lines.append(f"isBig{k} :: Int -> Bool\nisBig{k} x = if x > {n + k} then True else False\n\n")
        lines.append(f"shout{k} :: [String] -> String\nshout{k} xs = concat (map (\\w -> map toUpper w) xs)\n\n")
    lines.append("differs :: Int -> Int -> Bool\ndiffers a b = not (a == b)\n\n")
    if n == 173:
        lines.append("handle :: Int -> IO ()\nhandle x = do\n  let y = x +\n  print y\n  return ()\n")
    else:
        lines.append("handle :: Int -> IO ()\nhandle x = do\n  let y = x + 1\n  print (y)\n")
    return "".join(lines)


@recipe("hlint-service-modules-one-parse-error", "hlint", "linter", ["hlint", "--version"], needs=("hlint",))
def _hlint(root):
    """Write the `hlint-service-modules-one-parse-error` project under `root`; return its command and signals."""
    for n in range(240):
        write(root, f"src/Service/Handler{n:03d}.hs", _haskell_module(n))
    return Run(["hlint", "src"], [
        S("stdout", r"Handler173\.hs:\d+:\d+: Error: Parse error", "the module that does not parse"),
        S("stdout", r"^\d+ hints?$", "the totals"),
    ], expect_exit=exits(1))


# --- Google Benchmark: a codec's 400 timed cases; one decode case reports a checksum error ---------------

_CODEC_BENCH = """\
#include <benchmark/benchmark.h>
#include <cstdint>
#include <string>
#include <vector>

static std::vector<uint8_t> encode(const std::vector<uint8_t>& in) {
    std::vector<uint8_t> out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size();) {
        size_t run = 1;
        while (i + run < in.size() && in[i + run] == in[i] && run < 255) ++run;
        out.push_back(static_cast<uint8_t>(run));
        out.push_back(in[i]);
        i += run;
    }
    return out;
}

static std::vector<uint8_t> sample(size_t n, int period) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i / period) % 251);
    return v;
}

static void BM_Encode(benchmark::State& state) {
    auto input = sample(state.range(0), state.range(1));
    for (auto _ : state) benchmark::DoNotOptimize(encode(input));
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Encode)->ArgsProduct({benchmark::CreateRange(16, 1 << 20, 2), {1, 2, 3, 5, 17, 64}});

static void BM_Decode(benchmark::State& state) {
    auto packed = encode(sample(state.range(0), state.range(1)));
    if (state.range(0) == 16384 && state.range(1) == 17) {
        state.SkipWithError("checksum mismatch in block 3 of the packed input");
        return;
    }
    for (auto _ : state) {
        std::vector<uint8_t> out;
        for (size_t i = 0; i + 1 < packed.size(); i += 2) out.insert(out.end(), packed[i], packed[i + 1]);
        benchmark::DoNotOptimize(out);
    }
    state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Decode)->ArgsProduct({benchmark::CreateRange(16, 1 << 20, 2), {1, 2, 3, 5, 17, 64}});

static void BM_RoundTrip(benchmark::State& state) {
    auto input = sample(state.range(0), state.range(1));
    for (auto _ : state) benchmark::DoNotOptimize(encode(encode(input)));
}
BENCHMARK(BM_RoundTrip)->ArgsProduct({benchmark::CreateRange(16, 1 << 20, 2), {1, 3, 17}});

BENCHMARK_MAIN();
"""


@recipe("benchmark-codec-one-skipped-with-error", "google-benchmark", "profiler", _debver("libbenchmark-dev"),
        needs=("g++",))
def _benchmark(root):
    """Write the `benchmark-codec-one-skipped-with-error` project under `root`; return its command and signals."""
    write(root, "codec_bench.cc", _CODEC_BENCH)
    sh("g++ -O2 -std=c++17 -o codec_bench codec_bench.cc -lbenchmark -lpthread", root)
    return Run(["./codec_bench", "--benchmark_min_time=0.002"], [
        S("stdout", r"^BM_Decode/16384/17\s+ERROR OCCURRED: 'checksum mismatch", "the one case that reported an error"),
    ], expect_exit=exits(0))


# --- valgrind --tool=helgrind: a 4-thread job pool; one statistic is updated outside the lock ------------

_POOL_C = """\
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct stats { long processed; long bytes; pthread_mutex_t lock; };
static struct stats stats = { 0, 0, PTHREAD_MUTEX_INITIALIZER };
static int next_job = 0;
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;

static void record_bytes(long n)
{
    stats.bytes += n;
}

static void record_done(void)
{
    pthread_mutex_lock(&stats.lock);
    stats.processed++;
    pthread_mutex_unlock(&stats.lock);
}

static long run_job(int job)
{
    long sum = 0;
    for (int i = 0; i < 2000; i++)
        sum += (job * 31 + i) % 97;
    return sum;
}

static void *worker(void *arg)
{
    int id = *(int *)arg;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        int job = next_job < 240 ? next_job++ : -1;
        pthread_mutex_unlock(&queue_lock);
        if (job < 0)
            break;
        long size = run_job(job);
        record_bytes(size);
        record_done();
        printf("worker %d finished job %d (%ld bytes)\\n", id, job, size);
    }
    return NULL;
}

int main(void)
{
    pthread_t threads[4];
    int ids[4];
    for (int i = 0; i < 4; i++) {
        ids[i] = i;
        pthread_create(&threads[i], NULL, worker, &ids[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);
    printf("processed %ld jobs, %ld bytes\\n", stats.processed, stats.bytes);
    return 0;
}
"""


@recipe("helgrind-job-pool-unlocked-counter", "helgrind", "sanitizer", ["valgrind", "--version"], needs=("valgrind", "gcc"))
def _helgrind(root):
    """Write the `helgrind-job-pool-unlocked-counter` project under `root`; return its command and signals."""
    write(root, "pool.c", _POOL_C)
    sh("gcc -g -O0 -pthread -o pool pool.c", root)
    return Run(["valgrind", "--tool=helgrind", "./pool"], [
        S("stderr", r"Possible data race during (read|write) of size 8 at", "the race"),
        S("stderr", r"by 0x[0-9A-F]+: record_bytes \(pool\.c:12\)|at 0x[0-9A-F]+: record_bytes \(pool\.c:12\)",
          "the project's line that races"),
        S("stderr", r"ERROR SUMMARY: [1-9]\d* errors? from \d+ contexts?", "the totals"),
    ], expect_exit=exits(0))


# --- libstdc++ debug mode: an order-book replay of 6,000 ticks; one price is past the top level ----------

_REPLAY_CPP = """\
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

struct Level { double price; long quantity; };

static int level_of(double price, double base, double step)
{
    return static_cast<int>((price - base) / step);
}

int main(int argc, char **argv)
{
    std::vector<Level> book(12);
    for (int i = 0; i < 12; ++i)
        book[i] = Level{100.0 + i, 0};
    std::ifstream in(argv[1]);
    std::string line;
    long tick = 0;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        double price;
        long quantity;
        char comma;
        fields >> price >> comma >> quantity;
        Level &level = book[level_of(price, 100.0, 1.0)];
        level.quantity += quantity;
        std::cout << "tick " << tick++ << " price " << price << " level " << level.price
                  << " quantity " << level.quantity << std::endl;
    }
    std::cout << "replayed " << tick << " ticks" << std::endl;
    return 0;
}
"""


@recipe("glibcxx-debug-replay-subscript-abort", "libstdc++-debug", "crash", _debver("libstdc++-12-dev"), needs=("g++",))
def _glibcxx_debug(root):
    """Write the `glibcxx-debug-replay-subscript-abort` project under `root`; return its command and signals."""
    ticks = [f"{100 + (n * 37 % 1190) / 100:.2f},{n % 50 + 1}\n" for n in range(6000)]
    ticks[5821] = "112.05,40\n"
    write(root, "ticks.csv", "".join(ticks))
    write(root, "replay.cpp", _REPLAY_CPP)
    sh("g++ -g -O0 -D_GLIBCXX_DEBUG -o replay replay.cpp", root)
    return Run(["./replay", "ticks.csv"], [
        S("stderr", r"^Error: attempt to subscript container with out-of-bounds index", "the error"),
        S("stderr", r"debug/vector:\d+:", "where the check fired"),
        S("stdout", r"^tick 5820 ", "the last tick replayed before the abort"),
    ], expect_exit=lambda code: code != 0)


# --- pike: an order report over 3,000 orders; one order names a product missing from the catalogue ------

_REPORT_PIKE = """\
mapping(string:mapping) catalogue = ([]);

float line_total(string sku, int quantity)
{
  return catalogue[sku]->price * quantity;
}

void load_catalogue(string path)
{
  foreach (Stdio.read_file(path) / "\\n", string line) {
    if (!sizeof(line)) continue;
    array fields = line / ";";
    catalogue[fields[0]] = (["name": fields[1], "price": (float)fields[2]]);
  }
}

int main(int argc, array(string) argv)
{
  load_catalogue("catalogue.txt");
  float total = 0.0;
  foreach (Stdio.read_file("orders.txt") / "\\n", string line) {
    if (!sizeof(line)) continue;
    array fields = line / ";";
    float amount = line_total(fields[1], (int)fields[2]);
    total += amount;
    write("order %s: %s x %d = %.2f (running total %.2f)\\n", fields[0], fields[1], (int)fields[2], amount, total);
  }
  write("%d orders, total %.2f\\n", sizeof(Stdio.read_file("orders.txt") / "\\n") - 1, total);
  return 0;
}
"""


@recipe("pike-order-report-null-index", "pike", "crash", ["pike", "--version"], needs=("pike",))
def _pike(root):
    """Write the `pike-order-report-null-index` project under `root`; return its command and signals."""
    write(root, "catalogue.txt", "".join(f"SKU-{k:04d};Part {k};{k % 90 + 1.25}\n" for k in range(400)))
    orders = [f"ORD-{n:05d};SKU-{(n * 13) % 400:04d};{n % 9 + 1}\n" for n in range(3000)]
    orders[2417] = "ORD-02417;SKU-0400;3\n"
    write(root, "orders.txt", "".join(orders))
    write(root, "report.pike", _REPORT_PIKE)
    return Run(["pike", "report.pike"], [
        S("stderr", r"^Cannot index the NULL value with \"price\"", "the error"),
        S("stderr", r"report\.pike:5:", "the project's line that failed"),
        S("stderr", r"report\.pike:24:", "the caller in the project's loop"),
    ], expect_exit=lambda code: code != 0)


# --- the stack protector: a user import logs 900 users to stderr; one name overflows a fixed buffer ------

_IMPORT_C = """\
#include <stdio.h>
#include <string.h>

struct user { int id; char shell[32]; };

static int parse_user(const char *line, struct user *out)
{
    char name[32];
    if (sscanf(line, "%d:%[^:]:%31s", &out->id, name, out->shell) != 3)
        return -1;
    fprintf(stderr, "imported user %d (%s) with shell %s\\n", out->id, name, out->shell);
    return 0;
}

int main(void)
{
    char line[512];
    struct user user;
    int count = 0;
    FILE *in = fopen("users.txt", "r");
    while (fgets(line, sizeof line, in))
        if (parse_user(line, &user) == 0)
            count++;
    fprintf(stderr, "imported %d users\\n", count);
    return 0;
}
"""


@recipe("stack-protector-user-import-smashed", "stack-protector", "crash", ["gcc", "--version"], needs=("gcc",))
def _stack_protector(root):
    """Write the `stack-protector-user-import-smashed` project under `root`; return its command and signals."""
    users = [f"{1000 + n}:user{n:04d}:/bin/{'bash' if n % 3 else 'sh'}\n" for n in range(900)]
    users[733] = "1733:" + "maintenance-account-for-the-nightly-backup-rotation-job" * 2 + ":/bin/sh\n"
    write(root, "users.txt", "".join(users))
    write(root, "import_users.c", _IMPORT_C)
    sh("gcc -O0 -g -fstack-protector-strong -o import_users import_users.c", root)
    return Run(["./import_users"], [
        S("stderr", r"^\*\*\* stack smashing detected \*\*\*", "the crash"),
        S("stderr", r"^imported user \d+ \(maintenance-account", "the record that overflowed the buffer"),
    ], expect_exit=lambda code: code != 0)


# --- gnuplot: a latency report script; one title names an undefined variable ----------------------------

@recipe("gnuplot-latency-undefined-variable", "gnuplot", "interpreter", ["gnuplot", "--version"], needs=("gnuplot",))
def _gnuplot(root):
    """Write the `gnuplot-latency-undefined-variable` project under `root`; return its command and signals."""
    write(root, "latency.dat", "".join(f"{n} {20 + n % 17} {35 + n % 23} {80 + n % 41}\n" for n in range(500)))
    write(root, "latency.gp", "set terminal dumb size 100,30\nset output 'latency.txt'\nset title 'Request latency'\n"
          "set xlabel 'minute'\nset ylabel 'ms'\nlabel_p50 = 'p50'\nlabel_p90 = 'p90'\n"
          "plot 'latency.dat' using 1:2 with lines title label_p50\n"
          "plot 'latency.dat' using 1:3 with lines title label_p90\n"
          "plot 'latency.dat' using 1:4 with lines title label_p99\n"
          "plot 'latency.dat' using 1:6 with lines title 'p999'\n"
          "print 'written latency.txt'\n")
    return Run(["gnuplot", "latency.gp"], [
        S("stderr", r"\"latency\.gp\" line 10: undefined variable: label_p99", "the error"),
    ], expect_exit=lambda code: code != 0)


# --- dh binary: a metrics daemon's 180 sources build with warnings; its doc package lists a man page never installed

def _statsd_source(n: int) -> str:
    """One collector of the daemon; a few keep a parameter they no longer use."""
    used = "(void)flags;\n    " if n % 9 else ""
    return (f"#include \"collector.h\"\n\nint collect_{n:03d}(struct sample *out, int flags)\n{{\n    {used}"
            f"out->id = {n};\n    out->value = read_counter({n % 16});\n    return 0;\n}}\n")


_STATSD_MAKEFILE = """\
CFLAGS += -Wall -Wextra
SRCS := $(sort $(wildcard src/*.c))
OBJS := $(SRCS:.c=.o)

all: statsd-lite

statsd-lite: $(OBJS)
\t$(CC) $(LDFLAGS) -o $@ $(OBJS)

src/%.o: src/%.c src/collector.h
\t$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

install: statsd-lite
\tinstall -D -m 755 statsd-lite $(DESTDIR)/usr/bin/statsd-lite

clean:
\trm -f statsd-lite $(OBJS)
"""


@recipe("dh-binary-doc-package-missing-file", "dh", "build", _debver("debhelper"), needs=("dh", "gcc", "make"))
def _dh(root):
    """Write the `dh-binary-doc-package-missing-file` project under `root`; return its command and signals."""
    write(root, "src/collector.h", "struct sample { int id; long value; };\nlong read_counter(int slot);\n")
    write(root, "src/main.c", "#include \"collector.h\"\n\nlong read_counter(int slot)\n{\n    return slot * 3L;\n}\n\n"
          "int main(void)\n{\n    return 0;\n}\n")
    for n in range(180):
        write(root, f"src/collect_{n:03d}.c", _statsd_source(n))
    write(root, "Makefile", _STATSD_MAKEFILE)
    write(root, "debian/changelog", "statsd-lite (0.9.2-1) unstable; urgency=medium\n\n  * New upstream release.\n\n"
          " -- Dana Builder <dana@example.org>  Mon, 02 Sep 2024 10:00:00 +0000\n")
    write(root, "debian/control", "Source: statsd-lite\nSection: net\nPriority: optional\nMaintainer: Dana Builder "
          "<dana@example.org>\nBuild-Depends: debhelper-compat (= 13)\nStandards-Version: 4.6.2\n\n"
          "Package: statsd-lite\nArchitecture: any\nDepends: ${shlibs:Depends}, ${misc:Depends}\n"
          "Description: small metrics daemon\n Collects counters and sends them on.\n\n"
          "Package: statsd-lite-doc\nArchitecture: all\nDepends: ${misc:Depends}\n"
          "Description: small metrics daemon (documentation)\n The manual page of statsd-lite.\n")
    write(root, "debian/rules", "#!/usr/bin/make -f\n%:\n\tdh $@\n", mode=0o755)
    write(root, "debian/source/format", "3.0 (quilt)\n")
    write(root, "debian/copyright", "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
          "Upstream-Name: statsd-lite\n\nFiles: *\nCopyright: 2024 Dana Builder\nLicense: MIT\n")
    write(root, "debian/statsd-lite.install", "usr/bin/statsd-lite\n")
    write(root, "debian/statsd-lite-doc.install", "usr/share/man/man1/statsd-lite.1\n")
    return Run(["debian/rules", "binary"], [
        S("stderr", r"^dh_install: error: missing files, aborting", "the error"),
        S("stderr", r"Cannot find \(any matches for\) \"usr/share/man/man1/statsd-lite\.1\"", "the file it could not find"),
        S("stderr", r"^make: \*\*\* \[debian/rules:\d+: binary\] Error", "the build's failure"),
    ], expect_exit=lambda code: code != 0)


# --- rexx: a payroll batch over 1,800 timesheet rows; one row's hours hold a stray unit ---------------

_PAYROLL_REX = """\
/* payroll.rex: total the pay of each timesheet row */
parse arg file
total = 0
count = 0
do while lines(file) > 0
  line = linein(file)
  parse var line employee ',' week ',' hours ',' rate
  if employee = 'employee' then iterate
  pay = hours * rate
  total = total + pay
  count = count + 1
  say 'week' week 'employee' employee':' hours 'h at' rate '=' format(pay, , 2) '(running total' format(total, , 2)')'
end
say count 'rows, total' format(total, , 2)
exit 0
"""


@recipe("rexx-payroll-bad-arithmetic", "rexx", "crash", ["rexx", "-v"], needs=("rexx",))
def _rexx(root):
    """Write the `rexx-payroll-bad-arithmetic` project under `root`; return its command and signals."""
    rows = [f"E{n % 140:04d},2024-W{n // 140 + 1:02d},{n % 9 + 32},{(n % 13) + 18}.50\n" for n in range(1800)]
    rows[1333] = "E0073,2024-W10,38h,21.50\n"
    write(root, "timesheets.csv", "employee,week,hours,rate\n" + "".join(rows))
    write(root, "payroll.rex", _PAYROLL_REX)
    return Run(["rexx", "./payroll.rex", "timesheets.csv"], [
        S("stderr", r"^Error \d+ running .*payroll\.rex\", line 9: ", "the error and its line"),
        S("stderr", r"^\s+9 \+\+\+ +pay = hours \* rate", "the failing statement"),
    ], expect_exit=lambda code: code != 0)
