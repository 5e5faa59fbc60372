"""Sealed recipes for PyPI tools and Python programs: pycodestyle, mccabe, rstcheck, doc8, proselint,
djlint, green, autopep8, check-jsonschema, bashate, a tornado log, a MemoryError, csvclean, mdformat,
deptry.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json
import random

from sealed_common import Run, S, exits, recipe, vbin, write


def _style_module(n: int) -> str:
    """A module with a few long lines and spacing slips, the kind pycodestyle and autopep8 report."""
    return (f"import os,sys\n\n\ndef handler_{n}(event,context):\n"
            f"    result = {{'id':event['id'],'name':event.get('name'),'size':len(event['items']),'tag':'handler-{n}-default-tag'}}\n"
            f"    if result['size']>10 :\n        return  result\n    return None\n"
            f"def helper_{n}( x ):\n    return x*2 # double\n")


@recipe("pycodestyle-statistics", "pycodestyle", "linter", [vbin("pycodestyle"), "--version"], needs=("pycodestyle",))
def _pycodestyle(root):
    """Write the `pycodestyle-statistics` project under `root`; return its command and signals."""
    for n in range(30):
        write(root, f"handlers/h{n:02d}.py", _style_module(n))
    write(root, "handlers/h17.py", _style_module(17) + "\n\ndef pick(rows):\n    l = [r for r in rows if r]\n    return l\n")
    return Run(["pycodestyle", "--statistics", "--count", "handlers"], [
        S("stdout", r"^handlers/h17\.py:\d+:\d+: E741 ambiguous variable name 'l'$", "the one finding of its kind among hundreds"),
        S("stdout", r"^1 +E741 ambiguous variable name 'l'$", "its statistics row"),
        S("stderr", r"^\d+$", "the total count"),
    ], expect_exit=exits(1))


@recipe("mccabe-complex-functions", "mccabe", "linter", [vbin("python"), "-c", "import mccabe; print(mccabe.__version__)"],
        needs=("python",))
def _mccabe(root):
    """Write the `mccabe-complex-functions` project under `root`; return its command and signals."""
    branches = "".join(f"    if kind == 'k{n}':\n        total += {n}\n    elif kind == 'j{n}' and total > {n}:\n"
                       f"        total -= {n}\n" for n in range(6))
    helpers = "".join(f"def fee_{n}(amount):\n    return amount * {n} / 100\n\n\n" for n in range(400))
    write(root, "billing.py", helpers + "def price(kind, total):\n" + branches + "    return total\n\n\n"
          "def simple(x):\n    return x + 1\n\n\nclass Ledger:\n    def settle(self, rows):\n"
          "        for row in rows:\n            if row and row[0]:\n                try:\n                    yield row\n"
          "                except ValueError:\n                    continue\n            elif row:\n"
          "                yield None\n")
    return Run(["python", "-m", "mccabe", "--min", "1", "billing.py"], [
        S("stdout", r"'price' 13$", "the one complex function among 400 simple ones"),
        S("stdout", r"'Ledger\.settle' 6$", "the other function over 1"),
    ], expect_exit=exits(0))


RST_BAD = """Deploying
=========

Run the tool::

    deploy --env prod

