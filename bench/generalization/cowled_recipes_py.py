"""Cowled recipes for PyPI tools and Python programs: aiohttp, joblib, Robocop, gabbi, numpydoc, flit, checkov,
treon, SlipCover, unittest-parallel.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from cowled_common import Run, S, exits, pyver, recipe, sh, vbin, wait_port, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS = ["aiohttp==3.14.5", "joblib==1.6.0", "robotframework==7.5", "robotframework-robocop==9.1.2", "gabbi==4.2.3",
           "numpydoc==1.11.0", "flit==4.2.0", "checkov==3.3.30", "treon==0.1.4", "nbconvert==7.17.2", "ipykernel==7.4.0",
           "slipcover==1.1.0", "unittest-parallel==1.8.6"]
APT_PINS: dict[str, str] = {}

_AIOHTTP_APP = """\
import logging

from aiohttp import web

PRICES = {sku: round(3.5 + (sku * 7) % 90 * 0.25, 2) for sku in range(4000)}
CURRENCIES = {sku: ("EUR", "USD", "GBP")[sku % 3] for sku in range(4000) if sku != 2871}


async def price(request):
    sku = int(request.match_info["sku"])
    return web.json_response({"sku": sku, "price": PRICES[sku], "currency": CURRENCIES[sku]})


async def health(request):
    return web.Response(text="ok")


def make_app():
    app = web.Application()
    app.router.add_get("/prices/{sku}", price)
    app.router.add_get("/health", health)
    return app


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    web.run_app(make_app(), host="127.0.0.1", port=19121)
"""

_AIOHTTP_CLIENT = """\
import urllib.error
import urllib.request

failed = 0
for sku in range(4000):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:19121/prices/{sku}").read()
    except urllib.error.HTTPError:
        failed += 1
print(f"price sync: 4000 requests, {failed} failed", flush=True)
"""


@recipe("aiohttp-access-log-one-500", "aiohttp", "log", pyver("aiohttp"), needs=("python",))
def _aiohttp(root):
    """Write the `aiohttp-access-log-one-500` project under `root`; return its command and signals."""
    write(root, "pricing/__init__.py", "")
    write(root, "pricing/server.py", _AIOHTTP_APP)
    write(root, "sync_prices.py", _AIOHTTP_CLIENT)
    command = ("python -m pricing.server & server=$!; " + wait_port(19121) +
               "python sync_prices.py; kill -INT $server; wait $server; exit 0")
    return Run(["python", "-m", "pricing.server"], [
        S("stderr", r" ERROR aiohttp\.server: Error handling request from 127\.0\.0\.1$", "the one request that raised among 4,000"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/pricing/server\.py", line \d+, in price$', "the handler's own frame"),
        S("stderr", r"^KeyError: 2871$", "the exception"),
        S("stderr", r'"GET /prices/2871 HTTP/1\.1" 500 ', "its line in the access log"),
        S("stdout", r"^price sync: 4000 requests, 1 failed$", "the client's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)


_JOBLIB_TILES = """\
import math

from joblib import Parallel, delayed

from geo.tiles import render_tile

if __name__ == "__main__":
    tiles = [(zoom, x) for zoom in range(8, 14) for x in range(900)]
    sizes = Parallel(n_jobs=2, verbose=100, batch_size=1)(delayed(render_tile)(zoom, x) for zoom, x in tiles)
    print(f"rendered {len(sizes)} tiles, {sum(sizes) / 1e6:.1f} MB", flush=True)
"""

_JOBLIB_RENDER = """\
import math

ELEVATION = {(zoom, x): (zoom * 131 + x * 17) % 2400 for zoom in range(8, 14) for x in range(900)}
ELEVATION[(13, 412)] = None


def shade(height, zoom):
    return math.sqrt(height) * (zoom - 7) / 3.0


def render_tile(zoom, x):
    height = ELEVATION[(zoom, x)]
    return int(2048 + shade(height, zoom) * 40)
