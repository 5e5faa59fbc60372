"""Hidden recipes for PyPI tools and Python's own checkers: pipdeptree, Cython, doit, import-linter,
gitlint, reuse, sphinx-lint, vermin, autoflake, validate-pyproject, typos, cmake-lint, docformatter,
toml-sort, invoke, tabnanny, ty, xdoctest, cram, zope.testrunner.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os

from generate_native import Repo, git_env
from hidden_common import Run, S, exits, recipe, sh, vbin, write


def _pyver(module: str) -> list[str]:
    """A version command that asks the hidden venv's Python for an installed distribution's version."""
    return [vbin("python"), "-c", f"import importlib.metadata as m; print(m.version('{module}'))"]


@recipe("pipdeptree-conflicting-deps", "pipdeptree", "package-manager", _pyver("pipdeptree"), needs=("pipdeptree",))
def _pipdeptree(root):
    """Write the `pipdeptree-conflicting-deps` project under `root`; return its command and signals."""
    site = os.path.join(root, "site")
    for n in range(150):
        info = os.path.join(site, f"plugin{n:03d}-1.{n}.0.dist-info")
        write(info, "METADATA", f"Metadata-Version: 2.1\nName: plugin{n:03d}\nVersion: 1.{n}.0\n"
              f"Requires-Dist: shopcore>=1.0\nRequires-Dist: rich\n")
        write(info, "RECORD", "")
    for name, version, requires in (("shopcore", "2.0.0", ["pricing>=3.0", "rich"]), ("pricing", "2.4.1", []),
                                    ("reports", "1.1.0", ["shopcore", "pricing<2.0"])):
        info = os.path.join(site, f"{name}-{version}.dist-info")
        write(info, "METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
              + "".join(f"Requires-Dist: {r}\n" for r in requires))
        write(info, "RECORD", "")
    return Run(["pipdeptree", "--path", "site", "--path", "/tmp/yarp-gen/hidden/venv/lib/python3.11/site-packages"], [
        S("stderr", r"^Warning: dependency problems found:$", "the warning's heading"),
        S("stderr", r"^\* (shopcore|reports)==", "each package with a conflict"),
        S("stderr", r"^  - pricing \[required: (>=3\.0|<2\.0), installed: 2\.4\.1\]$", "each conflict"),
    ], expect_exit=exits(0))


@recipe("cython-compile-errors", "cython", "compiler", [vbin("cython"), "--version"], needs=("cython",))
def _cython(root):
    """Write the `cython-compile-errors` project under `root`; return its command and signals."""
    write(root, "fastsum.pyx", "cdef int total(int[:] xs):\n    cdef int s = 0\n    for i in range(xs.shape[0]):\n"
          "        s += xs[i]\n    return s\n\ndef mean(xs):\n    cdef double n = len(xs)\n"
          "    return total(xs) / n\n\ncdef class Bag:\n    cdef list items\n    def add(self, x):\n"
          "        self.itms.append(x)\n\ndef broken(x):\n    cdef int y = 'text'\n    return y\n")
    return Run(["cython", "-3", "fastsum.pyx"], [
        S("stderr", r"^Error compiling Cython file:$", "the error's heading"),
        S("stderr", r"^fastsum\.pyx:17:17: Only single-character string literals", "the error with its place"),
    ], expect_exit=exits(1))


@recipe("doit-task-failed", "doit", "build", [vbin("doit"), "--version"], needs=("doit",))
def _doit(root):
    """Write the `doit-task-failed` project under `root`; return its command and signals."""
    write(root, "dodo.py", "def task_fetch():\n    return {'actions': ['echo fetched > data.txt'], 'targets': ['data.txt']}\n\n"
          "def task_parse():\n    return {'actions': ['python3 -c \"import json; json.loads(open(\\'data.txt\\').read())\"'],\n"
          "            'file_dep': ['data.txt'], 'verbosity': 2}\n\n"
          "def task_report():\n    return {'actions': ['echo report'], 'task_dep': ['parse']}\n")
    return Run(["doit"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r"^json\.decoder\.JSONDecodeError: ", "the exception"),
        S("stdout", r"^TaskFailed - taskid:parse$", "the failed task"),
        S("stdout", r"^Command failed: ", "the command that failed"),
    ], expect_exit=exits(1))


@recipe("import-linter-broken-contract", "lint-imports", "linter", _pyver("import-linter"), needs=("lint-imports",))
def _import_linter(root):
    """Write the `import-linter-broken-contract` project under `root`; return its command and signals."""
    for layer in ("api", "services", "storage"):
        write(root, f"shop/{layer}/__init__.py", "")
    write(root, "shop/__init__.py", "")
    write(root, "shop/api/views.py", "from shop.services import orders\n")
    write(root, "shop/services/orders.py", "from shop.storage import db\n")
    write(root, "shop/storage/db.py", "from shop.api import views\n")
    write(root, ".importlinter", "[importlinter]\nroot_package = shop\n\n[importlinter:contract:layers]\n"
          "name = Layered architecture\ntype = layers\nlayers =\n    shop.api\n    shop.services\n    shop.storage\n")
    return Run(["lint-imports"], [
        S("stdout", r"^Layered architecture BROKEN$", "the broken contract"),
        S("stdout", r"^shop\.storage is not allowed to import shop\.api:$", "the violation"),
        S("stdout", r"^- shop\.storage\.db -> shop\.api\.views \(l\.1\)$", "its place"),
        S("stdout", r"^Contracts: 0 kept, 1 broken\.$", "the summary"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


@recipe("gitlint-commit-range", "gitlint", "vcs", [vbin("gitlint"), "--version"], needs=("gitlint", "git"))
def _gitlint(root):
    """Write the `gitlint-commit-range` project under `root`; return its command and signals."""
    repo = Repo(root)
    for n in range(25):
        repo.write(f"src/m{n}.py", f"X = {n}\n")
        repo.commit(f"Add module {n}\n\nModule {n} holds the constant for step {n} of the checkout flow.")
    repo.write("src/m7.py", "X = 70\n")
    repo.commit("fixed stuff.")
    return Run(["gitlint", "--commits", "HEAD~5..HEAD"], [
        S("stderr", r"^Commit [0-9a-f]+:$", "the offending commit"),
        S("stderr", r"^1: T3 Title has trailing punctuation \(\.\): ", "its violation"),
        S("stderr", r"^3: B6 Body message is missing$", "its other violation"),
    ], env=git_env(), expect_exit=exits(2))


@recipe("reuse-lint-missing-licenses", "reuse", "linter", [vbin("reuse"), "--version"], needs=("reuse",))
def _reuse(root):
    """Write the `reuse-lint-missing-licenses` project under `root`; return its command and signals."""
    header = "# SPDX-FileCopyrightText: 2024 Shop Authors\n# SPDX-License-Identifier: MIT\n"
    for n in range(400):
        write(root, f"src/shop/mod{n:03d}.py", header + f"X = {n}\n")
    write(root, "src/shop/mod211.py", "X = 211\n")
    write(root, "src/shop/vendor.py", "# SPDX-FileCopyrightText: 2020 Other\n# SPDX-License-Identifier: GPL-3.0-only\nY = 1\n")
    write(root, "LICENSES/MIT.txt", "MIT License\n")
    sh(["git", "init", "-q"], root)
    return Run(["reuse", "lint"], [
        S("stdout", r"^\* src/shop/mod211\.py$", "the one file without licence information among 401"),
        S("stdout", r"^'GPL-3\.0-only' found in:$|^\* Missing licenses: GPL-3\.0-only$", "the licence with no text"),
        S("stdout", r"^\* Files with (copyright|license) information: 400 / 401$", "the counts"),
        S("stdout", r"^Unfortunately, your project is not compliant", "the verdict"),
    ], expect_exit=exits(1))


@recipe("sphinx-lint-docs", "sphinx-lint", "docs", [vbin("sphinx-lint"), "--version"], needs=("sphinx-lint",))
def _sphinx_lint(root):
    """Write the `sphinx-lint-docs` project under `root`; return its command and signals."""
    for n in range(12):
        write(root, f"docs/page{n:02d}.rst", f"Page {n}\n=======\n\nSee :func:`run` and ``code``.\n")
    write(root, "docs/page05.rst", "Page 5\n======\n\nCall :func:``run`` and read `the guide<https://example.test>`_.   \n\n"
          "... note:: This is not a directive.\n")
    return Run(["sphinx-lint", "docs"], [
        S("stderr", r"^docs/page05\.rst:\d+: ", "each finding with its place"),
    ], expect_exit=exits(1))


@recipe("vermin-minimum-versions", "vermin", "linter", [vbin("vermin"), "--version"], needs=("vermin",))
def _vermin(root):
    """Write the `vermin-minimum-versions` project under `root`; return its command and signals."""
    for n in range(200):
        write(root, f"pkg/m{n:03d}.py", f"import os\n\n\ndef f{n}(path):\n    return os.path.join(path, 'x')\n")
    write(root, "pkg/m144.py", "def pick(rows):\n    match rows:\n        case [first, *_]:\n            return first\n"
          "        case _:\n            return None\n")
    return Run(["vermin", "-t=3.8-", "--violations", "pkg"], [
        S("stdout", r"^!2, 3\.10 +\S+/pkg/m144\.py$", "the one file that needs a newer Python"),
        S("stdout", r"^Minimum required versions:", "the summary"),
        S("stdout", r"^Target versions not met:", "the verdict"),
    ], expect_exit=exits(1))


@recipe("autoflake-check-unused", "autoflake", "formatter", [vbin("autoflake"), "--version"], needs=("autoflake",))
def _autoflake(root):
    """Write the `autoflake-check-unused` project under `root`; return its command and signals."""
    for n in range(400):
        write(root, f"app/v{n:03d}.py", f"import json\n\n\ndef view{n}(data):\n    return json.dumps(data)\n")
    write(root, "app/v011.py", "import json\nimport os\nimport sys\n\n\ndef view11(data):\n    return json.dumps(data)\n")
    return Run(["autoflake", "--check", "-r", "app"], [
        S("stdout", r"^.*app/v011\.py: Unused imports/variables detected$", "the one file with findings"),
    ], expect_exit=exits(1))


@recipe("validate-pyproject-errors", "validate-pyproject", "linter", [vbin("validate-pyproject"), "--version"],
        needs=("validate-pyproject",))
def _validate_pyproject(root):
    """Write the `validate-pyproject-errors` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n\n"
          "[project]\nname = 'shop core'\nversion = '1.0'\ndependencies = 'requests'\n")
    return Run(["validate-pyproject", "pyproject.toml"], [
        S("stdout", r"^Invalid file: pyproject\.toml$", "the verdict"),
        S("stderr", r"^\[ERROR\] `project\.name` must be pep508-identifier$", "the error"),
        S("stderr", r"^validate_pyproject\.error_reporting\.ValidationError: ", "the exception line"),
    ], expect_exit=exits(1))