.. code-block:: python

    def broken(:
        pass

See `the guide <https://example.org/guide>`_ and `missing target`_.

.. unknown-directive:: foo

Title
----
"""


@recipe("rstcheck-docs", "rstcheck", "docs", [vbin("rstcheck"), "--version"], needs=("rstcheck",))
def _rstcheck(root):
    """Write the `rstcheck-docs` project under `root`; return its command and signals."""
    for n in range(95):
        write(root, f"docs/page{n:02d}.rst", f"Release notes for part {n}\n=====\n\nSome text about part {n}.\n")
    write(root, "docs/deploy.rst", RST_BAD)
    return Run(["rstcheck", "-r", "docs"], [
        S("stderr", r"^docs/deploy\.rst:\d+: \((ERROR|SEVERE)/\d\)", "each error with its line"),
        S("stderr", r"^Error! Issues detected\.$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("doc8-docs", "doc8", "docs", [vbin("doc8"), "--version"], needs=("doc8",))
def _doc8(root):
    """Write the `doc8-docs` project under `root`; return its command and signals."""
    long = "This sentence keeps going well past the seventy-nine character limit that doc8 enforces by default."
    for n in range(160):
        write(root, f"docs/guide{n:03d}.rst", f"Guide {n}\n==========\n\n{long}\n")
    write(root, "docs/ops.rst", "Ops\n===\n\n\tTabbed line.\nTrailing space here.   \n\n\n")
    return Run(["doc8", "docs"], [
        S("stdout", r"^docs/ops\.rst:\d+: D00[023] ", "the findings other than the long lines repeated on every page"),
        S("stdout", r"^Total accumulated errors = \d+$", "the count"),
    ], expect_exit=exits(1))


@recipe("proselint-readme", "proselint", "linter", [vbin("proselint"), "--version"], needs=("proselint",))
def _proselint(root):
    """Write the `proselint-readme` project under `root`; return its command and signals."""
    notes = "".join(f"- Release {n}: the import is very fast now and the export is very stable.\n" for n in range(120))
    write(root, "CHANGELOG.md", "# Changes\n\n" + notes)
    write(root, "README.md", "# Shop\n\nThis is very unique software. It is a very  fast tool.\n\n"
          "In order to utilize it, you must first install it. At this point in time it works.\n\n"
          "The results are extremely unique and, needless to say, amazing!!\n")
    return Run(["proselint", "CHANGELOG.md", "README.md"], [
        S("stdout", r"^README\.md:\d+:\d+: (?!weasel_words)", "the findings other than the weasel word repeated in every entry"),
    ], expect_exit=exits(1))


@recipe("djlint-templates-lint", "djlint", "linter", [vbin("djlint"), "--version"], needs=("djlint",))
def _djlint(root):
    """Write the `djlint-templates-lint` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"templates/page{n:03d}.html", "{% extends 'base.html' %}\n{% block body %}\n"
              f"<div class=\"card\"><img src=\"card{n}.png\" alt=\"Card {n}\">Card {n}</div>\n{{% endblock %}}\n")
    write(root, "templates/order.html", "{% extends 'base.html' %}\n{% block body %}\n<img src=\"logo.png\">\n"
          "<a href=\"#\" onclick=\"go()\">Go</a>\n<div style=\"color:red\">Total</div>\n<FORM action=\"/pay\">\n"
          "<input type='text' name=card></FORM>\n{% endblock %}\n")
    return Run(["djlint", "templates", "--lint"], [
        S("stdout", r"templates/order\.html$", "the file with findings other than the image size"),
        S("stdout", r"^H0(13|21|09) ", "the findings of other kinds than the image size repeated on every page"),
        S("stdout", r"^Linted \d+ files?, found \d+ errors?\.$", "the count"),
    ], expect_exit=exits(1))


def _green_tests(root: str) -> None:
    """Eight test modules of 250 tests each; one assertion deep in the fifth module fails."""
    for m in range(8):
        body = "".join(f"    def test_rate_{n:03d}(self):\n        self.assertEqual(round({n} * 1.5, 1), {round(n * 1.5, 1)})\n"
                       for n in range(250))
        if m == 4:
            body += "    def test_rounding_half_even(self):\n        self.assertEqual(round(2.675, 2), 2.68)\n"
        write(root, f"tests/test_rates_{m}.py", f"import unittest\n\n\nclass Rates{m}Test(unittest.TestCase):\n{body}")
    write(root, "tests/__init__.py", "")


@recipe("green-verbose-deep-failure", "green", "test-runner", [vbin("green"), "--version"], needs=("green",))
def _green(root):
    """Write the `green-verbose-deep-failure` project under `root`; return its command and signals."""
    _green_tests(root)
    return Run(["green", "-vvv", "-s", "1", "tests"], [
        S("stdout", r"^Failure in test_rounding_half_even|^F +test_rounding_half_even", "the failed test"),
        S("stdout", r"AssertionError: 2\.67 != 2\.68", "the assertion"),
        S("stdout", r'File ".*tests/test_rates_4\.py", line \d+, in test_rounding_half_even', "the test's frame"),
        S("stdout", r"^FAILED \(", "the summary"),
    ], expect_exit=exits(1))