"""


@recipe("joblib-parallel-verbose-one-task-raised", "joblib", "crash", pyver("joblib"), needs=("python",))
def _joblib(root):
    """Write the `joblib-parallel-verbose-one-task-raised` project under `root`; return its command and signals."""
    write(root, "geo/__init__.py", "")
    write(root, "geo/tiles.py", _JOBLIB_RENDER)
    write(root, "render_tiles.py", _JOBLIB_TILES)
    return Run(["python", "render_tiles.py"], [
        S("stderr", r"^joblib\.externals\.loky\.process_executor\._RemoteTraceback: ", "the worker's trace's start"),
        S("stderr", r'^  File ".*/geo/tiles\.py", line \d+, in (render_tile|shade)$', "the task's own frames"),
        S("stderr", r'^  File ".*/render_tiles\.py", line \d+, in <module>$', "the script's own frame"),
        S("stderr", r"^TypeError: must be real number, not NoneType$", "the exception, in the worker and re-raised"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1), timeout=600)


def _robot_suite(n: int) -> str:
    """An acceptance suite of the web shop's checkout, in the style a growing team writes: some keywords
    lower case, no documentation, long lines, settings out of order."""
    tests = "".join(
        f"checkout scenario {n}-{k}\n    open browser to shop    ${{URL}}/cart?id={n * 100 + k}\n"
        f"    add item to cart    sku-{n * 31 + k}    quantity=2\n"
        f"    Proceed To Checkout    shipping=standard    payment=card    coupon=SPRING{k}    "
        f"gift_wrap=${{FALSE}}    newsletter=${{FALSE}}    express=${{FALSE}}\n"
        f"    Log    checkout {n}-{k} done\n    Should Be Equal    ${{TOTAL}}    ${{EXPECTED_{k}}}\n\n"
        for k in range(6))
    keywords = ("open browser to shop\n    [Arguments]    ${url}\n    Log    opening ${url}\n\n"
                "add item to cart\n    [Arguments]    ${sku}    ${quantity}\n    Log    ${sku} x ${quantity}\n\n"
                "Proceed To Checkout\n    [Arguments]    &{options}\n    Log    checkout with ${options}\n")
    return (f"*** Settings ***\nLibrary    Collections\nTest Tags    checkout    suite-{n}\n\n"
            f"*** Variables ***\n${{URL}}    http://localhost:8080\n${{TOTAL}}    10\n"
            + "".join(f"${{EXPECTED_{k}}}    10\n" for k in range(6)) +
            f"\n*** Test Cases ***\n{tests}*** Keywords ***\n{keywords}")


@recipe("robocop-checkout-suites-two-errors", "robocop", "linter", [vbin("robocop"), "--version"], needs=("robocop",))
def _robocop(root):
    """Write the `robocop-checkout-suites-two-errors` project under `root`; return its command and signals."""
    for n in range(48):
        write(root, f"tests/checkout/checkout_{n:02d}.robot", _robot_suite(n))
    refunds = _robot_suite(48).replace("checkout scenario 48-3\n", "checkout scenario 48-1\n")
    write(root, "tests/refunds/refunds.robot", refunds)
    vouchers = _robot_suite(49).replace(
        "    Log    checkout 49-2 done\n",
        "    FOR    ${code}    IN    SPRING1    SPRING2\n        Log    ${code}\n")
    write(root, "tests/vouchers/vouchers.robot", vouchers)
    return Run(["robocop", "check", "tests"], [
        S("stdout", r"^tests/vouchers/vouchers\.robot:\d+:\d+ ERR12 Invalid for loop syntax", "an error among 1,950 style findings"),
        S("stdout", r"^tests/refunds/refunds\.robot:\d+:\d+ DUP01 Multiple test cases with name", "the other error"),
        S("stdout", r"^Found \d+ issues\.$", "the count"),
    ], expect_exit=exits(1))


_CATALOG_WSGI = """\
import json
from wsgiref.simple_server import WSGIRequestHandler, make_server

