"""Mantled recipes for VCS operations, service config checks, system, storage, network-config and data tools,
listings and logs: git-revise, pdnsutil, vtysh, apparmor_parser, cupsd, fsck.exfat, jsonnet, pngcheck,
mtree, PSPP, GoAccess, TopGit's tg.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import struct
import zlib

from mantled_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "git-revise": "0.7.0-1", "pdns-server": "4.7.3-2", "pdns-backend-bind": "4.7.3-2", "frr": "8.4.4-1.1~deb12u2",
    "apparmor": "3.0.8-3", "cups-daemon": "2.4.2-3+deb12u11", "exfatprogs": "1.2.0-1+deb12u1",
    "jsonnet": "0.18.0+ds-3+b2", "pngcheck": "3.0.3-1", "mtree-netbsd": "20180822-7", "pspp": "1.6.2-2",
    "goaccess": "1:1.7-1",
}

def _git(root: str, *args: str) -> None:
    """Run one git command in `root` with a fixed identity and dates."""
    sh(["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.org", *args], root,
       env={"GIT_AUTHOR_DATE": "2026-03-01T10:00:00Z", "GIT_COMMITTER_DATE": "2026-03-01T10:00:00Z"})


# --- git revise: a staged fix folded into an older commit; a later commit changed the same lines ------------

def _settings(timeout: int, retries: int, pool: int) -> str:
    """The service's settings module at one point of its history."""
    keys = "".join(f"FEATURE_{k:02d} = {k % 2 == 0}\n" for k in range(30))
    return f"TIMEOUT = {timeout}\nRETRIES = {retries}\nPOOL_SIZE = {pool}\n\n{keys}"


