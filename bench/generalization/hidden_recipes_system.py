"""Hidden recipes for services, VCS and packaging: haproxy, logrotate, visudo, named-checkzone,
named-checkconf, desktop-file-validate, chktex, cvs, rcs, fossil, supervisord.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from hidden_common import Run, S, exits, recipe, sh, vbin, write

HAPROXY = """global
    maxconn 4096

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s

frontend web
    bind :8080
    default_backend app
    use_backend api if { path_beg /api }

backend app
    balance roundrobin
    server app1 127.0.0.1:9001 check
    server app2 127.0.0.1:9002 chek

backend api
    server api1 127.0.0.1:9100 check
    http-request set-header X-Forwarded-Proto https if { ssl_fc }
    retries three
"""


@recipe("haproxy-check-config-errors", "haproxy", "service", ["haproxy", "-v"], needs=("haproxy",))
def _haproxy(root):
    """Write the `haproxy-check-config-errors` project under `root`; return its command and signals."""
    write(root, "haproxy.cfg", HAPROXY)
    return Run(["haproxy", "-c", "-f", "haproxy.cfg"], [
        S("stderr", r"^\[ALERT\] .*haproxy\.cfg:\d+\]", "each configuration error with its line"),
        S("stderr", r"^\[ALERT\] .*Error\(s\) found in configuration file : haproxy\.cfg$", "the error"),
        S("stderr", r"^\[ALERT\] .*Fatal errors found in configuration\.$", "the verdict"),
    ], expect_exit=exits(1))


def _logrotate_conf(n: int) -> str:
    """One service's logrotate stanza."""
    return (f"/tmp/yarp-gen/hidden/work/logrotate-debug-bad-stanza/logs/svc{n:02d}/*.log {{\n    daily\n"
            f"    rotate 7\n    compress\n    missingok\n    notifempty\n}}\n")


@recipe("logrotate-debug-bad-stanza", "logrotate", "service", ["logrotate", "--version"], needs=("logrotate",))
def _logrotate(root):
    """Write the `logrotate-debug-bad-stanza` project under `root`; return its command and signals."""
    for n in range(30):
        write(root, f"conf.d/svc{n:02d}", _logrotate_conf(n))
        write(root, f"logs/svc{n:02d}/app.log", "line\n" * 50)
    write(root, "conf.d/svc17", _logrotate_conf(17).replace("    daily\n", "    daily\n    rotat 7\n"))
    write(root, "logrotate.conf", f"include {root}/conf.d\n")
    return Run(["logrotate", "-d", "-s", "state", "logrotate.conf"], [
        S("stderr", r"^error: svc17:3 unknown option 'rotat' -- ignoring line$", "the error and its place"),
    ], expect_exit=exits(0, 1))


@recipe("visudo-check-syntax-error", "visudo", "service", ["visudo", "--version"], needs=("visudo",))
def _visudo(root):
    """Write the `visudo-check-syntax-error` project under `root`; return its command and signals."""
    aliases = "".join(f"User_Alias TEAM{n} = user{n}a, user{n}b\n" for n in range(20))
    write(root, "sudoers", "Defaults env_reset\n" + aliases + "root ALL=(ALL:ALL) ALL\n"
          "TEAM3 ALL=(ALL) NOPASSWD /usr/bin/systemctl restart app\n%admin ALL=(ALL) ALL\n")
    return Run(["visudo", "-c", "-f", "sudoers"], [
        S("stderr", r"^sudoers:23:56: syntax error$", "the error and its place"),
    ], expect_exit=exits(1))


ZONE_HEAD = """$TTL 3600
@   IN SOA ns1.example.test. admin.example.test. (2024050101 7200 900 1209600 300)
    IN NS  ns1.example.test.
ns1 IN A   192.0.2.1
"""


@recipe("named-checkzone-bad-records", "named-checkzone", "service", ["named-checkzone", "-v"],
        needs=("named-checkzone",))