@recipe("autopep8-diff", "autopep8", "formatter", [vbin("autopep8"), "--version"], needs=("autopep8",))
def _autopep8(root):
    """Write the `autopep8-diff` project under `root`; return its command and signals."""
    for n in range(12):
        write(root, f"src/jobs/job{n:02d}.py", _style_module(n))
    return Run(["autopep8", "--diff", "--exit-code", "-r", "src"], [
        S("stdout", r"^--- original/src/jobs/job\d+\.py$", "each file that would change"),
    ], expect_exit=exits(2))


SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
          "required": ["name", "replicas", "image"], "additionalProperties": False,
          "properties": {"name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
                         "replicas": {"type": "integer", "minimum": 1, "maximum": 20},
                         "image": {"type": "string"}, "env": {"type": "object"}}}


@recipe("check-jsonschema-configs", "check-jsonschema", "data", [vbin("check-jsonschema"), "--version"],
        needs=("check-jsonschema",))
def _check_jsonschema(root):
    """Write the `check-jsonschema-configs` project under `root`; return its command and signals."""
    write(root, "service.schema.json", json.dumps(SCHEMA, indent=2))
    good = [{"name": f"svc-{n}", "replicas": 2, "image": f"registry.local/svc-{n}:1.0"} for n in range(6)]
    bad = [{"name": "Billing_API", "replicas": 0, "image": "b:1"}, {"name": "cart", "replicas": "3", "image": "c:1", "port": 80}]
    for n, doc in enumerate(good + bad):
        write(root, f"services/s{n}.json", json.dumps(doc, indent=2))
    files = [f"services/s{n}.json" for n in range(8)]
    return Run(["check-jsonschema", "--schemafile", "service.schema.json", *files], [
        S("stdout", r"^Schema validation errors were encountered\.$", "the verdict"),
        S("stdout", r"^  services/s[67]\.json::", "each invalid document with its field"),
    ], expect_exit=exits(1))


@recipe("bashate-scripts", "bashate", "linter", [vbin("python"), "-c", "from importlib.metadata import version; print('bashate', version('bashate'))"], needs=("bashate",))
def _bashate(root):
    """Write the `bashate-scripts` project under `root`; return its command and signals."""
    write(root, "scripts/deploy.sh", "#!/bin/bash\nset -e\nfor host in a b c; do\n  echo $host\ndone\n"
          "if [ -f x ]; then\n\techo tab\nfi\nfunction  build {\n    echo build \n}\n")
    for n in range(150):
        write(root, f"scripts/job{n:03d}.sh", f"#!/bin/bash\nif [ -d build{n} ]; then\n  rm -rf build{n}\nfi\n")
    return Run(["bashate", "scripts/deploy.sh", *[f"scripts/job{n:03d}.sh" for n in range(150)]], [
        S("stdout", r"^scripts/deploy\.sh:\d+:\d+: E(00[12]|020) ", "the findings other than the indent width repeated in every script"),
        S("stdout", r"^\d+ bashate error\(s\) found$", "the count"),
    ], expect_exit=exits(1))


TORNADO_APP = '''
import asyncio, logging, sys
import tornado.web, tornado.httpclient

class Items(tornado.web.RequestHandler):
    def get(self, item_id):
        item_id = int(item_id)
        if item_id == 4133:
            prices = {}
            self.write({"id": item_id, "price": prices["EUR"]})
            return
        self.write({"id": item_id, "price": item_id * 3})

async def main():
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    app = tornado.web.Application([(r"/items/(\\d+)", Items)])
    server = app.listen(8761, address="127.0.0.1")
    client = tornado.httpclient.AsyncHTTPClient()
    statuses = {}
    for n in range(6000):
        response = await client.fetch(f"http://127.0.0.1:8761/items/{n}", raise_error=False)
        statuses[response.code] = statuses.get(response.code, 0) + 1
    server.stop()
    print("responses by status:", dict(sorted(statuses.items())))

asyncio.run(main())
'''


@recipe("tornado-log-uncaught-exception", "python", "log", [vbin("python"), "-c", "import tornado; print('tornado', tornado.version)"],
        needs=("python",))
