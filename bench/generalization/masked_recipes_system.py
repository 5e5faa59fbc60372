"""Masked recipes for VCS, services, system, storage, network config, data tools, listings and logs: svnadmin,
diff, promtool, keepalived, bird, join, cpio, 7z, par2, nsd-checkconf, fail2ban-regex, xsltproc, cloc, zic.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from masked_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "prometheus": "2.42.0+ds-5+deb12u1", "keepalived": "1:2.2.7-1+b2", "nsd": "4.6.1-1", "fail2ban": "1.0.2-2",
    "p7zip-full": "16.02+really26.02+dfsg-0+deb12u1", "par2": "0.8.1-3", "bird2": "2.0.12-7",
    "xsltproc": "1.1.35-1+deb12u4", "cloc": "1.96-1",
}


# --- svnadmin verify --keep-going: a 4,500-revision repository with one damaged revision file -------------

def _svn_props(props: list[tuple[str, str]]) -> bytes:
    """A dump file's property block."""
    out = b"".join(b"K %d\n%s\nV %d\n%s\n" % (len(k), k.encode(), len(v.encode()), v.encode()) for k, v in props)
    return out + b"PROPS-END\n"


def _svn_dump(revisions: int) -> bytes:
    """A dump stream: `trunk/` and 50 settings files, each revision rewriting one of them."""
    out = [b"SVN-fs-dump-format-version: 2\n\nUUID: 6f1c3c9e-7a1d-4c55-9a0b-2f0e0c1d2b3a\n\n"]
    for rev in range(revisions + 1):
        date = f"2026-01-{1 + rev // 200:02d}T{rev % 24:02d}:{rev % 60:02d}:00.000000Z"
        props = _svn_props([("svn:date", date)] if rev == 0 else [("svn:author", ["ana", "ben", "chen"][rev % 3]),
                           ("svn:date", date), ("svn:log", f"Tune setting group {rev % 50} (change {rev})")])
        out.append(b"Revision-number: %d\nProp-content-length: %d\nContent-length: %d\n\n%s\n"
                   % (rev, len(props), len(props), props))
        if rev == 1:
            empty = _svn_props([])
            out.append(b"Node-path: trunk\nNode-kind: dir\nNode-action: add\nProp-content-length: %d\n"
                       b"Content-length: %d\n\n%s\n\n" % (len(empty), len(empty), empty))
        if rev >= 1:
            text = "".join(f"setting_{rev % 50}_{k} = {rev * 7 + k}\n" for k in range(60)).encode()
            action = b"add" if rev <= 50 else b"change"
            out.append(b"Node-path: trunk/settings_%02d.conf\nNode-kind: file\nNode-action: %s\n"
                       b"Text-content-length: %d\nContent-length: %d\n\n%s\n\n"
                       % (rev % 50, action, len(text), len(text), text))
    return b"".join(out)


@recipe("svnadmin-verify-damaged-revision", "svnadmin", "vcs", ["svnadmin", "--version", "--quiet"],
        needs=("svnadmin",))
def _svnadmin(root):
    """Write the `svnadmin-verify-damaged-revision` project under `root`; return its command and signals."""
    sh("svnadmin create repo", root)
    sh("svnadmin load -q repo", root, input=_svn_dump(4500))
    path = os.path.join(root, "repo", "db", "revs", "2", "2718")
    with open(path, "r+b") as handle:
        data = bytearray(handle.read())
        for k in range(40, 56):
            data[k] ^= 0x5A
        handle.seek(0)
        handle.write(data)
    return Run(["svnadmin", "verify", "--keep-going", "repo"], [
        S("stderr", r"^\* Error verifying revision 2718\.$", "the damaged revision among 4,500"),
        S("stderr", r"^svnadmin: E\d+: .*", "the errors"),
        S("stderr", r"^\* Error verifying repository metadata\.$", "the metadata check that failed"),
        S("stdout", r"^-----Summary of corrupt revisions-----$", "the summary at the end of 4,500 verified revisions"),
        S("stdout", r"^ r2718: E\d+: ", "the corrupt revision's errors in it"),
    ], expect_exit=exits(1))