def _typo_module(n: int) -> str:
    """A module whose comments carry a few of the usual misspellings."""
    return (f"# Recieve the payload and proccess it.\ndef handle_{n}(payload):\n    # seperate the header\n"
            f"    header, body = payload.split(':', 1)\n    return header, body\n")


@recipe("typos-many-misspellings", "typos", "linter", [vbin("typos"), "--version"], needs=("typos",))
def _typos(root):
    """Write the `typos-many-misspellings` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"src/h{n:03d}.py", _typo_module(n))
    write(root, "src/h042.py", _typo_module(42) + "\n\ndef teh_total():\n    return 0\n")
    return Run(["typos", "--format", "brief", "src"], [
        S("stdout", r"^src/h042\.py:8:5: error: `teh` should be `the`$", "the one misspelling of another kind, in a name"),
    ], expect_exit=exits(2))


@recipe("cmake-lint-listfiles", "cmake-lint", "linter", [vbin("cmake-lint"), "--version"], needs=("cmake-lint",))
def _cmake_lint(root):
    """Write the `cmake-lint-listfiles` project under `root`; return its command and signals."""
    libs = "".join(f"add_library(part{n} STATIC src/part{n}.c)\ntarget_include_directories(part{n} PUBLIC include)\n"
                   for n in range(40))
    write(root, "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(shop C)\n" + libs
          + "set(myVar 1)\nif(${myVar})\n  message(STATUS \"on\")\nendif()\n")
    return Run(["cmake-lint", "CMakeLists.txt"], [
        S("stdout", r"^CMakeLists\.txt$", "the file's heading"),
        S("stdout", r"^CMakeLists\.txt:\d+(,\d+)?: \[[A-Z]\d+\]", "each finding"),
        S("stdout", r"^found lint:$|^  Convention: 1$", "the summary"),
    ], expect_exit=exits(1))


@recipe("docformatter-check", "docformatter", "formatter", [vbin("docformatter"), "--version"], needs=("docformatter",))
def _docformatter(root):
    """Write the `docformatter-check` project under `root`; return its command and signals."""
    for n in range(20):
        write(root, f"lib/m{n:02d}.py", f'def f{n}():\n    """Return {n}."""\n    return {n}\n')
    write(root, "lib/m13.py", 'def f13():\n    """   return thirteen   \n    """\n    return 13\n')
    return Run(["docformatter", "--check", "-r", "lib"], [
        S("stderr", r"lib/m13\.py", "the one file that would change"),
    ], expect_exit=exits(3))


@recipe("toml-sort-check", "toml-sort", "formatter", [vbin("toml-sort"), "--version"], needs=("toml-sort",))
def _toml_sort(root):
    """Write the `toml-sort-check` project under `root`; return its command and signals."""
    write(root, "a.toml", "[alpha]\nx = 1\n\n[beta]\ny = 2\n")
    write(root, "b.toml", "[zeta]\nx = 1\n\n[alpha]\ny = 2\n")
    return Run(["toml-sort", "--check", "a.toml", "b.toml"], [
        S("stderr", r"^1 check failure\(s\):$", "the verdict"),
        S("stderr", r"^  - b\.toml$", "the unsorted file"),
    ], expect_exit=exits(1))


@recipe("invoke-task-failure", "invoke", "build", [vbin("invoke"), "--version"], needs=("invoke",))
def _invoke(root):
    """Write the `invoke-task-failure` project under `root`; return its command and signals."""
    write(root, "tasks.py", "from invoke import task\n\n@task\ndef clean(c):\n    c.run('rm -rf build')\n\n"
          "@task(pre=[clean])\ndef build(c):\n    c.run('mkdir -p build && echo compiling')\n"
          "    c.run('ls missing-dir')\n    c.run('echo never')\n")
    return Run(["invoke", "build"], [
        S("stderr", r"^ls: cannot access 'missing-dir': No such file or directory$", "the error"),
    ], expect_exit=exits(2))


@recipe("tabnanny-inconsistent-indent", "tabnanny", "linter", [vbin("python"), "--version"], needs=("python",))
def _tabnanny(root):
    """Write the `tabnanny-inconsistent-indent` project under `root`; return its command and signals."""
    for n in range(600):
        write(root, f"legacy/m{n:03d}.py", f"def f{n}(x):\n    if x:\n        return {n}\n    return 0\n")
    with open(os.path.join(root, "legacy/m031.py"), "w", encoding="utf-8") as handle:
        handle.write("def f31(x):\n    if x:\n\treturn 31\n    return 0\n")
    return Run(["python", "-m", "tabnanny", "-v", "legacy"], [
        S("stdout", r"legacy/m031\.py", "the one file with ambiguous indentation among 600"),
    ], expect_exit=exits(0, 1))


@recipe("ty-check-type-errors", "ty", "type-checker", [vbin("ty"), "--version"], needs=("ty",))
def _ty(root):
    """Write the `ty-check-type-errors` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", "[project]\nname = 'shop'\nversion = '0.1.0'\nrequires-python = '>=3.11'\n")
    for n in range(20):
        write(root, f"shop/m{n:02d}.py", f"def price_{n}(cents: int) -> float:\n    return cents / 100\n")
    write(root, "shop/cart.py", "from shop.m01 import price_1\n\n\ndef total(items: list[int]) -> int:\n"
          "    return sum(price_1(i) for i in items)\n\n\nlabel: str = total([1, 2])\nprice_1('12')\n")
    return Run(["ty", "check", "--output-format", "concise", "shop"], [
        S("stdout", r"^shop/cart\.py:\d+:\d+: error\[", "each error with its place"),
        S("stdout", r"^Found \d+ diagnostics?$", "the count"),
    ], expect_exit=exits(1))