@recipe("git-revise-staged-fix-conflict", "git-revise", "vcs", ["git-revise", "--version"], needs=("git-revise", "git"))
def _git_revise(root):
    """Write the `git-revise-staged-fix-conflict` project under `root`; return its command and signals."""
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.name", "Dev")
    _git(root, "config", "user.email", "dev@example.org")
    write(root, "settings.py", _settings(10, 3, 4))
    write(root, "README.md", "# billing service\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Settings for the billing service")
    for n, (timeout, retries, pool) in enumerate([(10, 5, 4), (15, 5, 8), (15, 5, 16)]):
        write(root, "settings.py", _settings(timeout, retries, pool))
        write(root, f"docs/change_{n}.md", f"change {n}\n")
        _git(root, "add", ".")
        _git(root, "commit", "-q", "-m", f"Tune the pool, step {n}")
    write(root, "settings.py", _settings(10, 5, 6))
    _git(root, "add", "settings.py")
    return Run(["git", "revise", "HEAD~2"], [
        S("stdout", r"^Conflict applying '<git index>'$", "the conflict"),
        S("stdout", r"^\s+Path: '/settings\.py'$", "the conflicted file"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the start of the trace: it could not ask"),
        S("stderr", r"^EOFError: EOF when reading a line$", "the exception that ended it"),
    ], expect_exit=exits(1), env={"GIT_EDITOR": "true"})


# --- pdnsutil check-all-zones: a hoster's 4,000 zones on the bind backend; one has a CNAME beside other data -

def _zone(n: int) -> str:
    """One customer zone; zone 2,718 also has an A record at the name its CNAME is at."""
    extra = f"www IN A 192.0.2.{n % 250 + 1}\n" if n == 2718 else ""
    return (f"$ORIGIN customer{n:04d}.example.\n$TTL 3600\n@ IN SOA ns1.hoster.example. hostmaster.hoster.example. "
            f"2026030101 7200 900 1209600 300\n@ IN NS ns1.hoster.example.\n@ IN NS ns2.hoster.example.\n"
            f"@ IN A 198.51.100.{n % 250 + 1}\nwww IN CNAME @\n{extra}mail IN A 203.0.113.{n % 250 + 1}\n@ IN MX 10 mail\n"
            f"@ IN TXT \"v=spf1 mx -all\"\n")


@recipe("pdnsutil-check-all-zones-cname-and-other-data", "pdnsutil", "config-check", ["pdns_server", "--version"],
        needs=("pdnsutil",))
def _pdnsutil(root):
    """Write the `pdnsutil-check-all-zones-cname-and-other-data` project under `root`; return its command and signals."""
    conf = []
    for n in range(4000):
        write(root, f"zones/customer{n:04d}.example.zone", _zone(n))
        conf.append(f"zone \"customer{n:04d}.example\" {{ type master; file \"{root}/zones/customer{n:04d}.example.zone\"; }};\n")
    write(root, "named.conf", "".join(conf))
    write(root, "pdns.conf", f"launch=bind\nbind-config={root}/named.conf\nbind-check-interval=0\n")
    return Run(["pdnsutil", "--config-dir=.", "check-all-zones"], [
        S("stdout", r"^\[Error\] CNAME www\.customer2718\.example found, but other records with same label exist\.$", "the error"),
        S("stdout", r"^Checked 9 records of 'customer2718\.example', 1 errors, 0 warnings\.$", "the zone it is in"),
        S("stdout", r"^Checked 4000 zones, 1 had errors\.$", "the totals"),
    ], expect_exit=exits(1))


# --- vtysh --dryrun: an edge router's FRR config, 300 BGP neighbours and prefix lists; one line is mistyped -

@recipe("vtysh-dryrun-bgp-config-unknown-command", "vtysh", "network-config", ["dpkg-query", "-W", "-f=${Version}", "frr"], needs=("vtysh",))
def _vtysh(root):
    """Write the `vtysh-dryrun-bgp-config-unknown-command` project under `root`; return its command and signals."""
    lines = ["frr version 8.4.4\nfrr defaults traditional\nhostname edge1\nlog syslog informational\n!\n"]
    for n in range(60):
        lines.append(f"ip prefix-list CUST-{n:02d} seq 5 permit 10.{n}.0.0/16 le 24\n")
    lines.append("!\nrouter bgp 64500\n bgp router-id 192.0.2.1\n")
    for n in range(300):
        peer = f"172.16.{n // 250}.{n % 250 + 1}"
        lines.append(f" neighbor {peer} remote-as {65000 + n}\n neighbor {peer} description customer-{n:03d}\n")
    lines.append(" !\n address-family ipv4 unicast\n")
    for n in range(300):
        peer = f"172.16.{n // 250}.{n % 250 + 1}"
        verb = "prefix-lst" if n == 211 else "prefix-list"
        lines.append(f"  neighbor {peer} {verb} CUST-{n % 60:02d} in\n  neighbor {peer} soft-reconfiguration inbound\n")
    lines.append(" exit-address-family\nexit\n!\nline vty\n!\n")
    write(root, "frr.conf", "".join(lines))
    return Run(["vtysh", "--dryrun", "-f", "frr.conf"], [
        S("stderr", r"^line \d+: % Unknown command\[\d+\]:\s+neighbor 172\.16\.0\.212 prefix-lst CUST-31 in$",
          "the rejected line and its number"),
    ], expect_exit=exits(2))


# --- apparmor_parser -Q -K: a fleet's 160 service profiles compiled before shipping; one rule lacks a comma --

def _profile(n: int) -> str:
    """One service profile; profile 27's network rule is missing its trailing comma."""
    comma = "" if n == 27 else ","
    return (f"#include <tunables/global>\n\nprofile svc{n:03d} /usr/local/bin/svc{n:03d} {{\n  #include <abstractions/base>\n"
            f"  /usr/local/bin/svc{n:03d} mr,\n  /etc/svc{n:03d}/** r,\n  /var/lib/svc{n:03d}/** rw,\n"
            f"  /var/log/svc{n:03d}.log w,\n  network inet stream{comma}\n  capability net_bind_service,\n}}\n")


@recipe("apparmor-parser-profiles-missing-comma", "apparmor_parser", "config-check", ["apparmor_parser", "--version"],
        needs=("apparmor_parser",))
def _apparmor(root):
    """Write the `apparmor-parser-profiles-missing-comma` project under `root`; return its command and signals."""
    for n in range(160):
        write(root, f"profiles/usr.local.bin.svc{n:03d}", _profile(n))
    return Run(["apparmor_parser", "-Q", "-K", "profiles/*"], [
        S("stderr", r"^AppArmor parser error for profiles/usr\.local\.bin\.svc027 in profile .* at line 10: syntax error",
          "the error, its profile and line"),
    ], expect_exit=exits(1),
               command="rc=0; for p in profiles/*; do apparmor_parser -Q -K -I /etc/apparmor.d $p || rc=$?; done; exit $rc")


# --- cupsd -t: a print server's config checked after an edit; one Location block is not closed ------------

@recipe("cupsd-config-test-unclosed-location", "cupsd", "config-check", ["dpkg-query", "-W", "-f=${Version}", "cups-daemon"],
        needs=("cupsd",))
def _cupsd(root):
    """Write the `cupsd-config-test-unclosed-location` project under `root`; return its command and signals."""
    blocks = []
    for n in range(12):
        close = "" if n == 8 else "</Location>\n"
        blocks.append(f"<Location /printers/floor{n}>\n  Order allow,deny\n  Allow from 10.{n}.0.0/16\n{close}")
    write(root, "cupsd.conf", f"LogLevel warn\nListen 127.0.0.1:18931\nServerRoot {root}\nBrowsing Off\n"
          "DefaultAuthType Basic\n<Location />\n  Order allow,deny\n  Allow localhost\n</Location>\n" + "".join(blocks)
          + "<Policy default>\n  <Limit All>\n    Order deny,allow\n  </Limit>\n</Policy>\n")
    write(root, "cups-files.conf", f"ServerRoot {root}\nErrorLog stderr\nAccessLog stderr\nPageLog stderr\n")
    return Run(["cupsd", "-t", "-c", f"{root}/cupsd.conf", "-s", f"{root}/cups-files.conf"], [
        S("stderr", r"^Unknown Location directive <Location on line \d+ of .*/cupsd\.conf\.$", "the error and its line"),
        S("stdout", r"cupsd\.conf\" contains errors\.$", "the verdict"),
    ], expect_exit=exits(1))


# --- fsck.exfat -n: a camera card's image copied off before repair; its boot checksum sector was overwritten

@recipe("fsck-exfat-boot-checksum-corrupted", "fsck.exfat", "storage", ["fsck.exfat", "-V"], needs=("fsck.exfat", "mkfs.exfat"))
def _fsck_exfat(root):
    """Write the `fsck-exfat-boot-checksum-corrupted` project under `root`; return its command and signals."""
    sh(["truncate", "-s", "64M", "card.img"], root)
    sh(["mkfs.exfat", "-L", "CAMERA", "card.img"], root)
    with open(f"{root}/card.img", "r+b") as image:
        image.seek(11 * 512 + 16)
        image.write(b"\x00CAMERA-FW-2.1\x00\x00")
    return Run(["fsck.exfat", "-n", "-v", "card.img"], [
        S("stdout", r"^boot region is corrupted\. try to restore the region from backup\.", "the verdict"),
        S("stderr", r"^checksum of boot region is not correct\. 0x[0-9a-f]+, but expected 0x[0-9a-f]+$", "what is wrong"),
    ], expect_exit=exits(4))


# --- jsonnet: a deployment's 30 service definitions rendered; one service reads a field its base lacks ------

_BASE_LIBSONNET = """\
{
  service(name, port, replicas=2):: {
    name: name,
    port: port,
    replicas: replicas,
    resources: { cpu: '250m', memory: '256Mi' },
    probes: { path: '/healthz', period: 10 },
  },
}
"""


@recipe("jsonnet-render-field-does-not-exist", "jsonnet", "data", ["jsonnet", "--version"], needs=("jsonnet",))
def _jsonnet(root):
    """Write the `jsonnet-render-field-does-not-exist` project under `root`; return its command and signals."""
    write(root, "lib/base.libsonnet", _BASE_LIBSONNET)
    imports = []
    for n in range(30):
        limit = "svc.limits.memory" if n == 22 else "svc.resources.memory"
        write(root, f"services/svc{n:02d}.jsonnet", f"local base = import '../lib/base.libsonnet';\n"
              f"local svc = base.service('svc{n:02d}', {8000 + n}, {1 + n % 3});\n"
              f"svc {{ env: {{ MEMORY_LIMIT: {limit}, PORT: std.toString(svc.port) }} }}\n")
        imports.append(f"  'svc{n:02d}': import 'services/svc{n:02d}.jsonnet',\n")
    write(root, "deploy.jsonnet", "{\n" + "".join(imports) + "}\n")
    return Run(["jsonnet", "deploy.jsonnet"], [
        S("stderr", r"^RUNTIME ERROR: field does not exist: limits$", "the error"),
        S("stderr", r"^\s+services/svc22\.jsonnet:3:28-38\s", "where: the service's own line"),
        S("stderr", r"^\s+deploy\.jsonnet:\d+:\d+-\d+\s", "the importing line"),
    ], expect_exit=exits(1))


# --- pngcheck: a theme's 4,000 icons checked before release; one icon's image data has a bad CRC ------------

def _png(n: int) -> bytes:
    """One 16x16 RGBA icon; icon 3,141's IDAT chunk carries a wrong CRC."""
    def chunk(kind: bytes, data: bytes, bad: bool = False) -> bytes:
        crc = zlib.crc32(kind + data) ^ (0x5A5A if bad else 0)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
    rows = b"".join(b"\x00" + bytes((x * 16 + n) % 256 if c < 3 else 255 for x in range(16) for c in range(4))
                    for _ in range(16))
    header = struct.pack(">IIBBBBB", 16, 16, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9), bad=n == 3141)
            + chunk(b"IEND", b""))