BOOKS = {n: {"id": n, "title": f"Volume {n}", "pages": 120 + n * 3, "stock": (n * 7) % 40} for n in range(1, 401)}
BOOKS[233]["pages"] = 818


def app(environ, start_response):
    parts = environ["PATH_INFO"].strip("/").split("/")
    if len(parts) == 2 and parts[0] == "books" and parts[1].isdigit() and int(parts[1]) in BOOKS:
        body, status = json.dumps(BOOKS[int(parts[1])]), "200 OK"
    else:
        body, status = json.dumps({"error": "not found"}), "404 Not Found"
    start_response(status, [("Content-Type", "application/json")])
    return [body.encode()]


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


if __name__ == "__main__":
    make_server("127.0.0.1", 19122, app, handler_class=Quiet).serve_forever()
"""


def _gabbi_file(shelf: int) -> str:
    """A gabbi YAML file of 20 book lookups for one shelf (ids 20*shelf+1 ...), each checking its pages."""
    tests = "".join(f"- name: book {n} has {120 + n * 3} pages\n  GET: /books/{n}\n  status: 200\n"
                    f"  response_json_paths:\n    $.id: {n}\n    $.pages: {120 + n * 3}\n"
                    for n in range(shelf * 20 + 1, shelf * 20 + 21))
    return f"tests:\n{tests}"


@recipe("gabbi-run-catalog-one-failure", "gabbi-run", "test-runner", pyver("gabbi"), needs=("gabbi-run",))
def _gabbi(root):
    """Write the `gabbi-run-catalog-one-failure` project under `root`; return its command and signals."""
    write(root, "catalog_app.py", _CATALOG_WSGI)
    for shelf in range(20):
        write(root, f"gabbits/shelf{shelf:02d}.yaml", _gabbi_file(shelf))
    argv = ["gabbi-run", "127.0.0.1:19122", "--", *(f"gabbits/shelf{s:02d}.yaml" for s in range(20))]
    command = ("python catalog_app.py & server=$!; " + wait_port(19122) + " ".join(argv) +
               "; status=$?; kill $server; wait $server 2>/dev/null; exit $status")
    return Run(argv, [
        S("stderr", r"^\.\.\. ✗ gabbi-runner\.shelf11_book_233_has_819_pages$", "the one failing test among 400"),
        S("stderr", r"^FAIL: gabbi-runner\.shelf11_book_233_has_819_pages$", "its failure's heading"),
        S("stderr", r"^\t819 != 818 : Unable to match \$\.pages as 819, got 818$", "why it failed"),
        S("stderr", r"^FAILED \(failures=1\)$", "the failing file's count"),
        S("stderr", r"^There were failures in the following files:$", "the run's summary"),
        S("stderr", r"^gabbits/shelf11\.yaml$", "the file that failed"),
    ], command=command, expect_exit=exits(1), timeout=300)


def _numpydoc_module(n: int) -> str:
    """A signal-processing module whose docstrings drifted from their signatures as the code grew."""
    funcs = "".join(
        f"def filter_{n}_{k}(samples, cutoff, order=4, axis=-1):\n"
        f'    """Apply filter {k} of stage {n} to the samples.\n\n    Parameters\n    ----------\n'
        f"    samples : ndarray\n        The input signal.\n    cutoff : float\n        Cutoff frequency in Hz.\n"
        f'\n    Returns\n    -------\n    ndarray\n        The filtered signal.\n    """\n'
        f"    return [s * cutoff / order for s in samples]\n\n\n"
        f"def window_{n}_{k}(size):\n    return [1.0] * size\n\n\n" for k in range(5))
    return f'"""Stage {n} of the filter bank."""\n\n\n{funcs}'