# --- diff -ru: a report generator's output against the golden files; one real change among timestamps ---

def _report(n: int, stamp: str, total: str) -> str:
    """One generated report: a header with its generation time, 30 rows, a total."""
    rows = "".join(f"  item {k:02d}  qty {n % 7 + k}  price {k * 3 + n % 11}.50\n" for k in range(30))
    return f"Report {n:03d}\nGenerated: {stamp}\nRegion: {['north', 'south', 'east', 'west'][n % 4]}\n\n{rows}\nTotal: {total}\n"


@recipe("diff-recursive-golden-reports", "diff", "vcs", ["diff", "--version"], needs=("diff",))
def _diff(root):
    """Write the `diff-recursive-golden-reports` project under `root`; return its command and signals."""
    for n in range(400):
        total = f"{n * 37 + 1000}.50"
        write(root, f"golden/reports/report_{n:03d}.txt", _report(n, "2026-01-05 09:00:00", total))
        if n != 377:
            changed = f"{n * 37 + 1036}.50" if n == 212 else total
            write(root, f"out/reports/report_{n:03d}.txt", _report(n, f"2026-03-02 14:{n % 60:02d}:07", changed))
    return Run(["diff", "-ru", "golden", "out"], [
        S("stdout", r"^[-+]Total: (8844|8880)\.50$", "the one real change among 399 timestamp changes"),
        S("stdout", r"^diff -ru golden/reports/report_212\.txt out/reports/report_212\.txt$", "the changed report's heading"),
        S("stdout", r"^Only in golden/reports: report_377\.txt$", "the report no longer generated"),
    ], expect_exit=exits(1))


# --- promtool check rules: 300 alerting-rule files; one has an expression that does not parse ----------

def _rules_file(n: int) -> str:
    """One rules file of three alerts; file 104's second alert misses a bracket."""
    expr = "sum(rate(http_requests_total{job=\"svc%d\",code=~\"5..\"}[5m])) / sum(rate(http_requests_total{job=\"svc%d\"}[5m])) > 0.05" % (n, n)
    if n == 104:
        expr = expr.replace("[5m]))", "[5m])", 1)
    return (f"groups:\n  - name: svc{n}\n    rules:\n      - alert: Svc{n}Down\n        expr: up{{job=\"svc{n}\"}} == 0\n"
            f"        for: 5m\n      - alert: Svc{n}ErrorRate\n        expr: '{expr}'\n        for: 10m\n"
            f"      - alert: Svc{n}Latency\n        expr: histogram_quantile(0.99, sum by (le) (rate(latency_bucket{{job=\"svc{n}\"}}[5m]))) > 1\n"
            "        for: 10m\n")


@recipe("promtool-check-rules-one-bad-expr", "promtool", "service", ["promtool", "--version"], needs=("promtool",))
def _promtool(root):
    """Write the `promtool-check-rules-one-bad-expr` project under `root`; return its command and signals."""
    paths = []
    for n in range(300):
        paths.append(f"rules/svc{n:03d}.yml")
        write(root, paths[-1], _rules_file(n))
    return Run(["promtool", "check", "rules", *paths], [
        S("stderr", r"^  FAILED:$", "the one file that failed"),
        S("stdout", r"^Checking rules/svc104\.yml$", "the heading of the file that failed, among 300"),
        S("stderr", r"^rules/svc104\.yml: .*could not parse expression", "its error"),
    ], expect_exit=exits(1))


# --- keepalived -t: a load balancer's config test; an out-of-range router id and an unknown keyword ------

@recipe("keepalived-config-test-errors", "keepalived", "service", ["keepalived", "--version"],
        needs=("keepalived",))