@recipe("pngcheck-icons-one-crc-error", "pngcheck", "data", ["pngcheck", "-h"], needs=("pngcheck",))
def _pngcheck(root):
    """Write the `pngcheck-icons-one-crc-error` project under `root`; return its command and signals."""
    for n in range(4000):
        path = f"{root}/icons/{['actions', 'apps', 'devices', 'places'][n % 4]}/icon-{n:04d}.png"
        write(root, path[len(root) + 1:], "")
        with open(path, "wb") as handle:
            handle.write(_png(n))
    return Run(["pngcheck", "icons/*/*.png"], [
        S("stdout", r"^icons/apps/icon-3141\.png\s+CRC error in chunk IDAT", "the error and its file"),
        S("stdout", r"^ERROR: icons/apps/icon-3141\.png$", "the failed file among 4,000"),
        S("stdout", r"^Errors were detected in 1 of the 4000 files tested\.$", "the totals"),
    ], expect_exit=exits(2), command="pngcheck icons/*/*.png")


# --- mtree -f: a release tree verified against its recorded spec; two files changed, one gone, one added ---

@recipe("mtree-verify-release-tree-changes", "mtree", "listing", ["dpkg-query", "-W", "-f=${Version}", "mtree-netbsd"],
        needs=("mtree",))
