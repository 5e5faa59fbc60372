"""Sealed recipes for VCS, services, data, listings and packaging: subversion, git revert and submodule,
xmlstarlet, yq, getfacl, redis-server, postgres, lintian, gem, shfmt, a verbose dune build.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from generate_native import Repo, git_env
from sealed_common import Run, S, as_nobody, exits, recipe, sh, write

GIT = ["git", "--version"]
WHEN = "2024-05-01T10:00:00Z"


def _svn_repo(root: str) -> None:
    """A file:// repository of 4,000 files, two working copies; the other commits to every file and to
    one line the first copy changed too."""
    sh(["svnadmin", "create", "repo"], root)
    url = f"file://{root}/repo"
    sh(["svn", "checkout", "-q", url, "wc"], root)
    for d in range(40):
        for f in range(100):
            write(root, f"wc/data/part{d:02d}/item{f:03d}.txt", f"item {d}-{f}\nprice 1.00\n")
    write(root, "wc/config/settings.ini", "[server]\nport = 8080\n")
    sh(["svn", "add", "-q", "data", "config"], os.path.join(root, "wc"))
    sh(["svn", "commit", "-q", "-m", "Import catalogue"], os.path.join(root, "wc"))
    sh(["svn", "checkout", "-q", url, "other"], root)
    for d in range(40):
        for f in range(100):
            write(root, f"other/data/part{d:02d}/item{f:03d}.txt", f"item {d}-{f}\nprice 1.10\n")
    write(root, "other/config/settings.ini", "[server]\nport = 9090\n")
    sh(["svn", "commit", "-q", "-m", "Raise prices; move port"], os.path.join(root, "other"))
    write(root, "wc/config/settings.ini", "[server]\nport = 8443\n")


@recipe("svn-update-conflict", "svn", "vcs", ["svn", "--version", "--quiet"], needs=("svn", "svnadmin"))
def _svn(root):
    """Write the `svn-update-conflict` project under `root`; return its command and signals."""
    _svn_repo(root)
    return Run(["svn", "update", "--non-interactive"], [
        S("stdout", r"^C    config/settings\.ini$", "the one conflict among 4,001 updated files"),
        S("stdout", r"^Updated to revision 2\.$", "the result"),
        S("stdout", r"^Summary of conflicts:$|^  Text conflicts: 1$", "the conflict summary"),
    ], cwd="wc", expect_exit=exits(0))


@recipe("git-revert-conflict", "git", "vcs", GIT, needs=("git",))
def _git_revert(root):
    """Write the `git-revert-conflict` project under `root`; return its command and signals."""
    repo = Repo(root)
    repo.write("src/limits.py", "MAX_ITEMS = 10\nMAX_WEIGHT = 30\n")
    repo.write("README.md", "# Shop\n")
    repo.commit("Initial limits")
    repo.write("src/limits.py", "MAX_ITEMS = 20\nMAX_WEIGHT = 30\n")
    repo.write("README.md", "# Shop\n\nLimits raised.\n")
    repo.commit("Raise item limit")
    repo.write("src/limits.py", "MAX_ITEMS = 25\nMAX_WEIGHT = 40\n")
    repo.commit("Raise both limits again")
    return Run(["git", "revert", "--no-edit", "HEAD~1"], [
        S("stdout", r"^CONFLICT \(content\): Merge conflict in src/limits\.py$", "the conflicted file"),
        S("stderr", r"^error: could not revert [0-9a-f]+\.\.\. Raise item limit$", "the error"),
    ], env=git_env(when=WHEN), expect_exit=exits(1))


@recipe("git-submodule-update-missing", "git", "vcs", GIT, needs=("git",))
def _git_submodule(root):
    """Write the `git-submodule-update-missing` project under `root`; return its command and signals."""
    lib = Repo(os.path.join(root, "libs-origin"))
    lib.write("money.py", "def cents(x):\n    return round(x * 100)\n")
    lib.commit("Money helpers")
    app = Repo(os.path.join(root, "app"))
    app.write("main.py", "print('app')\n")
    app.commit("App")
    app.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", "../libs-origin", "vendor/money")
    app.commit("Vendor money helpers")
    sh(["git", "clone", "-q", "app", "clone"], root)
    sh(["rm", "-rf", "libs-origin"], root)
    return Run(["git", "submodule", "update", "--init"], [
        S("stderr", r"^fatal: repository '.*libs-origin' does not exist$", "the cause"),
        S("stderr", r"^fatal: clone of '.*libs-origin' into submodule path '.*vendor/money' failed$", "the failure"),
        S("stderr", r"^Failed to clone 'vendor/money' a second time, aborting$", "the verdict"),
    ], cwd="clone", env={**git_env(when=WHEN), "GIT_ALLOW_PROTOCOL": "file"}, expect_exit=exits(1))


XSD = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="feed">
    <xs:complexType><xs:sequence>
      <xs:element name="title" type="xs:string"/>
      <xs:element name="entry" maxOccurs="unbounded">
        <xs:complexType><xs:sequence>
          <xs:element name="id" type="xs:positiveInteger"/>
          <xs:element name="price" type="xs:decimal"/>
        </xs:sequence></xs:complexType>
      </xs:element>
    </xs:sequence></xs:complexType>
  </xs:element>
</xs:schema>
"""