@recipe("numpydoc-lint-filter-bank", "numpydoc", "linter", pyver("numpydoc"), needs=("numpydoc",))
def _numpydoc(root):
    """Write the `numpydoc-lint-filter-bank` project under `root`; return its command and signals."""
    for n in range(30):
        write(root, f"dsp/stage{n:02d}.py", _numpydoc_module(n))
    write(root, "dsp/resample.py", '"""Resampling."""\n\n\ndef resample(samples, factor):\n'
          '    """Resample the signal by `ratio`.\n\n    Parameters\n    ----------\n    samples : ndarray\n'
          '        The input signal.\n    ratio : float\n        The ratio.\n\n    Returns\n    -------\n'
          '    ndarray\n        The resampled signal.\n\n    Examples\n    --------\n    >>> resample([1, 2], 2\n'
          '    """\n    return samples[:: int(factor)]\n')
    return Run(["numpydoc", "lint", *(f"dsp/stage{n:02d}.py" for n in range(30)), "dsp/resample.py"], [
        S("stderr", r"^dsp/resample\.py:\d+: PR02 Unknown parameters \{'ratio'\}$", "the one finding of its kind among 750"),
        S("stderr", r"^dsp/resample\.py:\d+: PR01 Parameters \{'factor'\} not documented$", "its other half: the renamed parameter"),
    ], expect_exit=exits(1))