def _mtree(root):
    """Write the `mtree-verify-release-tree-changes` project under `root`; return its command and signals."""
    for n in range(1500):
        write(root, f"release/{['bin', 'lib', 'share/doc', 'share/locale', 'etc'][n % 5]}/file-{n:04d}",
              f"content of file {n}\n" * (n % 9 + 1))
    sh("mtree -c -K sha256digest -p release > release.mtree", root)
    sh("sed -i -e 's/ time=[0-9.]*//' release.mtree", root)
    write(root, "release/lib/file-0711", "content of file 711, patched by hand\n")
    write(root, "release/etc/file-1004", "content of file 1004\n" * 6)
    sh(["rm", "release/share/doc/file-0902"], root)
    write(root, "release/bin/debug-shell", "#!/bin/sh\nexec /bin/sh\n")
    return Run(["mtree", "-f", "release.mtree", "-p", "release"], [
        S("stdout", r"^lib/file-0711:\s*$", "the changed file"),
        S("stdout", r"^\s+size \(20, 37\)$", "how it changed"),
        S("stdout", r"^extra: bin/debug-shell$", "the file that should not be there"),
        S("stdout", r"^missing: \./share/doc/file-0902$", "the file that is gone"),
    ], expect_exit=exits(2))


# --- pspp: a survey analysis lists its 7,000 cases, then a regression names a variable that is not there ---