def _doc_function(n: int, wrong: bool) -> str:
    """A function whose docstring example checks a computed discount."""
    want = n * 9 // 10 + (1 if wrong else 0)
    return (f"def discount_{n}(price):\n    \"\"\"Ten percent off.\n\n    >>> discount_{n}({n})\n    {want}\n"
            f"    \"\"\"\n    return price * 9 // 10\n\n\n")


@recipe("xdoctest-one-failure", "xdoctest", "test-runner", [vbin("xdoctest"), "--version"], needs=("xdoctest",))
def _xdoctest(root):
    """Write the `xdoctest-one-failure` project under `root`; return its command and signals."""
    write(root, "pricing.py", "".join(_doc_function(n, n == 87) for n in range(10, 160)))
    return Run(["xdoctest", "pricing.py", "all"], [
        S("stdout", r"^\* FAILURE: pricing\.py::discount_87:0$|^\* REASON: GotWantException$", "the failure"),
        S("stdout", r'^  File "pricing\.py", line 698, <- wrt source file$', "its place"),
        S("stdout", r"^    got  = '78'$|^    want = '79'$", "what was wanted and what came"),
        S("stdout", r"^=== 1 failed, 149 passed", "the summary"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


@recipe("cram-shell-tests-one-failure", "cram", "test-runner", [vbin("cram"), "--version"], needs=("cram",))
def _cram(root):
    """Write the `cram-shell-tests-one-failure` project under `root`; return its command and signals."""
    for n in range(30):
        write(root, f"tests/t{n:02d}.t", f"Arithmetic and pipes:\n\n  $ echo $(( {n} * 2 ))\n  {n * 2}\n  $ printf 'a\\nb\\n' | wc -l\n  2\n")
    write(root, "tests/t17.t", "Arithmetic and pipes:\n\n  $ echo $(( 17 * 2 ))\n  34\n  $ printf 'x,y\\n' | cut -d, -f2\n  x\n")
    return Run(["cram", "-v", "tests"], [
        S("stdout", r"^tests/t17\.t: failed$", "the failed test"),
        S("stdout", r"^--- tests/t17\.t$", "the diff's heading"),
        S("stdout", r"^-  x$|^\+  y$", "what was wanted and what came"),
        S("stdout", r"^# Ran 30 tests, 0 skipped, 1 failed\.$", "the summary"),
    ], expect_exit=exits(1))


def _zope_tests(n: int) -> str:
    """A unittest module of small cases; module 23's third case checks a wrong rounding."""
    cases = "".join(f"    def test_case_{k}(self):\n        self.assertEqual(round({k} * 1.5), {round(k * 1.5)})\n\n"
                    for k in range(12))
    if n == 23:
        cases += "    def test_rounding_half(self):\n        self.assertEqual(round(2.5), 3)\n\n"
    return f"import unittest\n\n\nclass RoundingTests{n}(unittest.TestCase):\n{cases}"


@recipe("zope-testrunner-one-failure", "zope-testrunner", "test-runner", _pyver("zope.testrunner"),
        needs=("zope-testrunner",))
def _zope_testrunner(root):
    """Write the `zope-testrunner-one-failure` project under `root`; return its command and signals."""
    write(root, "src/calc/__init__.py", "")
    write(root, "src/calc/tests/__init__.py", "")
    for n in range(40):
        write(root, f"src/calc/tests/test_round{n:02d}.py", _zope_tests(n))
    return Run(["zope-testrunner", "--test-path", "src", "-vv"], [
        S("stdout", r"^Failure in test test_rounding_half \(calc\.tests\.test_round23\.RoundingTests23", "the failure"),
        S("stdout", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stdout", r"^AssertionError: 2 != 3$", "the exception line"),
        S("stdout", r'^  File ".*src/calc/tests/test_round23\.py", line \d+, in test_rounding_half$', "the test's frame"),
        S("stdout", r"^  Ran 481 tests with 1 failures, 0 errors", "the summary"),
    ], env={"PYTHONPATH": f"{root}/src"}, expect_exit=exits(1))