@recipe("flit-build-module-without-version", "flit", "build", [vbin("flit"), "--version"], needs=("flit",))
def _flit(root):
    """Write the `flit-build-module-without-version` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", '[build-system]\nrequires = ["flit_core>=3.4"]\nbuild-backend = "flit_core.buildapi"\n\n'
          '[project]\nname = "tidewatch"\nauthors = [{name = "Harbour Ops"}]\nreadme = "README.md"\n'
          'dynamic = ["version", "description"]\ndependencies = ["requests>=2.31"]\n\n'
          '[project.scripts]\ntidewatch = "tidewatch.cli:main"\n')
    write(root, "README.md", "# tidewatch\n\nTide gauge alerts for the harbour.\n")
    write(root, "tidewatch/__init__.py", '"""Tide gauge alerts for the harbour."""\n\nfrom .gauges import GAUGES\n\n'
          'VERSION = "1.4.0"\n')
    write(root, "tidewatch/gauges.py", "GAUGES = ['north-pier', 'south-pier', 'lock-gate']\n")
    write(root, "tidewatch/cli.py", "def main():\n    print('ok')\n")
    return Run(["flit", "build", "--no-use-vcs"], [
        S("stderr", r"^Cannot package module without a version string\. ", "the error"),
    ], expect_exit=exits(1))


def _terraform_service(n: int) -> str:
    """One service's Terraform: a bucket for its assets, a security group, a queue and a database, written
    quickly by a team that ships first and hardens later."""
    name = f"svc{n:02d}"
    return (f'resource "aws_s3_bucket" "{name}_assets" {{\n  bucket = "shop-{name}-assets"\n  tags = {{ team = "shop" }}\n}}\n\n'
            f'resource "aws_security_group" "{name}_web" {{\n  name = "{name}-web"\n  description = "web access"\n'
            f'  ingress {{\n    description = "ssh"\n    from_port = 22\n    to_port = 22\n    protocol = "tcp"\n'
            f'    cidr_blocks = ["0.0.0.0/0"]\n  }}\n  egress {{\n    description = "all"\n    from_port = 0\n'
            f'    to_port = 0\n    protocol = "-1"\n    cidr_blocks = ["0.0.0.0/0"]\n  }}\n}}\n\n'
            f'resource "aws_sqs_queue" "{name}_jobs" {{\n  name = "{name}-jobs"\n}}\n\n'
            f'resource "aws_db_instance" "{name}_db" {{\n  identifier = "{name}-db"\n  engine = "postgres"\n'
            f'  instance_class = "db.t3.micro"\n  allocated_storage = 20\n  username = "app"\n'
            f'  password = var.db_password\n  skip_final_snapshot = true\n}}\n')


@recipe("checkov-terraform-services", "checkov", "linter", [vbin("checkov"), "--version"], needs=("checkov",))
def _checkov(root):
    """Write the `checkov-terraform-services` project under `root`; return its command and signals."""
    write(root, "infra/variables.tf", 'variable "db_password" {\n  type = string\n  sensitive = true\n}\n')
    write(root, "infra/providers.tf", 'provider "aws" {\n  region = "eu-west-1"\n'
          '  access_key = "AKIAIOSFODNN7EXAMPLE"\n  secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n}\n')
    for n in range(30):
        write(root, f"infra/svc{n:02d}.tf", _terraform_service(n))
    return Run(["checkov", "-d", "infra", "--framework", "terraform"], [
        S("stdout", r"^Passed checks: \d+, Failed checks: \d+, Skipped checks: 0$", "the counts"),
        S("stdout", r'^Check: CKV_AWS_41: "Ensure no hard coded AWS access key and secret key exists in provider"$',
          "the one hard-coded credential among hundreds of routine findings"),
        S("stdout", r"^\tFAILED for resource: aws\.default$", "where it failed"),
        S("stdout", r"^\tFile: /providers\.tf:1-5$", "its file"),
    ], env={"BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": None}, expect_exit=exits(1), timeout=600)


def _notebook(cells: list[str]) -> str:
    """A minimal nbformat 4 notebook of code cells, on the python3 kernel."""
    import json

    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": src} for i, src in enumerate(cells)]}, indent=1)


_REGIONS = ["north", "south", "east", "west", "alps", "coast", "lakes", "delta", "plains", "hills", "fjords",
            "islands"]


@recipe("treon-notebooks-one-cell-error", "treon", "test-runner", pyver("treon"), needs=("treon",))
def _treon(root):
    """Write the `treon-notebooks-one-cell-error` project under `root`; return its command and signals."""
    write(root, "sales/__init__.py", "")
    write(root, "sales/load.py", "def monthly(region):\n    base = sum(ord(c) for c in region)\n"
          "    return {m: base * (m + 1) % 997 for m in range(12)}\n\n\ndef share(sales, total):\n"
          "    return {m: round(v / total[m], 3) for m, v in sales.items()}\n")
    for region in _REGIONS:
        total = "{m: 0 for m in range(12)}" if region == "delta" else "{m: 5000 for m in range(12)}"
        write(root, f"notebooks/{region}.ipynb", _notebook([
            "import sys\nsys.path.insert(0, '..')\nfrom sales.load import monthly, share",
            f"sales = monthly({region!r})\nprint(sorted(sales.items())[:3])",
            f"total = {total}\nshares = share(sales, total)",
            "print(max(shares.values()))"]))
    return Run(["treon", "notebooks", "--threads=2"], [
        S("stderr", r"^ERROR in testing notebooks/delta\.ipynb$", "the notebook that failed among 12"),
        S("stderr", r"ZeroDivisionError.* +Traceback \(most recent call last\)$", "the cell's trace's start"),
        S("stderr", r"/sales/load\.py:7.*, in .*share\b", "the project's frame that raised"),
        S("stderr", r"ZeroDivisionError.*: division by zero$", "the exception"),
        S("stderr", r"^notebooks/delta\.ipynb +-- FAILED", "its line in the result"),
        S("stderr", r"^11 succeeded, 1 failed, out of 12 notebooks tested\.$", "the counts"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(255), timeout=600)


def _ledger_module(n: int) -> str:
    """One posting rule of the ledger: validation and a branchy rounding step."""
    return (f"def post_{n}(amount, currency='EUR'):\n    if amount < 0:\n        raise ValueError('negative')\n"
            f"    if currency != 'EUR':\n        amount = amount * {1 + n / 100:.2f}\n"
            f"    cents = round(amount * 100)\n    if cents % 2:\n        cents += 1\n    return cents / 100\n\n\n"
            f"def reverse_{n}(amount):\n    return -post_{n}(amount)\n")


@recipe("slipcover-ledger-one-module-untested", "slipcover", "coverage", pyver("slipcover"), needs=("python",))
def _slipcover(root):
    """Write the `slipcover-ledger-one-module-untested` project under `root`; return its command and signals."""
    write(root, "ledger/__init__.py", "")
    tests = []
    for n in range(140):
        write(root, f"ledger/rule_{n:03d}.py", _ledger_module(n))
        if n != 97:
            tests.append(f"    def test_rule_{n:03d}(self):\n        from ledger.rule_{n:03d} import post_{n}\n"
                         f"        self.assertGreaterEqual(post_{n}(12.345), 12.34)\n"
                         f"        self.assertGreaterEqual(post_{n}(3.5, 'USD'), 3.5)\n")
    write(root, "tests/__init__.py", "")
    write(root, "tests/test_rules.py", "import unittest\n\n\nclass Rules(unittest.TestCase):\n" + "".join(tests))
    return Run(["python", "-m", "slipcover", "--branch", "--source", "ledger", "-m", "unittest", "discover", "-s", "tests",
                "-t", "."], [
        S("stdout", r"^ledger/rule_097\.py +11 +11 +6 +6 +0 +0 +1-13$", "the one module no test reaches, among 140"),
        S("stdout", r"^\(summary\) +\d+ ", "the totals"),
        S("stderr", r"^Ran 139 tests in ", "the test run's count"),
        S("stderr", r"^OK$", "its verdict"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0))


def _shipping_tests(n: int) -> str:
    """A unittest module of 40 parcel-label checks for one carrier."""
    cases = "".join(f"    def test_label_{k:02d}(self):\n        self.assertEqual(label({n}, {k}), "
                    f"'{'C%02d' % n}-{k:04d}-{(n * 40 + k) % 97:02d}')\n\n" for k in range(40))
    return f"import unittest\n\nfrom shipping.labels import label\n\n\nclass Carrier{n:02d}(unittest.TestCase):\n{cases}"


@recipe("unittest-parallel-labels-one-failure", "unittest-parallel", "test-runner", pyver("unittest-parallel"),
        needs=("unittest-parallel",))
def _unittest_parallel(root):
    """Write the `unittest-parallel-labels-one-failure` project under `root`; return its command and signals."""
    write(root, "shipping/__init__.py", "")
    write(root, "shipping/labels.py", "def check_digit(carrier, seq):\n    value = (carrier * 40 + seq) % 97\n"
          "    return value if (carrier, seq) != (23, 17) else value + 1\n\n\n"
          "def label(carrier, seq):\n    return f'C{carrier:02d}-{seq:04d}-{check_digit(carrier, seq):02d}'\n")
    write(root, "tests/__init__.py", "")
    for n in range(36):
        write(root, f"tests/test_carrier{n:02d}.py", _shipping_tests(n))
    return Run(["unittest-parallel", "-v", "-t", ".", "-s", "tests", "-j", "2"], [
        S("stderr", r"^test_label_17 \(tests\.test_carrier23\.Carrier23\.test_label_17\) \.\.\. FAIL$",
          "the one failing test among 1,440"),
        S("stderr", r"^test_label_17 \(tests\.test_carrier23\.Carrier23\.test_label_17\)$", "its failure's heading"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'/tests/test_carrier23\.py", line \d+, in test_label_17$', "the test's frame"),
        S("stderr", r"^AssertionError: 'C23-0017-65' != 'C23-0017-64'$", "the failed assertion"),
        S("stderr", r"^Ran 1440 tests in ", "the count"),
        S("stderr", r"^FAILED \(failures=1\)$", "the verdict"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))