@recipe("pspp-survey-list-then-unknown-variable", "pspp", "data", ["pspp", "--version"], needs=("pspp",))
def _pspp(root):
    """Write the `pspp-survey-list-then-unknown-variable` project under `root`; return its command and signals."""
    rows = "".join(f"{n},{18 + n % 60},{(n * 7) % 5 + 1},{20000 + (n * 7919) % 80000},{(n * 13) % 10 + 1}\n"
                   for n in range(1, 7001))
    write(root, "survey.csv", "id,age,region,income,satisfaction\n" + rows)
    write(root, "analysis.sps", "GET DATA /TYPE=TXT /FILE='survey.csv' /DELCASE=LINE /DELIMITERS=','\n"
          "  /ARRANGEMENT=DELIMITED /FIRSTCASE=2\n  /VARIABLES=id F5.0 age F3.0 region F1.0 income F6.0 satisfaction F2.0.\n"
          "LIST.\nDESCRIPTIVES /VARIABLES=age income satisfaction.\n"
          "REGRESSION /VARIABLES=age income satisfacton /DEPENDENT=satisfacton /METHOD=ENTER.\n"
          "FREQUENCIES /VARIABLES=region.\n")
    return Run(["pspp", "analysis.sps"], [
        S("stdout", r"^analysis\.sps:6\.\d+-6\.\d+: error: REGRESSION: Syntax error at .satisfacton'\.$", "the error and its place"),
    ], expect_exit=exits(1))


# --- goaccess -o csv: a day of an API's access log summarised; three requests failed with a 500 ------------

@recipe("goaccess-access-log-csv-three-500s", "goaccess", "log", ["goaccess", "--version"], needs=("goaccess",))
def _goaccess(root):
    """Write the `goaccess-access-log-csv-three-500s` project under `root`; return its command and signals."""
    lines = []
    for n in range(24000):
        status = 500 if n in (7311, 7312, 19020) else (404 if n % 997 == 0 else 200)
        path = f"/api/orders/{n % 313}" if n % 3 else f"/api/items/{n % 97}?page={n % 5}"
        lines.append(f"10.{n % 3}.{n % 7}.{n % 250} - - [01/Mar/2026:{n // 1000:02d}:{n // 17 % 60:02d}:{n % 60:02d} +0000] "
                     f"\"GET {path} HTTP/1.1\" {status} {500 + (n * 37) % 3000} \"-\" \"client/{n % 4}.0\"\n")
    write(root, "access.log", "".join(lines))
    return Run(["goaccess", "access.log", "--log-format=COMBINED", "-o", "csv"], [
        S("stdout", r"\"total_requests\"\r?$", "the request count"),
        S("stdout", r"\"5xx Server Errors\"\r?$", "the rare failed requests"),
        S("stdout", r"\"500 - Internal Server Error\"\r?$", "their status"),
    ], expect_exit=exits(0))


# --- tg update: a release topic over 24 TopGit topic branches; upstream rewrote a function one topic changes

def _module(n: int, body: str) -> str:
    """One module of the codebase with a body line that topics and upstream change."""
    return f"/* module {n} */\n#include \"mod.h\"\n\nint mod_{n:02d}_limit(void)\n{{\n    {body}\n}}\n"