def _named_checkzone(root):
    """Write the `named-checkzone-bad-records` project under `root`; return its command and signals."""
    hosts = "".join(f"host{n:03d} IN A 192.0.2.{n % 250 + 2}\n" for n in range(300))
    write(root, "example.test.zone", ZONE_HEAD + hosts + "www IN CNAME host001\nwww IN A 192.0.2.9\n"
          "mail IN A 192.0.2.300\n")
    return Run(["named-checkzone", "example.test", "example.test.zone"], [
        S("stdout", r"example\.test\.zone:\d+: (bad dotted quad|.*CNAME and other data)", "each error with its line"),
        S("stdout", r"^zone example\.test/IN: (loading from master file example\.test\.zone failed|not loaded due to errors)",
          "the verdict"),
    ], expect_exit=exits(1))


@recipe("desktop-file-validate-entries", "desktop-file-validate", "linter", ["dpkg-query", "-W", "-f=${Version}",
        "desktop-file-utils"], needs=("desktop-file-validate",))
def _desktop(root):
    """Write the `desktop-file-validate-entries` project under `root`; return its command and signals."""
    write(root, "viewer.desktop", "[Desktop Entry]\nType=Application\nName=Viewer\nExec=viewer %f\n"
          "Categories=Graphics;\nMimeType=image/png\n")
    write(root, "editor.desktop", "[Desktop Entry]\nType=Aplication\nName=Editor\nExec=editor\n"
          "Icon=editor.png\nCategories=Development;TextEditor;\n")
    return Run(["desktop-file-validate", "viewer.desktop", "editor.desktop"], [
        S("stdout", r"^editor\.desktop: error: ", "the error"),
    ], expect_exit=exits(1))


def _tex_section(n: int) -> str:
    """A LaTeX section with the spacing slips chktex warns about."""
    return (f"\\section{{Part {n}}}\nThis is part {n} ,see the table.\nAs shown in Fig. \\ref{{fig{n}}} the "
            f"results hold (roughly) .\n\n")


@recipe("chktex-thesis-warnings", "chktex", "linter", ["chktex", "--version"], needs=("chktex",))
def _chktex(root):
    """Write the `chktex-thesis-warnings` project under `root`; return its command and signals."""
    body = "".join(_tex_section(n) for n in range(60))
    write(root, "thesis.tex", "\\documentclass{article}\n\\begin{document}\n" + body
          + "\\begin{itemize}\n\\item one\n\\end{enumerate}\n\\end{document}\n")
    return Run(["chktex", "thesis.tex"], [
        S("stdout", r"^Warning 9 in thesis\.tex line \d+: `itemize' expected, found `enumerate'\.$",
          "the one mismatched environment among 240 spacing warnings"),
        S("stderr", r"^No errors printed; \d+ warnings printed;", "the summary"),
    ], expect_exit=exits(0, 1, 2, 3))


@recipe("cvs-update-conflict", "cvs", "vcs", ["cvs", "--version"], needs=("cvs",))
def _cvs(root):
    """Write the `cvs-update-conflict` project under `root`; return its command and signals."""
    repo = os.path.join(root, "cvsroot")
    env = {"CVSROOT": repo}
    sh(["cvs", "-Q", "init"], root, env=env)
    for n in range(900):
        write(root, f"import/src/part{n:03d}.c", f"int part{n}(void) {{ return {n}; }}\n")
    write(root, "import/Makefile", "CFLAGS = -O2\n")
    sh(["cvs", "-Q", "import", "-m", "Import", "shop", "vendor", "start"], os.path.join(root, "import"), env=env)
    sh(["cvs", "-Q", "checkout", "-d", "wc", "shop"], root, env=env)
    sh(["cvs", "-Q", "checkout", "-d", "other", "shop"], root, env=env)
    for n in range(900):
        write(root, f"other/src/part{n:03d}.c", f"int part{n}(void) {{ return {n} + 1; }}\n")
    write(root, "other/Makefile", "CFLAGS = -O3\n")
    sh(["cvs", "-Q", "commit", "-m", "Bump"], os.path.join(root, "other"), env=env)
    write(root, "wc/Makefile", "CFLAGS = -g\n")
    return Run(["cvs", "update"], [
        S("stderr", r"^rcsmerge: warning: conflicts during merge$", "the merge warning"),
        S("stderr", r"^cvs update: conflicts found in Makefile$", "the conflicted file"),
        S("stdout", r"^C Makefile$", "its status line among 900 updates"),
    ], cwd="wc", env=env, expect_exit=exits(0, 1))