def _keepalived(root):
    """Write the `keepalived-config-test-errors` project under `root`; return its command and signals."""
    servers = "".join(f"virtual_server 10.0.0.10 {8000 + n} {{\n  delay_loop 6\n  lb_algo rr\n  lb_kind NAT\n"
                      f"  protocol TCP\n  real_server 10.0.1.{11 + n} {8000 + n} {{\n    weight 1\n"
                      f"    TCP_CHECK {{\n      connect_timeout 3\n    }}\n  }}\n}}\n" for n in range(12))
    write(root, "keepalived.conf", "global_defs {\n  router_id LB1\n}\n\nvrrp_instance VI_1 {\n  state MASTER\n"
          "  interface eth0\n  virtual_router_id 300\n  priority 100\n  advert_int 1\n  nopreempt_delay 30\n"
          "  virtual_ipaddress {\n    10.0.0.10/24\n  }\n}\n\n" + servers)
    return Run(["keepalived", "-t", "-l", "-f", "keepalived.conf"], [
        S("stderr", r"Line 8\) .*'300'", "the out-of-range router id"),
        S("stderr", r"Line 11\) Unknown keyword 'nopreempt_delay'", "the unknown keyword"),
        S("stderr", r"virtual router id must be set", "the instance left without one"),
    ], expect_exit=exits(5))


# --- bird -p: a BGP router's config parsed before a reload; an export filter that was never defined -----

@recipe("bird-parse-undefined-filter", "bird", "network", ["bird", "--version"], needs=("bird",))
def _bird(root):
    """Write the `bird-parse-undefined-filter` project under `root`; return its command and signals."""
    peers = "".join(f"protocol bgp peer{n} {{\n  local as 65001;\n  neighbor 10.0.{n}.2 as {65100 + n};\n"
                    f"  ipv4 {{ import filter from_peers; export filter {'to_upstream' if n == 5 else 'to_peers'}; }};\n}}\n\n"
                    for n in range(8))
    write(root, "bird.conf", "router id 10.0.0.1;\n\nfilter from_peers {\n  if net.len > 24 then reject;\n  accept;\n}\n\n"
          "filter to_peers {\n  if source = RTS_BGP then accept;\n  reject;\n}\n\nprotocol device {}\n\n"
          "protocol kernel {\n  ipv4 { export all; };\n}\n\n" + peers)
    return Run(["bird", "-p", "-c", "bird.conf"], [
        S("stderr", r"^bird: bird\.conf:\d+:\d+ syntax error, unexpected CF_SYM_UNDEFINED$", "the error and its place"),
    ], expect_exit=exits(1))


# --- join: customers joined to orders, but the orders were sorted numerically; 20,000 orders -------------

@recipe("join-orders-not-sorted", "join", "data", ["join", "--version"], needs=("join",))
def _join(root):
    """Write the `join-orders-not-sorted` project under `root`; return its command and signals."""
    customers = sorted(f"C{n}\tCustomer {n}\t{['north', 'south', 'east', 'west'][n % 4]}\n" for n in range(1, 2001))
    write(root, "customers.tsv", "".join(customers))
    orders = sorted(((n * 7919) % 2000 + 1, n) for n in range(20000))
    write(root, "orders.tsv", "".join(f"C{c}\tO{100000 + n}\t{(n * 37) % 500 + 0.99:.2f}\n" for c, n in orders))
    return Run(["join", "-t", "\t", "customers.tsv", "orders.tsv"], [
        S("stderr", r"^join: orders\.tsv:\d+: is not sorted: ", "where the orders file breaks the order join needs"),
        S("stderr", r"^join: input is not in sorted order$", "the verdict"),
    ], expect_exit=exits(1))


# --- cpio -itv: listing a nightly backup archive that was cut short in transfer ---------------------------

@recipe("cpio-list-truncated-backup", "cpio", "listing", ["cpio", "--version"], needs=("cpio",))
def _cpio(root):
    """Write the `cpio-list-truncated-backup` project under `root`; return its command and signals."""
    for n in range(4000):
        write(root, f"site/{['app', 'static', 'media', 'conf'][n % 4]}/part{n // 400:02d}/file_{n:04d}.dat",
              f"record {n}\n" * (n % 9 + 1))
    sh("find site -exec touch -h -d '2026-02-01 03:00:00' {} + && find site | sort | cpio -o -H newc --quiet "
       "> backup.cpio && head -c $(( $(stat -c %s backup.cpio) * 7 / 10 )) backup.cpio > part.cpio "
       "&& mv part.cpio backup.cpio", root)
    return Run(["cpio", "-itv", "-F", "backup.cpio"], [
        S("stderr", r"^cpio: premature end of (file|archive)$", "the archive ends early"),
    ], expect_exit=exits(2))


