"""Cloaked recipes for PyPI tools and Python programs: stestr, Scrapy, huey, Snakemake, frictionless, nbconvert,
pip-compile, yoyo, pydoclint, pytype, Hypercorn, docstr-coverage, check-manifest, cfn-lint.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import os
import zipfile

from cloaked_common import Run, S, exits, pyver, recipe, sh, vbin, write

NPM_PINS: list[str] = []
PY_PINS = ["stestr==4.2.1", "Scrapy==2.19.0", "huey==3.5.4", "snakemake==9.27.1", "frictionless==5.21.0",
           "nbconvert==7.17.2", "ipykernel==7.4.0", "pip-tools==7.7.0", "yoyo-migrations==9.0.0", "pydoclint==0.12.0",
           "pytype==2024.10.11", "hypercorn==0.18.0", "docstr-coverage==2.3.2", "check-manifest==0.51",
           "cfn-lint==1.58.0"]
APT_PINS: dict[str, str] = {}

def _stestr_module(part: int, broken: tuple[int, int, int]) -> str:
    """A unittest module of eight classes of 50 rate tests; `broken` (part, class, test) expects a wrong rate."""
    classes = []
    for k in range(8):
        tests = "".join(f"    def test_rate_{n:02d}(self):\n        self.assertEqual(rate({part * 1000 + k * 100 + n}, {n % 5}), "
                        f"{(part * 1000 + k * 100 + n) * (n % 5) // 10 + (1 if (part, k, n) == broken else 0)})\n\n"
                        for n in range(50))
        classes.append(f"class Zone{k}Tests(unittest.TestCase):\n{tests}\n")
    return "import unittest\n\nfrom freight.rates import rate\n\n\n" + "".join(classes)


@recipe("stestr-one-failure-among-thousands", "stestr", "test-runner", [vbin("stestr"), "--version"], needs=("stestr",))
def _stestr(root):
    """Write the `stestr-one-failure-among-thousands` project under `root`; return its command and signals."""
    write(root, ".stestr.conf", "[DEFAULT]\ntest_path=./freight/tests\ntop_dir=./\n")
    write(root, "freight/__init__.py", "")
    write(root, "freight/rates.py", "def rate(weight, zone):\n    return weight * zone // 10\n")
    write(root, "freight/tests/__init__.py", "")
    for part in range(8):
        write(root, f"freight/tests/test_rates_{part}.py", _stestr_module(part, (5, 3, 27)))
    return Run(["stestr", "run", "--concurrency", "2"], [
        S("stdout", r"^\{\d\} freight\.tests\.test_rates_5\.Zone3Tests\.test_rate_27 \[[\d.]+s\] \.\.\. FAILED$",
          "the one failing test among 3,200"),
        S("stdout", r"^    Traceback \(most recent call last\):$", "the trace's start"),
        S("stdout", r'^      File ".*/freight/tests/test_rates_5\.py", line \d+, in test_rate_27$', "the test's own frame"),
        S("stdout", r"^    AssertionError: 1065 != 1066$", "the assertion that failed"),
        S("stdout", r"^Failed 1 tests - output below:$", "the failures' heading"),
        S("stdout", r"^Ran: 3200 tests in |^ - Failed: 1$", "the totals"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


@recipe("scrapy-crawl-one-spider-error", "scrapy", "log", [vbin("scrapy"), "version"], needs=("scrapy",))
def _scrapy(root):
    """Write the `scrapy-crawl-one-spider-error` project under `root`; return its command and signals."""
    for n in range(500):
        price = "" if n == 233 else f'<span class="price">{n * 7 % 90 + 10}.50</span>'
        write(root, f"site/product-{n:03d}.html", f"<html><body><h1>Lamp model {n}</h1>{price}"
              f"<p class=\"sku\">SKU-{n:05d}</p></body></html>\n")
    links = "".join(f'<a href="product-{n:03d}.html">Lamp {n}</a>\n' for n in range(500))
    write(root, "site/index.html", f"<html><body>\n{links}</body></html>\n")
    write(root, "catalog_spider.py", "import scrapy\n\n\nclass CatalogSpider(scrapy.Spider):\n    name = 'catalog'\n"
          f"    start_urls = ['file://{root}/site/index.html']\n    custom_settings = {{'CONCURRENT_REQUESTS': 4}}\n\n"
          "    def parse(self, response):\n        for href in response.css('a::attr(href)').getall():\n"
          "            yield response.follow(href, self.parse_product)\n\n    def parse_product(self, response):\n"
          "        price = response.css('span.price::text').get()\n        yield {\n"
          "            'name': response.css('h1::text').get(),\n            'sku': response.css('p.sku::text').get(),\n"
          "            'price': float(price.replace(',', '')),\n        }\n")
    return Run(["scrapy", "runspider", "catalog_spider.py"], [
        S("stderr", r"\[scrapy\.core\.scraper\] ERROR: Spider error processing <GET file://.*/site/product-233\.html>",
          "the one failed page among 501"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/catalog_spider\.py", line \d+, in parse_product$', "the spider's own frame"),
        S("stderr", r"^AttributeError: 'NoneType' object has no attribute 'replace'$", "the exception"),
        S("stderr", r"^ 'log_count/ERROR': 1,$|^ 'spider_exceptions/AttributeError': 1,$", "the stats' count of errors"),
        S("stderr", r"INFO: Spider closed \(finished\)$", "the end of the crawl"),
    ], expect_exit=exits(0))


@recipe("huey-consumer-task-exception", "huey_consumer", "log", pyver("huey"), needs=("huey_consumer",))
def _huey(root):
    """Write the `huey-consumer-task-exception` project under `root`; return its command and signals."""
    write(root, "billing/__init__.py", "")
    write(root, "billing/tasks.py", "from huey import SqliteHuey\n\nhuey = SqliteHuey(filename='queue.db')\n"
          "ACCOUNTS = {n: {'plan': 'pro' if n % 3 else 'free'} for n in range(400) if n != 271}\n\n\n"
          "@huey.task()\ndef charge(account_id):\n    plan = ACCOUNTS[account_id]['plan']\n"
          "    return {'account': account_id, 'amount': 30 if plan == 'pro' else 0}\n")
    sh([vbin("python"), "-c", "from billing.tasks import charge\nfor n in range(400):\n    charge(n)\n"], root,
       env={"PYTHONPATH": root})
    command = "timeout -s INT 8 huey_consumer billing.tasks.huey --workers 2 --worker-type thread; exit 0"
    return Run(["huey_consumer", "billing.tasks.huey", "--workers", "2", "--worker-type", "thread"], [
        S("stderr", r"ERROR:huey:Worker-\d:Unhandled exception in task [0-9a-f-]+\.$", "the one failed task among 400"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/billing/tasks\.py", line \d+, in charge$', "the task's own frame"),
        S("stderr", r"^KeyError: 271$", "the exception"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0))


@recipe("snakemake-keep-going-rule-error", "snakemake", "build", [vbin("snakemake"), "--version"], needs=("snakemake",))
def _snakemake(root):
    """Write the `snakemake-keep-going-rule-error` project under `root`; return its command and signals."""
    for n in range(48):
        rows = "".join(f"s{n:02d}\tread{r}\t{(n * 31 + r * 7) % 97}\n" for r in range(20))
        write(root, f"data/s{n:02d}.tsv", "sample\tread\tquality\n" + (rows if n != 29 else rows.replace("\t", " ", 5)))
    write(root, "Snakefile", r'''
        SAMPLES = [f"s{n:02d}" for n in range(48)]


        rule all:
            input: "results/summary.tsv"


        rule filter:
            input: "data/{sample}.tsv"
            output: "work/{sample}.filtered.tsv"
            shell: """awk -F'\t' 'NF != 3 {{ print FILENAME ": bad row " NR > "/dev/stderr"; exit 3 }} $3 > 20' {input} > {output}"""


        rule count:
            input: "work/{sample}.filtered.tsv"
            output: "work/{sample}.count"
            shell: "wc -l < {input} > {output}"


        rule summary:
            input: expand("work/{sample}.count", sample=SAMPLES)
            output: "results/summary.tsv"
            shell: "cat {input} > {output}"
        ''')
    return Run(["snakemake", "--cores", "1", "--keep-going"], [
        S("stderr", r"^data/s29\.tsv: bad row 2$", "the failed command's own message"),
        S("stderr", r"^RuleException:$", "the exception's start"),
        S("stderr", r'^CalledProcessError in file ".*/Snakefile", line 11:$', "the error and its place in the Snakefile"),
        S("stderr", r"^Command 'set -euo pipefail; .* returned non-zero exit status 3\.$", "the command that failed"),
        S("stderr", r"^Error in rule filter:$", "the failed rule"),
        S("stderr", r"^94 of 98 steps \(96%\) done$", "how far the run got"),
        S("stderr", r"^Exiting because a job execution failed\. Look above for error messages$", "the verdict"),
        S("stderr", r"^At least one job did not complete successfully\.$", "the final error"),
    ], expect_exit=exits(1))


@recipe("frictionless-validate-bad-rows", "frictionless", "data", [vbin("frictionless"), "--version"],
        needs=("frictionless",))
def _frictionless(root):
    """Write the `frictionless-validate-bad-rows` project under `root`; return its command and signals."""
    rows = []
    for n in range(3000):
        qty = "twelve" if n == 1844 else str(n % 40 + 1)
        day = "2026-13-02" if n == 2710 else f"2026-{n % 12 + 1:02d}-{n % 28 + 1:02d}"
        rows.append(f"{n + 1},SKU-{n % 700:05d},{qty},{day}\n")
    rows.insert(905, "906,SKU-00205,3\n")
    write(root, "orders.csv", "id,sku,quantity,ordered_on\n" + "".join(rows))
    write(root, "orders.schema.yaml", "fields:\n  - name: id\n    type: integer\n  - name: sku\n    type: string\n"
          "  - name: quantity\n    type: integer\n  - name: ordered_on\n    type: date\nprimaryKey: [id]\n")
    return Run(["frictionless", "validate", "orders.csv", "--schema", "orders.schema.yaml"], [
        S("stdout", r"^│ orders │ table │ orders\.csv │ INVALID │$", "the verdict"),
        S("stdout", r"^│ (907|908|1847|2713) +│ ", "the four invalid rows among 3,001"),
    ], expect_exit=exits(1))


def _notebook(cells: list[str]) -> str:
    """An nbformat 4 notebook of code cells."""
    import json

    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{n:02d}", "metadata": {},
                                  "outputs": [], "source": src} for n, src in enumerate(cells)],
                       "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1)


@recipe("nbconvert-execute-cell-error", "jupyter-nbconvert", "crash", [vbin("jupyter-nbconvert"), "--version"],
        needs=("jupyter-nbconvert",))
def _nbconvert(root):
    """Write the `nbconvert-execute-cell-error` project under `root`; return its command and signals."""
    write(root, "sales/__init__.py", "")
    write(root, "sales/clean.py", "def normalise(rows):\n    out = []\n    for row in rows:\n"
          "        out.append({**row, 'region': row['region'].strip().upper()})\n    return out\n")
    cells = ["import csv\nimport statistics\n\nfrom sales.clean import normalise",
             "rows = [{'region': f' r{n % 6} ', 'amount': n * 3.5} for n in range(200)]\nrows[117]['region'] = None",
             "len(rows)"]
    cells += [f"sum(r['amount'] for r in rows[{k * 20}:{k * 20 + 20}])" for k in range(8)]
    cells += ["clean = normalise(rows)", "by_region = {}\nfor r in clean:\n    by_region.setdefault(r['region'], []).append(r['amount'])",
              "{k: statistics.mean(v) for k, v in by_region.items()}"]
    write(root, "analysis.ipynb", _notebook(cells))
    return Run(["jupyter-nbconvert", "--to", "notebook", "--execute", "analysis.ipynb", "--output", "analysis.out.ipynb"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r"^nbclient\.exceptions\.CellExecutionError: An error occurred while executing the following cell:$",
          "the failure"),
        S("stderr", r"^clean = normalise\(rows\)$", "the failed cell"),
        S("stderr", r"/sales/clean\.py:4", "the project's own frame"),
        S("stderr", r"AttributeError.*: 'NoneType' object has no attribute 'strip'$", "the exception"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


def _wheel(folder: str, name: str, version: str, requires: list[str]) -> None:
    """Write a pure wheel of distribution `name` at `version` requiring `requires` into `folder`."""
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{name}/__init__.py": f"VERSION = '{version}'\n", f"{info}/METADATA": meta,
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    os.makedirs(folder, exist_ok=True)
    with zipfile.ZipFile(os.path.join(folder, f"{name}-{version}-py3-none-any.whl"), "w") as archive:
        for path, text in sorted(files.items()):
            archive.writestr(path, text)
        archive.writestr(f"{info}/RECORD", "".join(f"{p},,\n" for p in files) + f"{info}/RECORD,,\n")


@recipe("pip-compile-conflicting-pins", "pip-compile", "package-manager", [vbin("pip-compile"), "--version"],
        needs=("pip-compile",))
def _pip_compile(root):
    """Write the `pip-compile-conflicting-pins` project under `root`; return its command and signals."""
    wheels = os.path.join(root, "wheels")
    for version in ("1.8.0", "1.9.2", "2.0.1", "2.1.0"):
        _wheel(wheels, "shopschema", version, [])
    for name in ("shopauth", "shoplog", "shopcache", "shopmail"):
        _wheel(wheels, name, "1.0.0", ["shopschema>=1.8"])
    _wheel(wheels, "shopapi", "3.2.0", ["shopauth>=1.0", "shoplog>=1.0", "shopschema>=2.0"])
    _wheel(wheels, "shopworker", "1.5.0", ["shopcache>=1.0", "shopmail>=1.0", "shopschema<2"])
    write(root, "requirements.in", "shopapi==3.2.0\nshopworker==1.5.0\n")
    return Run(["pip-compile", "--no-index", "--find-links", "wheels", "requirements.in"], [
        S("stderr", r"^  ERROR: Cannot install -r requirements\.in \(line 1\) and -r requirements\.in \(line 2\) because ",
          "the conflict"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the traces' starts"),
        S("stderr", r"ResolutionImpossible: \[RequirementInformation\(requirement=SpecifierRequirement\('shopschema>=2\.0'\)",
          "the requirement in conflict"),
        S("stderr", r"^pip\._internal\.exceptions\.DistributionNotFound: ResolutionImpossible", "the final exception"),
    ], expect_exit=exits(1, 2))


@recipe("yoyo-apply-migration-fails", "yoyo", "database", pyver("yoyo-migrations"), needs=("yoyo",))
def _yoyo(root):
    """Write the `yoyo-apply-migration-fails` project under `root`; return its command and signals."""
    write(root, "migrations/0001_customers.sql", "CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL);\n")
    for n in range(2, 31):
        write(root, f"migrations/{n:04d}_table_{n}.sql", f"-- depends: {n - 1:04d}_{'customers' if n == 2 else f'table_{n - 1}'}\n"
              f"CREATE TABLE ledger_{n} (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount INTEGER);\n"
              f"CREATE INDEX ledger_{n}_customer ON ledger_{n}(customer_id);\n")
    write(root, "migrations/0018_table_18.sql", "-- depends: 0017_table_17\n"
          "CREATE TABLE ledger_18 (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), amount INTEGER);\n"
          "CREATE INDEX ledger_18_customer ON ledger_18(customer_ref);\n")
    return Run(["yoyo", "apply", "--batch", "--database", "sqlite:///shop.db", "migrations"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r"^sqlite3\.OperationalError: no such column: customer_ref$", "the error of the failed migration"),
    ], expect_exit=exits(1))


def _pydoclint_module(n: int) -> str:
    """A module of three functions whose Google docstrings miss an argument."""
    funcs = "".join(f"def fee_{n}_{k}(amount: int, rate: float, region: str) -> float:\n"
                    f"    \"\"\"Compute fee {k} of group {n}.\n\n    Args:\n        amount: The amount in cents.\n"
                    f"        rate: The rate.\n\n    Returns:\n        The fee.\n    \"\"\"\n    return amount * rate\n\n\n"
                    for k in range(3))
    return funcs


@recipe("pydoclint-docstring-mismatches", "pydoclint", "linter", [vbin("pydoclint"), "--version"], needs=("pydoclint",))
def _pydoclint(root):
    """Write the `pydoclint-docstring-mismatches` project under `root`; return its command and signals."""
    for n in range(90):
        write(root, f"fees/f{n:02d}.py", _pydoclint_module(n))
    write(root, "fees/f63.py", _pydoclint_module(63) + "def refund_63(amount: int) -> int:\n"
          "    \"\"\"Refund an amount.\n\n    Args:\n        amount: The amount in cents.\n\n    Returns:\n"
          "        The refunded amount.\n    \"\"\"\n    if amount < 0:\n        raise ValueError('negative refund')\n"
          "    return amount\n")
    return Run(["pydoclint", "--style=google", "fees"], [
        S("stderr", r"^fees/f63\.py$", "the heading of the file with the different findings"),
        S("stderr", r"^    40: DOC(105|501|503): Function `refund_63`", "the findings of another kind among 1,350"),
    ], expect_exit=exits(1))


def _pytype_module(n: int) -> str:
    """A small typed module of the `stock` package."""
    return (f"from typing import Dict, List\n\n\ndef count_{n}(items: List[str]) -> Dict[str, int]:\n"
            "    out: Dict[str, int] = {}\n    for item in items:\n        out[item] = out.get(item, 0) + 1\n    return out\n")


@recipe("pytype-keep-going-errors", "pytype", "type-checker", [vbin("pytype"), "--version"], needs=("pytype",))
def _pytype(root):
    """Write the `pytype-keep-going-errors` project under `root`; return its command and signals."""
    write(root, "stock/__init__.py", "")
    for n in range(200):
        write(root, f"stock/m{n:03d}.py", _pytype_module(n))
    write(root, "stock/m047.py", _pytype_module(47) + "\n\ndef label_47(qty: int) -> str:\n    return 'qty: ' + qty\n")
    write(root, "stock/m102.py", _pytype_module(102) + "\n\ndef first_102(items: List[str]) -> str:\n"
          "    return items.first()\n")
    return Run(["pytype", "-k", "-j", "2", "stock"], [
        S("stdout", r"^FAILED: \[code=1\] .*/\.pytype/pyi/stock/m(047|102)\.pyi $", "the two modules that fail among 201"),
        S("stdout", r"/stock/m047\.py:12:12: error: in label_47: unsupported operand type\(s\) for \+: str and int "
          r"\[unsupported-operands\]$|/stock/m102\.py:12:12: error: in first_102: No attribute 'first' on list\[str\] "
          r"\[attribute-error\]$", "the two errors and their places"),
        S("stdout", r"^ninja: build stopped: cannot make progress due to previous errors\.$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("hypercorn-access-log-one-500", "hypercorn", "log", pyver("hypercorn"), needs=("hypercorn",))
def _hypercorn(root):
    """Write the `hypercorn-access-log-one-500` project under `root`; return its command and signals."""
    write(root, "stockapi/__init__.py", "")
    write(root, "stockapi/app.py", "import json\n\nLEVELS = {n: {'sku': f'SKU-{n:05d}', 'on_hand': n % 17} for n in range(600)}\n"
          "LEVELS[388] = {'sku': 'SKU-00388'}\n\n\nasync def app(scope, receive, send):\n    if scope['type'] != 'http':\n"
          "        return\n    item = int(scope['path'].rsplit('/', 1)[1])\n    level = LEVELS[item]\n"
          "    body = json.dumps({'sku': level['sku'], 'reorder': level['on_hand'] < 3}).encode()\n"
          "    await send({'type': 'http.response.start', 'status': 200,\n"
          "                'headers': [(b'content-type', b'application/json')]})\n"
          "    await send({'type': 'http.response.body', 'body': body})\n")
    write(root, "smoke.py", "import urllib.error\nimport urllib.request\n\nfailed = 0\nfor n in range(600):\n"
          "    try:\n        urllib.request.urlopen(f'http://127.0.0.1:18931/stock/{n}').read()\n"
          "    except urllib.error.HTTPError:\n        failed += 1\n"
          "print(f'smoke: 600 requests, {failed} failed', flush=True)\n")
    command = ("hypercorn --bind 127.0.0.1:18931 --access-logfile - --error-logfile - stockapi.app:app & server=$!; "
               "for i in $(seq 80); do python -c 'import socket; socket.create_connection((\"127.0.0.1\", 18931))' "
               "2>/dev/null && break; sleep 0.1; done; python smoke.py; kill -INT $server; wait $server; exit 0")
    return Run(["hypercorn", "--bind", "127.0.0.1:18931", "--access-logfile", "-", "--error-logfile", "-", "stockapi.app:app"], [
        S("stderr", r"\[ERROR\] Error in ASGI Framework$", "the one failed request's error"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/stockapi/app\.py", line \d+, in app$', "the app's own frame"),
        S("stderr", r"^KeyError: 'on_hand'$", "the exception"),
        S("stdout", r'"GET /stock/388 1\.1" 500 ', "the one 500 among 600 requests"),
        S("stdout", r"^smoke: 600 requests, 1 failed$", "the smoke run's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0))


@recipe("docstr-coverage-under-threshold", "docstr-coverage", "coverage", pyver("docstr-coverage"),
        needs=("docstr-coverage",))
def _docstr_coverage(root):
    """Write the `docstr-coverage-under-threshold` project under `root`; return its command and signals."""
    write(root, "warehouse/__init__.py", '"""Warehouse."""\n')
    for n in range(140):
        doc = f'"""Pick order {n}."""' if n % 4 != 1 else ""
        write(root, f"warehouse/pick_{n:03d}.py", f'"""Picking step {n}."""\n\n\ndef pick_{n}(order):\n'
              + (f"    {doc}\n" if doc else "") + f"    return order\n\n\nclass Picker{n}:\n    \"\"\"A picker.\"\"\"\n\n"
              f"    def run(self, order):\n" + (f"        {doc}\n" if doc else "") + f"        return pick_{n}(order)\n")
    return Run(["docstr-coverage", "warehouse", "--fail-under", "90", "--verbose", "3"], [
        S("stderr", r"^Overall statistics for 141 files:$", "the summary's heading"),
        S("stderr", r"^Needed: 561  -  Found: 491  -  Missing: 70$", "the counts"),
        S("stderr", r"^Total coverage: 87\.5%  -  Grade: ", "the coverage under the required 90 %"),
    ], expect_exit=exits(1))


@recipe("check-manifest-missing-from-sdist", "check-manifest", "package-manager", [vbin("check-manifest"), "--version"],
        needs=("check-manifest", "git"))
def _check_manifest(root):
    """Write the `check-manifest-missing-from-sdist` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", "[build-system]\nrequires = ['setuptools>=61']\nbuild-backend = 'setuptools.build_meta'\n\n"
          "[project]\nname = 'shipping-rules'\nversion = '0.4.0'\n\n[tool.setuptools.packages.find]\ninclude = ['shipping*']\n")
    write(root, "shipping/__init__.py", "")
    write(root, "shipping/rules.py", "RULES = {}\n")
    write(root, "shipping/data/zones.json", "{\"eu\": 1}\n")
    write(root, "README.md", "# shipping-rules\n")
    write(root, "CHANGES.rst", "0.4.0\n-----\n- zones\n")
    write(root, "tests/test_rules.py", "def test_rules():\n    assert True\n")
    write(root, "MANIFEST.in", "include README.md\n")
    sh("git init -q . && git add -A && git -c user.name=dev -c user.email=dev@example.test commit -qm init", root)
    return Run(["check-manifest", "--no-build-isolation"], [
        S("stderr", r"^lists of files in version control and sdist do not match!$", "the verdict"),
        S("stderr", r"^missing from sdist:$", "the list's heading"),
        S("stderr", r"^  (CHANGES\.rst|shipping/data/zones\.json|tests/test_rules\.py)$", "the files missing from the sdist"),
    ], expect_exit=exits(1))