def _tornado(root):
    """Write the `tornado-log-uncaught-exception` project under `root`; return its command and signals."""
    write(root, "serve.py", TORNADO_APP)
    return Run(["python", "serve.py"], [
        S("stderr", r"ERROR tornado\.application Uncaught exception GET /items/4133", "the one error among 6,000 requests"),
        S("stderr", r"^KeyError: 'EUR'$", "the exception"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'File ".*serve\.py", line \d+, in get$', "the project's frame"),
        S("stderr", r"ERROR tornado\.access 500 GET /items/4133", "the one 500 in the access log"),
        S("stdout", r"^responses by status: \{200: 5999, 500: 1\}$", "the closing tally"),
    ], expect_exit=exits(0))


MEMORY_SCRIPT = '''
def expand(node, depth, cache):
    """Expand a category tree, keeping every level's rows (a copy each time)."""
    rows = cache.setdefault(depth, []) + [node] * 200000
    cache[depth + 1] = rows
    return expand(node + 1, depth + 1, cache)


def build_index(root):
    return expand(root, 0, {})


if __name__ == "__main__":
    print("building index for category 1")
    build_index(1)
'''


@recipe("python-memoryerror-recursion", "python", "crash", [vbin("python"), "--version"], needs=("python",))
def _memoryerror(root):
    """Write the `python-memoryerror-recursion` project under `root`; return its command and signals."""
    write(root, "build_index.py", MEMORY_SCRIPT)
    return Run(["python", "build_index.py"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'File ".*build_index\.py", line \d+, in expand$', "the project's recursive frame"),
        S("stderr", r"^\s*\[Previous line repeated \d+ more times?\]$", "how deep it went"),
        S("stderr", r"^MemoryError$", "the exception"),
    ], command="ulimit -v 600000; exec python build_index.py", expect_exit=exits(1))


@recipe("csvclean-ragged-rows", "csvclean", "data", [vbin("csvclean"), "--version"], needs=("csvclean",))
def _csvclean(root):
    """Write the `csvclean-ragged-rows` project under `root`; return its command and signals."""
    rng = random.Random(4)
    rows = ["id,sku,qty,price,warehouse"]
    for n in range(1, 3001):
        row = f"{n},SKU-{rng.randint(1000, 9999)},{rng.randint(1, 50)},{rng.randint(100, 9999) / 100},WH{n % 4}"
        if n in (812, 2291):
            row += ",extra"
        if n == 1540:
            row = f"{n},SKU-1540,7"
        rows.append(row)
    write(root, "stock.csv", "\n".join(rows) + "\n")
    return Run(["csvclean", "--length-mismatch", "stock.csv"], [
        S("stderr", r"^(line_number|\d+),", "the errors' header and each bad row"),
    ], expect_exit=exits(0, 1))


@recipe("mdformat-check", "mdformat", "formatter", [vbin("mdformat"), "--version"], needs=("mdformat",))
def _mdformat(root):
    """Write the `mdformat-check` project under `root`; return its command and signals."""
    for n in range(6):
        write(root, f"docs/p{n}.md", f"# Page {n}\n\nText of page {n}.\n")
    write(root, "docs/setup.md", "Setup\n=====\n\n* one\n* two\n\n1) first\n2) second\n")
    write(root, "docs/faq.md", "# FAQ\n\n__Bold__ and *em*.\n")
    return Run(["mdformat", "--check", "docs"], [
        S("stderr", r'^Error: File ".*docs/setup\.md" is not$', "the file that would change"),
    ], expect_exit=exits(1))


@recipe("deptry-dependency-issues", "deptry", "package-manager", [vbin("deptry"), "--version"], needs=("deptry",))
def _deptry(root):
    """Write the `deptry-dependency-issues` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", '[project]\nname = "shop"\nversion = "1.0"\n'
          'dependencies = ["requests>=2", "click>=8", "pyyaml>=6"]\n')
    write(root, "shop/__init__.py", "")
    write(root, "shop/cli.py", "import click\nimport yaml\nimport httpx\nimport shop.core\n")
    write(root, "shop/core.py", "import os\nimport attrs\n")
    return Run(["deptry", "--no-ansi", "."], [
        S("stderr", r"DEP001 'httpx' imported but missing from the dependency definitions$", "the missing dependency"),
        S("stderr", r"DEP003 'attrs' imported but it is a transitive dependency$", "the transitive import"),
        S("stderr", r"DEP002 'requests' defined as a dependency but not used in the codebase$", "the unused dependency"),
        S("stderr", r"^Found 3 dependency issues\.$", "the count"),
    ], expect_exit=exits(1))