@recipe("tg-update-release-topic-conflict", "tg", "vcs", ["dpkg-query", "-W", "-f=${Version}", "topgit"], needs=("tg", "git"))
def _topgit(root):
    """Write the `tg-update-release-topic-conflict` project under `root`; return its command and signals."""
    _git(root, "init", "-q", "-b", "master")
    _git(root, "config", "user.name", "Dev")
    _git(root, "config", "user.email", "dev@example.org")
    for n in range(24):
        write(root, f"src/mod_{n:02d}.c", _module(n, f"return {n * 10};"))
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Upstream 1.0")
    for n in range(24):
        sh(["tg", "create", f"t/feature-{n:02d}", "master"], root)
        write(root, ".topmsg", f"From: Dev <dev@example.org>\nSubject: [PATCH] raise the limit of module {n}\n")
        write(root, f"src/mod_{n:02d}.c", _module(n, f"return {n * 10 + 5}; /* raised for the 2.0 load */"))
        _git(root, "add", ".")
        _git(root, "commit", "-q", "-m", f"Raise the limit of module {n}")
    sh(["tg", "create", "t/release", *[f"t/feature-{n:02d}" for n in range(24)]], root)
    write(root, ".topmsg", "From: Dev <dev@example.org>\nSubject: [PATCH] release 2.0\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Release 2.0 topic")
    _git(root, "checkout", "-q", "master")
    for n in (3, 17):
        write(root, f"src/mod_{n:02d}.c", _module(n, f"return limit_from_config({n});" if n == 17 else f"return {n * 10};"))
    write(root, "src/config.c", "int limit_from_config(int module) { return module * 12; }\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Upstream 1.1: limits come from the configuration")
    _git(root, "checkout", "-q", "t/release")
    return Run(["tg", "update"], [
        S("stdout", r"^tg: Updating base with t/feature-00 changes\.\.\.$", "the step that conflicted"),
        S("stdout", r"^CONFLICT \(content\): Merge conflict in src/mod_17\.c$", "the conflict"),
        S("stdout", r"^Automatic merge failed; fix conflicts and then commit the result\.$", "the merge's outcome"),
        S("stdout", r"^tg: Please commit merge resolution and call .git checkout t/release && tg update. again\.$",
          "what to do next"),
    ], expect_exit=exits(2))


# --- cupsd -f: a print server started in the foreground with debug logging; one printer lost its device URI

@recipe("cupsd-foreground-debug-log-printers-syntax-error", "cupsd", "log",
        ["dpkg-query", "-W", "-f=${Version}", "cups-daemon"], needs=("cupsd", "timeout"))
def _cupsd_log(root):
    """Write the `cupsd-foreground-debug-log-printers-syntax-error` project under `root`; return its command and signals."""
    for sub in ("ppd", "cache", "run", "spool"):
        sh(["mkdir", "-p", sub], root)
    write(root, "cupsd.conf", "LogLevel debug\nListen 127.0.0.1:18937\nBrowsing Off\n<Location />\n  Order allow,deny\n"
          "  Allow localhost\n</Location>\n")
    write(root, "cups-files.conf", f"ServerRoot {root}\nErrorLog stderr\nAccessLog stderr\nPageLog stderr\n"
          f"CacheDir {root}/cache\nStateDir {root}/run\nRequestRoot {root}/spool\nTempDir {root}/spool\n"
          "User nobody\nGroup nogroup\n")
    printers = []
    for n in range(150):
        uri = "DeviceURI" if n == 97 else f"DeviceURI socket://10.20.0.{n + 1}:9100"
        printers.append(f"<Printer floor{n // 10}-p{n:03d}>\nInfo Printer {n} on floor {n // 10}\n{uri}\nState Idle\n"
                        f"Accepting Yes\nShared No\n</Printer>\n")
    write(root, "printers.conf", "".join(printers))
    sh(["chmod", "-R", "a+rwX", "."], root)
    return Run(["timeout", "-s", "TERM", "5", "cupsd", "-f", "-c", f"{root}/cupsd.conf", "-s", f"{root}/cups-files.conf"],
               [S("stderr", r"^E \[[^]]+\] Syntax error on line 682 of printers\.conf\.$", "the error and its line"),
                S("stderr", r"^D \[[^]]+\] Loading printer floor9-p097\.\.\.$", "the printer it was loading"),
                S("stderr", r"^E \[[^]]+\] cupsdLoadBanners: Unable to open banner directory", "the other error"),
                S("stderr", r"^I \[[^]]+\] Scheduler shutting down normally\.$", "how the run ended")],
               expect_exit=exits(124), timeout=60)