# --- 7z x: restoring a site backup stored uncompressed; one file's bytes were damaged ---------------------

@recipe("7z-extract-one-crc-failed", "7z", "system", ["sh", "-c", "7z | head -3 | tail -1"], needs=("7z",))
def _7z(root):
    """Write the `7z-extract-one-crc-failed` project under `root`; return its command and signals."""
    for n in range(1500):
        write(root, f"site/{['pages', 'assets', 'data'][n % 3]}/item_{n:04d}.txt",
              f"item {n} payload line\n" * (n % 13 + 2))
    sh("7z a -bd -m0=Copy -mtm=off site-backup.7z site > /dev/null", root)
    path = os.path.join(root, "site-backup.7z")
    with open(path, "r+b") as handle:
        data = bytearray(handle.read())
        at = data.index(b"item 1021 payload line") + 5
        data[at:at + 4] = b"7777"
        handle.seek(0)
        handle.write(data)
    return Run(["7z", "x", "-bb1", "-y", "-orestored", "site-backup.7z"], [
        S("stderr", r"^ERROR: CRC Failed : site/assets/item_1021\.txt$", "the damaged file among 1,500"),
        S("stdout", r"^Sub items Errors: 1$", "the error count, after the listing and again at the end"),
        S("stdout", r"^Archives with Errors: 1$", "the archive verdict"),
    ], expect_exit=exits(2))


# --- par2 verify: a data set with recovery files; one file damaged, one missing ---------------------------

@recipe("par2-verify-damaged-and-missing", "par2", "system", ["par2", "--version"], needs=("par2",))
def _par2(root):
    """Write the `par2-verify-damaged-and-missing` project under `root`; return its command and signals."""
    for n in range(300):
        write(root, f"data/chunk_{n:03d}.csv", "".join(f"{n},{k},{(n * k * 31) % 997}\n" for k in range(400)))
    sh("par2 create -q -q -r8 -n1 -s16384 recovery.par2 data/*.csv", root)
    path = os.path.join(root, "data", "chunk_137.csv")
    with open(path, "r+b") as handle:
        handle.seek(2000)
        handle.write(b"XXXXXXXX")
    os.remove(os.path.join(root, "data", "chunk_244.csv"))
    return Run(["par2", "verify", "recovery.par2"], [
        S("stdout", r'File: "data/chunk_137\.csv" - no data found\.$', "the damaged file, at the end of a progress line"),
        S("stdout", r'^Target: "data/chunk_244\.csv" - missing\.$', "the missing file"),
        S("stdout", r"^1 file\(s\) (are missing|exist but are damaged)\.$", "the counts"),
        S("stdout", r"^Repair is (required|possible)\.$", "the verdict"),
    ], expect_exit=exits(1))


# --- nsd-checkconf: an authoritative server's config with 40 zones; one zone names an unknown pattern ---

@recipe("nsd-checkconf-unknown-pattern", "nsd-checkconf", "service", ["sh", "-c", "nsd -v 2>&1 | head -1"],
        needs=("nsd-checkconf",))
