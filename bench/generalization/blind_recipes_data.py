"""Blind recipes for data, listings, packaging and crashes: xmllint, tidy, miller, awk over a log,
lsof, ss, a Rust panic with its backtrace, dpkg-buildpackage.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os
import random

from blind_common import Run, S, exits, recipe, sh, write

DTD = """<!DOCTYPE catalog [
<!ELEMENT catalog (item+)>
<!ELEMENT item (name, price, stock)>
<!ATTLIST item sku ID #REQUIRED>
<!ELEMENT name (#PCDATA)>
<!ELEMENT price (#PCDATA)>
<!ELEMENT stock (#PCDATA)>
]>
"""


@recipe("xmllint-valid-echoes-document", "xmllint", "data", ["xmllint", "--version"], needs=("xmllint",))
def _xmllint(root):
    """Write the `xmllint-valid-echoes-document` project under `root`; return its command and signals."""
    items = []
    for n in range(2600):
        if n == 1877:
            items.append(f'  <item sku="S{n:05d}">\n    <name>Widget {n}</name>\n    <stock>{n % 40}</stock>\n  </item>\n')
        else:
            items.append(f'  <item sku="S{n:05d}">\n    <name>Widget {n}</name>\n    <price>{n * 0.5:.2f}</price>\n'
                         f'    <stock>{n % 40}</stock>\n  </item>\n')
    write(root, "catalog.xml", '<?xml version="1.0" encoding="UTF-8"?>\n' + DTD + "<catalog>\n" + "".join(items) + "</catalog>\n")
    return Run(["xmllint", "--valid", "catalog.xml"], [
        S("stderr", r"^catalog\.xml:\d+: element item: validity error : Element item content does not follow the DTD",
          "the one invalid record among 2,600, with its line"),
    ], expect_exit=exits(3, 4))


@recipe("tidy-page-warnings-error", "tidy", "linter", ["tidy", "-v"], needs=("tidy",))
def _tidy(root):
    """Write the `tidy-page-warnings-error` project under `root`; return its command and signals."""
    rows = "".join(f"<tr><td>{n}</td><td>Order {n}</td><td>{n * 3.5:.2f}</td></tr>\n" for n in range(400))
    write(root, "report.html", "<!DOCTYPE html>\n<html lang=\"en\">\n<head><title>Orders</title></head>\n<body>\n"
          "<h1>Orders</h1>\n<center>Summary</center>\n<p>Totals below<p>\n<img src=\"chart.png\">\n"
          "<panel>new</panel>\n<table>\n" + rows + "</table>\n</body>\n</html>\n")
    return Run(["tidy", "report.html"], [
        S("stderr", r"^line \d+ column \d+ - Error: <panel> is not recognized!$", "the error"),
        S("stderr", r"^Tidy found \d+ warnings and \d+ errors?!$", "the closing count"),
        S("stderr", r"^This document has errors that must be fixed before$", "why no tidied document was written"),
    ], command=["tidy", "--tidy-mark", "no", "report.html"], expect_exit=exits(2))


@recipe("miller-ragged-row", "mlr", "data", ["mlr", "--version"], needs=("mlr",))
def _miller(root):
    """Write the `miller-ragged-row` project under `root`; return its command and signals."""
    rng = random.Random(9)
    lines = ["order_id,customer,region,total,status"]
    for n in range(1, 3400):
        fields = [str(n), f"cust-{rng.randrange(900):03d}", rng.choice(["eu", "us", "apac"]),
                  f"{rng.uniform(5, 500):.2f}", rng.choice(["paid", "paid", "refunded", "open"])]
        if n == 2911:
            fields.insert(2, "Smith, Jane")
        lines.append(",".join(fields))
    write(root, "orders.csv", "\n".join(lines) + "\n")
    return Run(["mlr", "--icsv", "--ojson", "cat", "orders.csv"], [
        S("stderr", r"^mlr: mlr: CSV header/data length mismatch 5 != 7 at filename orders\.csv row 2912\.",
          "the error: the one row with an extra field, where the output stops"),
    ], expect_exit=exits(1))


def _app_log(count: int) -> str:
    """A service log of DEBUG and INFO lines with two WARN and two ERROR lines deep inside."""
    rng = random.Random(4)
    lines = []
    for n in range(count):
        stamp = f"2024-05-02T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}Z"
        level, text = rng.choice([("DEBUG", "cache probe key=user:%d hit=%s"), ("INFO", "GET /api/orders/%d 200 %s")])
        message = text % (rng.randrange(10_000), rng.choice(["true", "false", "12ms", "31ms"]))
        if n in (9120, 17555):
            level, message = "WARN", f"pool saturation {n % 97}% on replica db-2"
        if n in (13407, 24003):
            level, message = "ERROR", f"payment capture failed order={n} code=card_declined_timeout"
        lines.append(f"{stamp} {level} api-{n % 4} {message}")
    return "\n".join(lines) + "\n"


@recipe("awk-filter-log-errors", "awk", "log", ["awk", "-W", "version"], needs=("awk",))
def _awk(root):
    """Write the `awk-filter-log-errors` project under `root`; return its command and signals."""
    write(root, "logs/api.log", _app_log(30_000))
    return Run(["awk", "$2 != \"DEBUG\"", "logs/api.log"], [
        S("stdout", r"^2024-05-02T\S+ ERROR api-\d payment capture failed", "the two errors among 15,000 INFO lines"),
    ], expect_exit=exits(0))


@recipe("lsof-deleted-open-files", "lsof", "listing", ["lsof", "-v"], needs=("lsof",))
def _lsof(root):
    """Write the `lsof-deleted-open-files` project under `root`; return its command and signals."""
    holder = ("import os, time; handles = [open(f'logs/app-{n}.log', 'w') for n in range(3)]; "
              "[h.write('x' * 4096 * (n + 1)) or h.flush() for n, h in enumerate(handles)]; "
              "os.remove('logs/app-1.log'); time.sleep(6)")
    os.makedirs(os.path.join(root, "logs"))
    command = (f"python3 -c \"{holder}\" & holder=$!; sleep 1.5; lsof -nP -a -p $holder -d 0-99; status=$?; "
               "kill $holder; exit $status")
    return Run(["lsof", "-nP", "-a", "-p", "PID", "-d", "0-99"], [
        S("stdout", r"/logs/app-1\.log \(deleted\)$", "the one file deleted while still held open"),
    ], command=command, expect_exit=exits(0))


@recipe("ss-listening-sockets", "ss", "listing", ["ss", "--version"], needs=("ss",))
def _ss(root):
    """Write the `ss-listening-sockets` project under `root`; return its command and signals."""
    ports = (8741, 8742, 8743, 8744)
    servers = "; ".join(f"python3 -m http.server {p} --bind 127.0.0.1 >/dev/null 2>&1 & pids=\"$pids $!\"" for p in ports)
    command = (f"pids=''; {servers}; sleep 1.5; ss -tln 'sport >= :8741 and sport <= :8744'; status=$?; "
               "kill $pids; exit $status")
    return Run(["ss", "-tln", "sport >= :8741 and sport <= :8744"], [], command=command, expect_exit=exits(0))


@recipe("cargo-run-panic-backtrace", "cargo", "crash", ["cargo", "--version"], needs=("cargo",))
def _cargo_panic(root):
    """Write the `cargo-run-panic-backtrace` project under `root`; return its command and signals."""
    write(root, "Cargo.toml", '[package]\nname = "ledger"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n')
    write(root, "src/main.rs", """
        fn parse_line(line: &str) -> (String, u32) {
            let fields: Vec<&str> = line.split(',').collect();
            (fields[0].to_string(), fields[2].parse().unwrap())
        }

        fn load(text: &str) -> u32 {
            text.lines().map(|l| parse_line(l).1).sum()
        }

        fn main() {
            let text = "apples,eu,12\\npears,us,7\\nplums,eu\\n";
            println!("loaded {} lines", text.lines().count());
            println!("total {}", load(text));
        }
        """)
    env = {"CARGO_HOME": "/root/.cargo", "RUSTUP_HOME": "/root/.rustup", "CARGO_NET_OFFLINE": "true",
           "CARGO_TERM_COLOR": "never", "RUST_BACKTRACE": "1"}
    sh(["cargo", "build", "-q"], root, env=env)
    return Run(["cargo", "run"], [
        S("stderr", r"^thread 'main' \(\d+\) panicked at src/main\.rs:\d+:\d+:$", "the panic and its place"),
        S("stderr", r"^index out of bounds: the len is 2 but the index is 2$", "the panic's message"),
        S("stderr", r"^stack backtrace:$", "the start of the backtrace"),
        S("stderr", r"^ +\d+: ledger::(parse_line|load)", "the project's own frames"),
    ], env=env, expect_exit=exits(101))


@recipe("dpkg-buildpackage-compile-error", "dpkg-buildpackage", "build", ["dpkg-buildpackage", "--version"],
        needs=("dpkg-buildpackage", "gcc"))
def _dpkg_build(root):
    """Write the `dpkg-buildpackage-compile-error` project under `root`; return its command and signals."""
    write(root, "debian/control", "Source: meter\nSection: utils\nPriority: optional\nMaintainer: Dev One <dev@example.org>\n"
          "Standards-Version: 4.6.2\n\nPackage: meter\nArchitecture: any\nDescription: meter tools\n Tools.\n")
    write(root, "debian/changelog", "meter (1.2-1) unstable; urgency=medium\n\n  * Release.\n\n"
          " -- Dev One <dev@example.org>  Fri, 01 Mar 2024 09:00:00 +0000\n")
    write(root, "debian/source/format", "3.0 (native)\n")
    write(root, "debian/rules", "#!/usr/bin/make -f\nbuild build-arch build-indep:\n\t$(MAKE) -C src\n"
          "clean:\n\t$(MAKE) -C src clean\nbinary binary-arch binary-indep: build\n\ttrue\n", mode=0o755)
    for i in range(420):
        body = f"int meter_{i}(int v) {{ return v * {i + 1}; }}\n"
        if i == 331:
            body = "#include \"meter.h\"\nint meter_331(int v) { return v * unit_scale; }\n"
        write(root, f"src/meter_{i:03d}.c", body)
    write(root, "src/meter.h", "extern int meter_scale;\n")
    write(root, "src/Makefile", "SRCS := $(sort $(wildcard meter_*.c))\nOBJS := $(SRCS:.c=.o)\n"
          "all: libmeter.a\nlibmeter.a: $(OBJS)\n\tar rcs $@ $^\n%.o: %.c\n\tgcc -O2 -Wall -c $< -o $@\n"
          "clean:\n\trm -f *.o libmeter.a\n")
    return Run(["dpkg-buildpackage", "-us", "-uc", "-b", "-d"], [
        S("stderr", r"^meter_331\.c:2:35: error: ‘unit_scale’ undeclared", "the error and its place"),
        S("stderr", r"^make\[\d\]: \*\*\* \[Makefile:\d+: meter_331\.o\] Error 1$", "the target that failed"),
        S("stderr", r"^dpkg-buildpackage: error: debian/rules build subprocess returned exit status 2$", "the verdict"),
    ], env={"DEB_BUILD_OPTIONS": "parallel=1", "SOURCE_DATE_EPOCH": "1709283600"}, expect_exit=exits(2))