@recipe("xmlstarlet-val-feeds", "xmlstarlet", "data", ["xmlstarlet", "--version"], needs=("xmlstarlet",))
def _xmlstarlet(root):
    """Write the `xmlstarlet-val-feeds` project under `root`; return its command and signals."""
    write(root, "feed.xsd", XSD)
    for n in range(3000):
        price = "12,50" if n == 2214 else f"{n % 90 + 0.5}"
        entry_id = "-4" if n == 517 else str(n + 1)
        write(root, f"feeds/f{n:04d}.xml", f"<feed><title>Feed {n}</title><entry><id>{entry_id}</id>"
              f"<price>{price}</price></entry></feed>\n")
    return Run(["xmlstarlet", "val", "-e", "-s", "feed.xsd", "feeds/*.xml"], [
        S("stdout", r"^feeds/f(0517|2214)\.xml - invalid$", "the two invalid documents among 3,000"),
        S("stderr", r"^feeds/f(0517|2214)\.xml:1\.\d+: Element '(id|price)': ", "each error with its place"),
    ], command="xmlstarlet val -e -s feed.xsd feeds/*.xml", expect_exit=exits(1))


@recipe("yq-invalid-yaml", "yq", "data", ["yq", "--version"], needs=("yq",))
def _yq(root):
    """Write the `yq-invalid-yaml` project under `root`; return its command and signals."""
    write(root, "deploy.yaml", "services:\n  web:\n    image: shop/web:1.4\n    ports:\n      - 8080:80\n"
          "  worker:\n    image: shop/worker:1.4\n   command: [\"celery\", \"worker\"]\n")
    return Run(["yq", ".services.worker.image", "deploy.yaml"], [
        S("stderr", r"^yq: Error running jq: ", "the error"),
        S("stderr", r"^did not find expected key$", "what was wrong"),
        S("stderr", r'line 8, column 4', "the place"),
    ], expect_exit=exits(1))


@recipe("getfacl-recursive-one-acl", "getfacl", "listing", ["getfacl", "--version"], needs=("getfacl", "setfacl"))
def _getfacl(root):
    """Write the `getfacl-recursive-one-acl` project under `root`; return its command and signals."""
    for d in range(30):
        for f in range(60):
            write(root, f"share/team{d:02d}/doc{f:02d}.txt", "x\n")
    sh(["setfacl", "-m", "u:nobody:rw-", "share/team17/doc42.txt"], root)
    sh(["setfacl", "-m", "d:g:nogroup:r-x", "share/team05"], root)
    return Run(["getfacl", "-R", "share"], [
        S("stdout", r"^user:nobody:rw-$", "the one file with a named user's entry among 1,800"),
        S("stdout", r"^default:group:nogroup:r-x$", "the one directory with a default entry"),
        S("stdout", r"^# file: share/team(17/doc42\.txt|05)$", "the two headings of those entries"),
    ], expect_exit=exits(0))


@recipe("redis-server-bad-config", "redis-server", "service", ["redis-server", "--version"], needs=("redis-server",))
def _redis(root):
    """Write the `redis-server-bad-config` project under `root`; return its command and signals."""
    write(root, "redis.conf", "port 6391\nbind 127.0.0.1\ndaemonize no\nmaxmemory 256mb\n"
          "maxmemory-policy allkeys-lru\nappendonly yes\nappendfsync everysecond\nsave 900 1\n")
    return Run(["redis-server", "redis.conf"], [
        S("stderr", r"^\*\*\* FATAL CONFIG FILE ERROR \(Redis [\d.]+\) \*\*\*$", "the error"),
        S("stderr", r"^Reading the configuration file, at line 7$", "its line"),
        S("stderr", r"^>>> 'appendfsync everysecond'$", "the offending directive"),
        S("stderr", r"^argument\(s\) must be one of the following: everysec, always, no$", "what was wrong"),
    ], expect_exit=exits(1))


@recipe("postgres-bad-config", "postgres", "service", ["postgres", "--version"], needs=("postgres", "initdb"))
def _postgres(root):
    """Write the `postgres-bad-config` project under `root`; return its command and signals."""
    os.chmod(root, 0o777)
    sh(as_nobody(["initdb", "-D", f"{root}/data", "-A", "trust", "-U", "app", "--no-sync"]), root)
    with open(os.path.join(root, "data", "postgresql.conf"), "a", encoding="utf-8") as conf:
        conf.write("\nport = 55499\nshared_buffers = 64MB\nmax_connections = 50\nwork_mem = 4XB\n"
                   "log_min_duration_statment = 250\n")
    return Run(["postgres", "-D", "data"], [
        S("stderr", r'LOG:  unrecognized configuration parameter "log_min_duration_statment" in file ".*postgresql\.conf" line \d+$',
          "the cause and its line"),
        S("stderr", r'FATAL:  configuration file ".*postgresql\.conf" contains errors$', "the failure"),
    ], command=as_nobody(["postgres", "-D", "data"]), expect_exit=exits(1))