@recipe("rcs-checkin-locked", "rcs", "vcs", ["rcs", "--version"], needs=("ci", "co"))
def _rcs(root):
    """Write the `rcs-checkin-locked` project under `root`; return its command and signals."""
    write(root, "hosts.conf", "web 10.0.0.1\n")
    sh(["ci", "-q", "-u", "-t-hosts", "hosts.conf"], root)
    write(root, "hosts.conf", "web 10.0.0.2\n", mode=0o644)
    return Run(["ci", "-m'Move web'", "hosts.conf"], [
        S("stderr", r"^ci: hosts\.conf,v: no lock set by ", "the error"),
    ], expect_exit=exits(1))


@recipe("fossil-merge-conflict", "fossil", "vcs", ["fossil", "version"], needs=("fossil",))
def _fossil(root):
    """Write the `fossil-merge-conflict` project under `root`; return its command and signals."""
    env = {"USER": "dev"}
    sh(["fossil", "init", "-A", "dev", "shop.fossil"], root, env=env)
    os.makedirs(os.path.join(root, "wc"))
    wc = os.path.join(root, "wc")
    sh(["fossil", "open", "-f", "../shop.fossil"], wc, env=env)
    for n in range(12):
        write(wc, f"lib/m{n}.py", f"VALUE = {n}\n")
    write(wc, "settings.ini", "[app]\nport = 80\n")
    sh("fossil add . && fossil commit -m Import --no-warnings", wc, env=env)
    sh(["fossil", "branch", "new", "tuning", "trunk"], wc, env=env)
    sh(["fossil", "update", "tuning"], wc, env=env)
    write(wc, "settings.ini", "[app]\nport = 8080\n")
    write(wc, "lib/m3.py", "VALUE = 33\n")
    sh(["fossil", "commit", "-m", "Tune", "--no-warnings"], wc, env=env)
    sh(["fossil", "update", "trunk"], wc, env=env)
    write(wc, "settings.ini", "[app]\nport = 443\n")
    sh(["fossil", "commit", "-m", "TLS port", "--no-warnings"], wc, env=env)
    return Run(["fossil", "merge", "tuning"], [
        S("stdout", r"^\*\*\*\*\* 1 merge conflicts? in settings\.ini$", "the conflicted file"),
        S("stderr", r"^WARNING: 1 merge conflicts$", "the count"),
    ], cwd="wc", env=env, expect_exit=exits(0, 1))


@recipe("supervisord-program-fatal", "supervisord", "log", [vbin("supervisord"), "--version"], needs=("supervisord",))
def _supervisord(root):
    """Write the `supervisord-program-fatal` project under `root`; return its command and signals."""
    write(root, "worker.sh", "#!/bin/sh\necho working\nsleep 30\n", mode=0o755)
    write(root, "mailer.sh", "#!/bin/sh\necho 'cannot connect to smtp' >&2\nexit 3\n", mode=0o755)
    programs = "".join(f"[program:worker{n}]\ncommand={root}/worker.sh\nstartsecs=0\n\n" for n in range(6))
    write(root, "supervisord.conf", f"[supervisord]\nnodaemon=true\nlogfile=/dev/null\n"
          f"pidfile={root}/supervisord.pid\nloglevel=info\n\n" + programs
          + f"[program:mailer]\ncommand={root}/mailer.sh\nstartsecs=1\nstartretries=3\n")
    return Run(["supervisord", "-c", "supervisord.conf"], [
        S("stdout", r"INFO gave up: mailer entered FATAL state, too many start retries too quickly$", "the failure"),
        S("stdout", r"WARN exited: mailer \(exit status 3; not expected\)$", "why, each retry"),
    ], command=f"timeout -s INT 8 {vbin('supervisord')} -c supervisord.conf", expect_exit=exits(0, 124, 130))
