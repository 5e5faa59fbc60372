"""Veiled recipes for PyPI tools and Python programs: Twisted's trial, luigi, PyInstaller, build, twine,
xenon, refurb, flynt, mypy's stubtest, Babel, openapi-spec-validator, darglint, waitress,
check-wheel-contents, slotscheck.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os
import zipfile

from veiled_common import Run, S, exits, pyver, recipe, sh, vbin, write

NPM_PINS: list[str] = []
PY_PINS = ["Twisted==26.10.0", "luigi==3.8.1", "pyinstaller==6.22.3", "build==1.6.1", "setuptools==84.2.1",
           "wheel==0.48.0", "twine==7.0.0", "xenon==0.9.3", "refurb==2.3.1", "flynt==1.0.6", "mypy==2.4.1", "Babel==2.19.0",
           "openapi-spec-validator==0.9.0", "darglint==1.8.1", "waitress==3.0.2", "check-wheel-contents==0.6.3",
           "slotscheck==0.21.0"]
APT_PINS: dict[str, str] = {}

def _trial_class(k: int, broken: tuple[int, int]) -> str:
    """One trial TestCase of 60 small tests over a price table; `broken` (class, test) expects a wrong total."""
    tests = []
    for n in range(60):
        expected = k * 100 + n * 4 + (1 if (k, n) == broken else 0)
        tests.append(f"    def test_line_{n:02d}_total(self):\n        self.assertEqual(line_total({k * 100 + n}, {n}), "
                     f"{expected})\n\n")
    return f"class Region{k:02d}Tests(unittest.TestCase):\n" + "".join(tests) + "\n"


@recipe("trial-one-failure-among-passes", "trial", "test-runner", [vbin("trial"), "--version"], needs=("trial",))
def _trial(root):
    """Write the `trial-one-failure-among-passes` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/pricing.py", "def line_total(base, qty):\n    return base + qty * 3\n")
    write(root, "shop/test/__init__.py", "")
    for part in range(4):
        body = "".join(_trial_class(k, (23, 41)) for k in range(part * 10, part * 10 + 10))
        write(root, f"shop/test/test_pricing_{part}.py", "from twisted.trial import unittest\n\n"
              "from shop.pricing import line_total\n\n\n" + body)
    return Run(["trial", "shop"], [
        S("stdout", r"^    test_line_41_total \.\.\. +\[FAIL\]$", "the one failing test among 2,400"),
        S("stdout", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stdout", r'^  File ".*/shop/test/test_pricing_2\.py", line \d+, in test_line_41_total$', "the test's own frame"),
        S("stdout", r"^twisted\.trial\.unittest\.FailTest: 2464 != 2465$", "the assertion that failed"),
        S("stdout", r"^shop\.test\.test_pricing_2\.Region23Tests\.test_line_41_total$", "the failed test's id"),
        S("stdout", r"^FAILED \(failures=1, successes=2399\)$", "the summary"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


def _luigi_pipeline(broken: int) -> str:
    """A luigi pipeline: 120 extract tasks, a transform per extract, one report; transform `broken` divides by zero."""
    return ("import json\nimport os\n\nimport luigi\n\n\nclass Extract(luigi.Task):\n    day = luigi.IntParameter()\n\n"
            "    def output(self):\n        return luigi.LocalTarget(f'out/extract-{self.day:03d}.json')\n\n"
            "    def run(self):\n        with self.output().open('w') as handle:\n"
            "            json.dump({'day': self.day, 'orders': self.day % 7}, handle)\n\n\n"
            "class Transform(luigi.Task):\n    day = luigi.IntParameter()\n\n    def requires(self):\n"
            "        return Extract(day=self.day)\n\n    def output(self):\n"
            "        return luigi.LocalTarget(f'out/transform-{self.day:03d}.json')\n\n    def run(self):\n"
            "        with self.input().open() as handle:\n            row = json.load(handle)\n"
            f"        per_order = 100 / (row['orders'] if self.day != {broken} else 0)\n"
            "        with self.output().open('w') as handle:\n            json.dump({'day': self.day, 'per_order': per_order}, handle)\n\n\n"
            "class Report(luigi.Task):\n    def requires(self):\n        return [Transform(day=d) for d in range(1, 121)]\n\n"
            "    def output(self):\n        return luigi.LocalTarget('out/report.txt')\n\n    def run(self):\n"
            "        with self.output().open('w') as handle:\n            handle.write('ok')\n")


@recipe("luigi-pipeline-task-failed", "luigi", "build", pyver("luigi"), needs=("luigi",))
def _luigi(root):
    """Write the `luigi-pipeline-task-failed` project under `root`; return its command and signals."""
    write(root, "pipeline.py", _luigi_pipeline(77).replace("(row['orders'] if", "(row['orders'] or 1 if"))
    return Run(["luigi", "--module", "pipeline", "Report", "--local-scheduler", "--workers", "1"], [
        S("stderr", r"^ERROR: \[pid \d+\] Worker .* failed +Transform\(day=77\)$", "the failed task among 241"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/pipeline\.py", line \d+, in run$', "the pipeline's own frame"),
        S("stderr", r"^ZeroDivisionError: division by zero$", "the exception"),
        S("stderr", r"^Scheduled 241 tasks of which:$", "the summary's count"),
        S("stderr", r"^\* 1 failed:$|^    - 1 Transform\(day=77\)$", "the summary's failure"),
        S("stderr", r"^This progress looks :\( because there were failed tasks$", "the verdict"),
    ],
               env={"PYTHONPATH": root}, expect_exit=exits(0))


@recipe("pyinstaller-onedir-build-complete", "pyinstaller", "build", [vbin("pyinstaller"), "--version"],
        needs=("pyinstaller",))
def _pyinstaller(root):
    """Write the `pyinstaller-onedir-build-complete` project under `root`; return its command and signals."""
    write(root, "shopcli/__init__.py", "")
    write(root, "shopcli/prices.py", "import json\n\n\ndef load(path):\n    with open(path) as handle:\n"
          "        return json.load(handle)\n")
    write(root, "main.py", "import argparse\nimport csv\nimport importlib\n\nfrom shopcli import prices\n\n\n"
          "def main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument('path')\n"
          "    args = parser.parse_args()\n    plugin = importlib.import_module('shopcli_plugins.vat')\n"
          "    print(plugin, prices.load(args.path), csv)\n\n\nif __name__ == '__main__':\n    main()\n")
    return Run(["pyinstaller", "--noconfirm", "--onedir", "--name", "shopcli", "--hidden-import", "shopcli_plugins.vat",
                "main.py"], [
        S("stderr", r"^\d+ ERROR: Hidden import 'shopcli_plugins\.vat' not found$", "the one error in a build that completes"),
        S("stderr", r"^\d+ INFO: Build complete! ", "the verdict"),
    ], expect_exit=exits(0))


@recipe("pyproject-build-extension-fails", "pyproject-build", "build", [vbin("pyproject-build"), "--version"],
        needs=("pyproject-build",))
def _pyproject_build(root):
    """Write the `pyproject-build-extension-fails` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", "[build-system]\nrequires = ['setuptools>=68']\nbuild-backend = 'setuptools.build_meta'\n\n"
          "[project]\nname = 'shopcore'\nversion = '2.3.0'\nrequires-python = '>=3.9'\n\n"
          "[tool.setuptools.packages.find]\nwhere = ['src']\n")
    write(root, "setup.py", "from setuptools import Extension, setup\n\n"
          "setup(ext_modules=[Extension('shopcore._speedups', ['src/shopcore/_speedups.c'])])\n")
    write(root, "src/shopcore/__init__.py", "")
    for group in ("orders", "catalog", "billing", "shipping"):
        write(root, f"src/shopcore/{group}/__init__.py", "")
        for n in range(45):
            write(root, f"src/shopcore/{group}/step_{n:02d}.py", f"def run(data):\n    return data + {n}\n")
    write(root, "src/shopcore/_speedups.c", "#include <Python.h>\n\nstatic PyObject *fast_sum(PyObject *self, PyObject *args) {\n"
          "    long a, b;\n    if (!PyArg_ParseTuple(args, \"ll\", &a, &b)) return NULL;\n    return PyLong_FromLong(a + b)\n}\n\n"
          "static PyMethodDef methods[] = {{\"fast_sum\", fast_sum, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};\n"
          "static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, \"_speedups\", NULL, -1, methods};\n"
          "PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }\n")
    return Run(["pyproject-build", "--no-isolation", "--wheel"], [
        S("stderr", r"^src/shopcore/_speedups\.c: In function ‘fast_sum’:$", "the error's location heading"),
        S("stderr", r"^src/shopcore/_speedups\.c:6:34: error: expected ‘;’ before ‘}’ token$", "the compile error"),
        S("stderr", r"^error: Command '\['gcc', ", "the command that failed"),
        S("stderr", r"^ERROR Backend subprocess exited when trying to invoke build_wheel$", "the verdict"),
    ], expect_exit=exits(1))


def _sdist(root: str, name: str, readme: str) -> None:
    """Build an sdist and a wheel of a one-module project called `name` whose long description is `readme`."""
    src = os.path.join(root, "src-" + name)
    write(src, "pyproject.toml", "[build-system]\nrequires = ['setuptools>=68']\nbuild-backend = 'setuptools.build_meta'\n\n"
          f"[project]\nname = '{name}'\nversion = '1.4.0'\ndescription = 'Shop tools'\nreadme = 'README.rst'\n")
    write(src, "README.rst", readme)
    write(src, f"{name}.py", "X = 1\n")
    sh([vbin("pyproject-build"), "--no-isolation", "--outdir", os.path.join(root, "dist"), src], root)


@recipe("twine-check-readme-markup", "twine", "package-manager", [vbin("twine"), "--version"], needs=("twine",))
def _twine(root):
    """Write the `twine-check-readme-markup` project under `root`; return its command and signals."""
    _sdist(root, "shopcli", "Shop CLI\n========\n\nA command line for the shop.\n\nUsage\n-----\n\n::\n\n    shopcli sync\n")
    _sdist(root, "shopcore", "Shop core\n=====\n\nThe core of the shop. See `the guide <https://example.test/guide>`_\n"
           "and `the guide <https://example.test/other>`_.\n\n.. code-block:: python\n   :linenos:\n\n   import shopcore\n\n"
           "* one\n* two\n  three\n")
    return Run(["twine", "check", "dist/*"], [
        S("stdout", r"^Checking dist/shopcore-1\.4\.0.*: FAILED$", "each distribution that fails"),
        S("stdout", r"^ERROR    `long_description` has syntax errors in markup", "the error"),
        S("stdout", r"^ +line 2: Warning: Title underline too short\.", "its place in the README"),
    ], command="twine check dist/*", expect_exit=exits(1))


@recipe("xenon-complexity-thresholds", "xenon", "linter", pyver("xenon"), needs=("xenon",))
def _xenon(root):
    """Write the `xenon-complexity-thresholds` project under `root`; return its command and signals."""
    for n in range(60):
        write(root, f"shop/handlers/h{n:02d}.py", f"def handle_{n}(event):\n    if event.get('kind') == 'a':\n"
              "        return 1\n    return 0\n")
    branches = "".join(f"    if event.get('k{n}') == {n}:\n        total += {n}\n        if flags & {1 << (n % 8)}:\n"
                       f"            total -= 1\n" for n in range(14))
    write(root, "shop/handlers/h31.py", "def settle(event, flags):\n    total = 0\n" + branches
          + "    for item in event.get('items', []):\n        if item and item > 3 or item == -1:\n            total += item\n"
          "    return total\n")
    return Run(["xenon", "--max-absolute", "B", "--max-modules", "A", "--max-average", "A", "shop"], [
        S("stderr", r'^ERROR:xenon:block "shop/handlers/h31\.py:1 settle" has a rank of E$', "the block over the threshold"),
        S("stderr", r"^ERROR:xenon:module 'shop/handlers/h31\.py' has a rank of E$", "the module over the threshold"),
    ],
               expect_exit=exits(1))


@recipe("refurb-many-suggestions", "refurb", "linter", [vbin("refurb"), "--version"], needs=("refurb",))
def _refurb(root):
    """Write the `refurb-many-suggestions` project under `root`; return its command and signals."""
    for n in range(300):
        write(root, f"shop/rules/r{n:03d}.py", f"def applies_{n}(kind: str, tags: list[str]) -> bool:\n"
              f"    if kind in ['sale', 'promo']:\n        return True\n    return len(tags) == 0\n")
    write(root, "shop/rules/r157.py", "from pathlib import Path\n\n\ndef applies_157(kind: str, tags: list[str]) -> bool:\n"
          "    if kind in ['sale', 'promo']:\n        return True\n    with open(Path('rules.txt')) as f:\n"
          "        return kind in f.read()\n")
    return Run(["refurb", "shop"], [
        S("stdout", r"^shop/rules/r157\.py:\d+:\d+ \[FURB117\]: ", "the one finding of another kind among 300"),
    ], expect_exit=exits(1))


@recipe("flynt-fail-on-change", "flynt", "formatter", [vbin("flynt"), "--version"], needs=("flynt",))
def _flynt(root):
    """Write the `flynt-fail-on-change` project under `root`; return its command and signals."""
    for n in range(40):
        write(root, f"shop/views/v{n:02d}.py", f"def label_{n}(item):\n    return f'{{item.name}} ({n})'\n")
    write(root, "shop/views/v13.py", "def label_13(item):\n    return '%s (%d)' % (item.name, item.qty)\n\n\n"
          "def title_13(item):\n    return 'Order {} of {}'.format(item.id, item.owner)\n")
    return Run(["flynt", "--dry-run", "--fail-on-change", "shop"], [
        S("stdout", r"^--- .*/shop/views/v13\.py$", "the file it would change"),
        S("stdout", r"^-    return 'Order \{\} of \{\}'\.format\(|^\+    return f'Order ", "the change"),
        S("stdout", r"^Modified 1 of 40 files", "the summary"),
    ], expect_exit=exits(1))


@recipe("stubtest-stub-mismatch", "stubtest", "type-checker", [vbin("mypy"), "--version"], needs=("stubtest",))
def _stubtest(root):
    """Write the `stubtest-stub-mismatch` project under `root`; return its command and signals."""
    write(root, "shopcalc/__init__.py", "")
    write(root, "shopcalc/pricing.py", "RATE = 0.2\n\n\ndef discount(price, pct, *, floor=0):\n"
          "    return max(price * (1 - pct), floor)\n\n\ndef vat(price):\n    return price * RATE\n\n\n"
          "class Basket:\n    def __init__(self):\n        self.items = []\n\n    def add(self, item, qty=1):\n"
          "        self.items.append((item, qty))\n")
    write(root, "shopcalc/__init__.pyi", "")
    write(root, "shopcalc/pricing.pyi", "RATE: float\n\ndef discount(price: float, rate: float, *, floor: float = ...) -> float: ...\n"
          "def vat(price: float) -> float: ...\ndef shipping(weight: float) -> float: ...\n\nclass Basket:\n"
          "    def __init__(self) -> None: ...\n    def add(self, item: str) -> None: ...\n")
    return Run(["stubtest", "shopcalc"], [
        S("stdout", r"^error: shopcalc\.pricing\.\w+(\.\w+)? is ", "each inconsistency"),
        S("stdout", r"^Stub: in file .*/shopcalc/pricing\.pyi:\d+$", "each one's place in the stub"),
        S("stdout", r"^Found 3 errors \(checked 2 modules\)$", "the summary"),
    ], env={"PYTHONPATH": root, "MYPYPATH": root}, expect_exit=exits(1))


def _po(lang: str, n: int, bad: bool) -> str:
    """A .po catalogue of 40 messages, `n` of them translated; `bad` breaks a format placeholder."""
    head = (f'msgid ""\nmsgstr ""\n"Language: {lang}\\n"\n"MIME-Version: 1.0\\n"\n'
            '"Content-Type: text/plain; charset=utf-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n\n')
    body = []
    for k in range(40):
        text = f"{lang} text {k}" if k < n else ""
        body.append(f'#: shop/views.py:{k + 10}\nmsgid "Item {k}"\nmsgstr "{text}"\n\n')
    body.append('#: shop/views.py:90\n#, python-format\nmsgid "%(count)d items in %(cart)s"\n'
                + ('msgstr "%(count)d Artikel in %(wagen)s"\n' if bad else f'msgstr "%(count)d {lang} %(cart)s"\n'))
    return head + "".join(body)


@recipe("pybabel-compile-bad-placeholder", "pybabel", "build", [vbin("pybabel"), "--version"], needs=("pybabel",))
def _pybabel(root):
    """Write the `pybabel-compile-bad-placeholder` project under `root`; return its command and signals."""
    langs = ["ar", "bg", "ca", "cs", "da", "de", "el", "es", "et", "fi", "fr", "he", "hi", "hr", "hu", "id", "it",
             "ja", "ko", "lt", "lv", "nb", "nl", "pl", "pt", "ro", "ru", "sk", "sl", "sv", "th", "tr", "uk", "vi", "zh"]
    for i, lang in enumerate(langs):
        write(root, f"locale/{lang}/LC_MESSAGES/messages.po", _po(lang, 40 - i % 9, lang == "de"))
    return Run(["pybabel", "compile", "-d", "locale", "--statistics"], [
        S("stderr", r"^error: locale/de/LC_MESSAGES/messages\.po:\d+: unknown named placeholder 'wagen'$",
          "the one error among 35 catalogues"),
        S("stderr", r"^1 errors encountered\.$", "the summary"),
    ], expect_exit=exits(1))


@recipe("openapi-spec-validator-invalid", "openapi-spec-validator", "linter", pyver("openapi-spec-validator"),
        needs=("openapi-spec-validator",))
def _openapi(root):
    """Write the `openapi-spec-validator-invalid` project under `root`; return its command and signals."""
    paths = "".join(f"  /orders/{{id}}/lines/{n}:\n    get:\n      parameters:\n        - name: id\n          in: path\n"
                    f"          required: true\n          schema: {{type: string}}\n      responses:\n"
                    f"        '200': {{description: line {n}}}\n" for n in range(30))
    write(root, "openapi.yaml", "openapi: 3.0.3\ninfo:\n  title: Shop\n  version: '1'\npaths:\n" + paths
          + "  /orders/{id}/refund:\n    post:\n      parameters:\n        - name: id\n          in: path\n"
          "          schema: {type: string}\n      responses:\n        '200': {description: refunded}\n")
    return Run(["openapi-spec-validator", "openapi.yaml"], [
        S("stdout", r"^openapi\.yaml: Validation Error: ", "the error"),
        S("stdout", r"^On instance\['paths'\]\['/orders/\{id\}/refund'\]", "its place in the document"),
    ], expect_exit=exits(1))


def _darglint_module(n: int) -> str:
    """Functions whose Google-style docstrings forget one argument each."""
    return "".join(f'def fee_{n}_{k}(amount, region):\n    """Compute fee {k} of group {n}.\n\n    Args:\n'
                   f'        amount: The amount in cents.\n\n    Returns:\n        The fee.\n\n    """\n'
                   f'    return amount // {k + 2} if region else 0\n\n\n' for k in range(3))


@recipe("darglint-docstring-args", "darglint", "linter", [vbin("darglint"), "--version"], needs=("darglint",))
def _darglint(root):
    """Write the `darglint-docstring-args` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"fees/f{n:03d}.py", _darglint_module(n))
    write(root, "fees/f088.py", _darglint_module(88) + 'def refund_88(amount):\n    """Refund an amount.\n\n    Args:\n'
          '        amount: The amount in cents.\n\n    Returns:\n        The refund.\n\n    """\n    if amount < 0:\n'
          "        raise ValueError('negative refund')\n    return amount\n")
    return Run(["darglint", "-v", "2", "fees/*.py"], [
        S("stdout", r"^fees/f088\.py:refund_88:\d+: DAR401: Missing exception\(s\) in Raises section", "the one finding of another kind among 360"),
    ], command="darglint -v 2 fees/*.py", expect_exit=exits(1))


@recipe("waitress-request-exception-log", "waitress-serve", "log", pyver("waitress"), needs=("waitress-serve",))
def _waitress(root):
    """Write the `waitress-request-exception-log` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/app.py", "import logging\nimport sys\n\nlogging.basicConfig(stream=sys.stderr, level=logging.INFO,\n"
          "                    format='%(levelname)s [%(name)s] %(message)s')\nlog = logging.getLogger('shop.app')\n"
          "PRICES = {n: n * 3 for n in range(500) if n != 317}\n\n\ndef app(environ, start_response):\n"
          "    path = environ['PATH_INFO']\n    order = int(path.rsplit('/', 1)[1])\n"
          "    body = f'{{\"order\": {order}, \"price\": {PRICES[order]}}}'.encode()\n"
          "    log.info('%s %s 200 %d bytes', environ['REQUEST_METHOD'], path, len(body))\n"
          "    start_response('200 OK', [('Content-Type', 'application/json')])\n    return [body]\n")
    write(root, "smoke.py", "import urllib.error\nimport urllib.request\n\nfailed = 0\nfor n in range(400):\n"
          "    try:\n        urllib.request.urlopen(f'http://127.0.0.1:18743/orders/{n}').read()\n"
          "    except urllib.error.HTTPError as error:\n        failed += 1\n"
          "print(f'smoke: 400 requests, {failed} failed', flush=True)\n")
    command = ("waitress-serve --listen=127.0.0.1:18743 shop.app:app & server=$!; "
               "for i in $(seq 50); do python -c 'import socket; socket.create_connection((\"127.0.0.1\", 18743))' "
               "2>/dev/null && break; sleep 0.1; done; python smoke.py; kill $server; wait $server; exit 0")
    return Run(["waitress-serve", "--listen=127.0.0.1:18743", "shop.app:app"], [
        S("stderr", r"^ERROR \[waitress\] Exception while serving /orders/317$", "the one failed request among 400"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/shop/app\.py", line \d+, in app$', "the app's own frame"),
        S("stderr", r"^KeyError: 317$", "the exception"),
        S("stdout", r"^smoke: 400 requests, 1 failed$", "the smoke run's summary"),
    ], command=command,
               env={"PYTHONPATH": root}, expect_exit=exits(0))


def _wheel(path: str, files: dict[str, str]) -> None:
    """Write a wheel at `path` holding `files` plus its dist-info (METADATA, WHEEL, RECORD)."""
    info = "shoputil-0.3.0.dist-info"
    files = {**files, f"{info}/METADATA": "Metadata-Version: 2.1\nName: shoputil\nVersion: 0.3.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in sorted(files.items()):
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", record)


@recipe("check-wheel-contents-findings", "check-wheel-contents", "package-manager",
        [vbin("check-wheel-contents"), "--version"], needs=("check-wheel-contents",))
def _check_wheel_contents(root):
    """Write the `check-wheel-contents-findings` project under `root`; return its command and signals."""
    os.makedirs(os.path.join(root, "dist"))
    files = {f"shoputil/part{n:02d}.py": f"X = {n}\n" for n in range(30)}
    files.update({"shoputil/__init__.py": "", "shoputil/__pycache__/part01.cpython-311.pyc": "\x00",
                  "shoputil/part02_copy.py": "X = 2\n", "tests/__init__.py": "", "tests/test_part.py": "def test(): pass\n",
                  "shoputil/.DS_Store": ""})
    _wheel(os.path.join(root, "dist", "shoputil-0.3.0-py3-none-any.whl"), files)
    return Run(["check-wheel-contents", "dist"], [
        S("stdout", r"^dist/shoputil-0\.3\.0-py3-none-any\.whl: W00\d: ", "each finding, the only ones"),
    ], expect_exit=exits(1))


@recipe("slotscheck-broken-slots", "slotscheck", "linter", [vbin("slotscheck"), "--version"], needs=("slotscheck",))
def _slotscheck(root):
    """Write the `slotscheck-broken-slots` project under `root`; return its command and signals."""
    write(root, "shopmodels/__init__.py", "")
    for n in range(25):
        write(root, f"shopmodels/m{n:02d}.py", f"class Base{n}:\n    __slots__ = ('id',)\n\n\n"
              f"class Item{n}(Base{n}):\n    __slots__ = ('name', 'price')\n")
    write(root, "shopmodels/m09.py", "class Base9:\n    __slots__ = ('id', 'name')\n\n\nclass Item9(Base9):\n"
          "    __slots__ = ('name', 'price')\n\n\nclass Plain:\n    pass\n\n\nclass Tagged(Plain):\n    __slots__ = ('tag',)\n")
    return Run(["slotscheck", "-m", "shopmodels", "-v"], [
        S("stdout", r"^ERROR: 'shopmodels\.m09:(Item9|Tagged)' defines ", "each error"),
        S("stdout", r"^Oh no, found some problems!$", "the verdict"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))