def _nsd(root):
    """Write the `nsd-checkconf-unknown-pattern` project under `root`; return its command and signals."""
    zones = "".join(f"zone:\n  name: shop{n:02d}.example\n  zonefile: shop{n:02d}.example.zone\n"
                    f"  include-pattern: \"{'secondaries' if n != 27 else 'secondary'}\"\n\n" for n in range(40))
    write(root, "nsd.conf", "server:\n  ip-address: 127.0.0.1\n  port: 5353\n  zonesdir: \"zones\"\n\n"
          "pattern:\n  name: \"secondaries\"\n  notify: 10.0.0.2 NOKEY\n  provide-xfr: 10.0.0.2 NOKEY\n\n" + zones)
    return Run(["nsd-checkconf", "nsd.conf"], [
        S("stderr", r"^nsd\.conf:\d+: error: could not find pattern secondary$", "the unknown pattern and its place"),
        S("stderr", r"^read nsd\.conf failed: 1 errors in configuration file$", "the verdict"),
    ], expect_exit=exits(1, 2))


# --- fail2ban-regex: the stock sshd filter tried on a day of auth.log before enabling the jail ----------

def _auth_log() -> str:
    """A day of auth.log: sessions, cron and sudo lines, and failed password attempts from a few hosts."""
    lines = []
    for n in range(24000):
        stamp = f"Feb  {1 + n // 12000} {n // 1000 % 24:02d}:{n // 20 % 60:02d}:{n % 60:02d}"
        kind = n % 40
        if kind == 3:
            lines.append(f"{stamp} web1 sshd[{2000 + n}]: Failed password for invalid user admin{n % 9} from "
                         f"203.0.113.{n % 7 + 10} port {40000 + n % 20000} ssh2")
        elif kind < 20:
            lines.append(f"{stamp} web1 CRON[{3000 + n}]: pam_unix(cron:session): session opened for user root(uid=0) by (uid=0)")
        elif kind < 30:
            lines.append(f"{stamp} web1 sshd[{2000 + n}]: Accepted publickey for deploy from 10.0.0.{n % 5 + 2} "
                         f"port {50000 + n % 10000} ssh2: ED25519 SHA256:abc{n % 3}")
        else:
            lines.append(f"{stamp} web1 sudo:   deploy : TTY=pts/0 ; PWD=/srv/app ; USER=root ; COMMAND=/usr/bin/systemctl restart app{n % 4}")
    return "\n".join(lines) + "\n"


@recipe("fail2ban-regex-sshd-auth-log", "fail2ban-regex", "log", ["fail2ban-regex", "--version"],
        needs=("fail2ban-regex",))
def _fail2ban(root):
    """Write the `fail2ban-regex-sshd-auth-log` project under `root`; return its command and signals."""
    write(root, "auth.log", _auth_log())
    return Run(["fail2ban-regex", "auth.log", "/etc/fail2ban/filter.d/sshd.conf"], [
        S("stdout", r"^Failregex: \d+ total$", "how many lines the filter's failure patterns hit"),
        S("stdout", r"^Lines: 24000 lines, \d+ ignored, \d+ matched, \d+ missed", "the totals"),
    ], expect_exit=exits(0))


# --- xsltproc: a 3,000-product catalog rendered to a price list; one category's price file is missing -----

_PRICELIST_XSL = """\
<?xml version="1.0"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text"/>
  <xsl:template match="/catalog">
    <xsl:for-each select="category">
      <xsl:variable name="prices" select="document(concat('prices/', @id, '.xml'))/prices"/>
      <xsl:text>== </xsl:text><xsl:value-of select="@name"/><xsl:text> ==&#10;</xsl:text>
      <xsl:for-each select="product">
        <xsl:variable name="sku" select="@sku"/>
        <xsl:value-of select="concat(@sku, '  ', name, '  ', $prices/price[@sku = $sku], '&#10;')"/>
      </xsl:for-each>
    </xsl:for-each>
  </xsl:template>
</xsl:stylesheet>
"""