def _queue(n: int) -> str:
    """One SQS queue of the orders stack, named with a `!Sub` that has no variable in it."""
    return (f"  OrdersQueue{n:02d}:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Sub 'orders-{n:02d}'\n"
            "      VisibilityTimeout: 30\n      MessageRetentionPeriod: 345600\n")


@recipe("cfn-lint-template-two-errors", "cfn-lint", "linter", [vbin("cfn-lint"), "--version"], needs=("cfn-lint",))
def _cfn_lint(root):
    """Write the `cfn-lint-template-two-errors` project under `root`; return its command and signals."""
    params = "".join(f"  Stage{n:02d}Name:\n    Type: String\n    Default: stage-{n:02d}\n" for n in range(60))
    queues = [_queue(n) for n in range(80)]
    queues[41] = queues[41].replace("VisibilityTimeout: 30", "VisibilityTimeout: thirty")
    queues[67] = queues[67].replace("      MessageRetentionPeriod", "      DelaySecond: 5\n      MessageRetentionPeriod")
    write(root, "orders-stack.yaml", "AWSTemplateFormatVersion: '2010-09-09'\nDescription: Order queues\nParameters:\n"
          + params + "Resources:\n" + "".join(queues))
    return Run(["cfn-lint", "orders-stack.yaml"], [
        S("stdout", r"^E3012 'thirty' is not of type 'integer'$|^E3002 Additional properties are not allowed \('DelaySecond' ",
          "the two errors among 140 warnings"),
        S("stdout", r"^orders-stack\.yaml:(435|592):7$", "their places"),
    ], expect_exit=exits(2, 4, 6, 8, 10, 12, 14))