@recipe("shfmt-diff-scripts", "shfmt", "formatter", ["shfmt", "--version"], needs=("shfmt",))
def _shfmt(root):
    """Write the `shfmt-diff-scripts` project under `root`; return its command and signals."""
    body = ("#!/bin/bash\nset -eu\nfor f in *.log ; do\n  if [ -s \"$f\" ] ;then\n      gzip \"$f\"\n  fi\ndone\n"
            "deploy ( ) {\n  echo  deploying  $1\n}\n")
    for n in range(40):
        write(root, f"scripts/task{n:02d}.sh", body)
    write(root, "scripts/broken.sh", "#!/bin/bash\nif [ -f x ]; then\n  echo missing fi\n")
    return Run(["shfmt", "-d", "-i", "2", "scripts"], [
        S("stderr", r'^scripts/broken\.sh:2:1: if statement must end with "fi"$', "the parse error, worse than the 40 diffs"),
    ], expect_exit=exits(1))


def _deb_tree(root: str) -> None:
    """An unpacked binary package with the slips lintian reports: no copyright, a bare binary, bad fields."""
    write(root, "pkg/DEBIAN/control", "Package: shop-tools\nVersion: 1.0\nArchitecture: all\n"
          "Maintainer: Dev One <dev@example.org>\nDescription: shop tools\n")
    for n in range(90):
        write(root, f"pkg/usr/bin/shop-report-{n:02d}", f"#!/bin/bash\necho report {n}\n", mode=0o755)
    write(root, "pkg/usr/share/doc/shop-tools/README", "Shop tools.\n")
    write(root, "pkg/etc/shop/shop.conf", "port=8080\n")


@recipe("lintian-deb-tags", "lintian", "package-manager", ["lintian", "--version"], needs=("lintian", "dpkg-deb"))
def _lintian(root):
    """Write the `lintian-deb-tags` project under `root`; return its command and signals."""
    _deb_tree(root)
    sh(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", "pkg", "shop-tools_1.0_all.deb"], root)
    return Run(["lintian", "shop-tools_1.0_all.deb"], [
        S("stdout", r"^E: shop-tools: ", "each error tag"),
    ], expect_exit=exits(2))


GEMSPEC = """Gem::Specification.new do |s|
  s.name = "shop_report"
  s.version = "1.0.0"
  s.summary = "Shop reports"
  s.authors = ["Dev One"]
  s.files = ["lib/shop_report.rb"]
  s.license = "MIT"
  s.add_runtime_dependency "prawn-tables", "~> 0.9"
end
"""


@recipe("gem-install-local-missing-dependency", "gem", "package-manager", ["gem", "--version"], needs=("gem",))
def _gem(root):
    """Write the `gem-install-local-missing-dependency` project under `root`; return its command and signals."""
    write(root, "shop_report.gemspec", GEMSPEC)
    write(root, "lib/shop_report.rb", "module ShopReport; end\n")
    home = os.path.join(root, "gems")
    sh(["gem", "build", "shop_report.gemspec"], root, env={"GEM_HOME": home})
    return Run(["gem", "install", "--local", "shop_report-1.0.0.gem"], [
        S("stderr", r"^ERROR:  Could not find a valid gem 'prawn-tables' \(~> 0\.9\)", "the error"),
    ],
               env={"GEM_HOME": home, "GEM_PATH": home}, expect_exit=exits(2))


def _dune_modules(root: str) -> None:
    """A dune project of 120 library modules; the 97th calls a function with the wrong argument type."""
    write(root, "dune-project", "(lang dune 2.9)\n")
    write(root, "lib/dune", "(library (name catalog))\n")
    for n in range(120):
        prev = f"let base = M{n - 1:03d}.value + 1\n" if n else "let base = 1\n"
        body = prev + f"let value = base * 2\nlet label () = \"module {n}\"\n"
        if n == 96:
            body += "let broken = String.length value\n"
        write(root, f"lib/m{n:03d}.ml", body)


@recipe("dune-build-verbose-deep-error", "dune", "build", ["dune", "--version"], needs=("dune",))
def _dune_verbose(root):
    """Write the `dune-build-verbose-deep-error` project under `root`; return its command and signals."""
    _dune_modules(root)
    return Run(["dune", "build", "--display", "short", "-j", "1"], [
        S("stderr", r'^File "lib/m096\.ml", line 4, characters 27-32:$', "the error's place after 300 build steps"),
        S("stderr", r"^Error: This expression has type int but an expression was expected of type$", "the error"),
    ], expect_exit=exits(1))