@recipe("xsltproc-price-list-missing-document", "xsltproc", "data", ["xsltproc", "--version"], needs=("xsltproc",))
def _xsltproc(root):
    """Write the `xsltproc-price-list-missing-document` project under `root`; return its command and signals."""
    names = ("garden", "kitchen", "tools", "toys", "books", "sports", "office", "audio", "lighting", "outdoor")
    cats = []
    for c, name in enumerate(names):
        products = "".join(f"    <product sku=\"{name[:3].upper()}-{n:04d}\"><name>{name.title()} item {n} "
                           f"with a longer descriptive title</name></product>\n" for n in range(300))
        cats.append(f"  <category id=\"{name}\" name=\"{name.title()}\">\n{products}  </category>\n")
        if name != "lighting":
            write(root, f"prices/{name}.xml", "<prices>\n" + "".join(
                f"  <price sku=\"{name[:3].upper()}-{n:04d}\">{(n * 13 + c) % 200 + 0.99:.2f}</price>\n"
                for n in range(300)) + "</prices>\n")
    write(root, "catalog.xml", "<?xml version=\"1.0\"?>\n<catalog>\n" + "".join(cats) + "</catalog>\n")
    write(root, "pricelist.xsl", _PRICELIST_XSL)
    return Run(["xsltproc", "pricelist.xsl", "catalog.xml"], [
        S("stderr", r"prices/lighting\.xml", "the price file that could not be loaded"),
    ], expect_exit=exits(0))


# --- cloc --by-file: line counts of a mixed-language service, every file listed, then the totals -----------

@recipe("cloc-by-file-service-totals", "cloc", "listing", ["cloc", "--version"], needs=("cloc",))
def _cloc(root):
    """Write the `cloc-by-file-service-totals` project under `root`; return its command and signals."""
    for n in range(160):
        body = "".join(f"def handler_{n}_{k}(request):\n    # handle case {k}\n    return {{'n': {n}, 'k': {k}}}\n\n"
                       for k in range(n % 12 + 2))
        write(root, f"service/api/handlers_{n:03d}.py", f'"""Handlers {n}."""\n\n' + body)
    for n in range(90):
        write(root, f"web/src/components/widget_{n:03d}.js", "".join(
            f"// widget {n} part {k}\nexport function part{k}(x) {{\n  return x * {k + n};\n}}\n\n" for k in range(n % 9 + 1)))
    for n in range(40):
        write(root, f"native/src/codec_{n:02d}.c", f"/* codec {n} */\nint codec_{n}(int v)\n{{\n    return v ^ {n};\n}}\n")
    for n in range(30):
        write(root, f"docs/page_{n:02d}.md", f"# Page {n}\n\nSome text about part {n}.\n\n" * (n % 4 + 1))
    return Run(["cloc", "--by-file", "--quiet", "."], [
        S("stdout", r"^SUM:", "the totals"),
    ], expect_exit=exits(0))


# --- zic: the company's own time-zone source for 60 offices; two bad fields, and the line after one misread ------------------

@recipe("zic-office-zones-errors", "zic", "data", ["sh", "-c", "dpkg-query -W -f '${Version}\\n' libc-bin"],
        needs=("zic",))
def _zic(root):
    """Write the `zic-office-zones-errors` project under `root`; return its command and signals."""
    rules = ("# Rules for the company's regions\nRule\tAcme\t2020\tmax\t-\tMar\tlastSun\t2:00\t1:00\tS\n"
             "Rule\tAcme\t2020\tmax\t-\tOct\tlastSun\t3:00\t0\t-\nRule\tBolt\t2021\tmax\t-\tApx\tSun>=1\t2:00\t1:00\tD\n"
             "Rule\tBolt\t2021\tmax\t-\tNov\tSun>=1\t2:00\t0\tS\n\n")
    zones = "".join(f"Zone\tOffice/Site{n:02d}\t{n % 12 - 5}:00\t{'Acme' if n % 2 else '-'}\t"
                    f"{'CE%sT' if n % 2 else f'UTC{n % 12 - 5:+d}'}\n" for n in range(60))
    write(root, "offices.tz", rules + zones.replace("Office/Site41\t0:00\tAcme\tCE%sT\n",
                                                    "Office/Site41\t0:00\tAcme\tCE%sT\t2024 Feb 30\n"))
    return Run(["zic", "-d", "zoneinfo", "offices.tz"], [
        S("stderr", r'^"offices\.tz", line \d+: ', "every error: the bad month, the bad day, and the site after it read as a continuation"),
    ], expect_exit=exits(1))
