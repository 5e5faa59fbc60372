"""Draped recipes for PyPI tools and Python programs: SQLAlchemy, CherryPy, TestSlide, pydoctor, Schemathesis,
pykwalify, cx_Freeze, pylama, nbdime (nbmerge), mutmut, arq.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from draped_common import Run, S, exits, pyver, recipe, served, sh, vbin, wait_port, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS = ["SQLAlchemy==2.0.36", "CherryPy==18.10.0", "testslide==2.7.1", "pydoctor==24.11.2", "schemathesis==3.39.7",
           "hypothesis==6.115.0", "pykwalify==1.8.0", "cx_Freeze==7.2.7", "pylama==8.4.1", "nbdime==4.0.2",
           "mutmut==2.5.1", "pytest==8.4.2", "arq==0.26.1", "redis==5.3.1"]
APT_PINS: dict[str, str] = {}
_SA_LOAD = """\
import csv

from sqlalchemy import ForeignKey, String, create_engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class Base(DeclarativeBase):
    pass


class Customer(Base):
    __tablename__ = "customers"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(80))
    email: Mapped[str] = mapped_column(String(120), unique=True)
    country: Mapped[str] = mapped_column(String(2))


class Address(Base):
    __tablename__ = "addresses"
    id: Mapped[int] = mapped_column(primary_key=True)
    customer_id: Mapped[int] = mapped_column(ForeignKey("customers.id"))
    city: Mapped[str] = mapped_column(String(60))


def main():
    engine = create_engine("sqlite:///crm.db", echo=True)
    Base.metadata.create_all(engine)
    with open("customers.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        with Session(engine) as session:
            customer = Customer(name=row["name"], email=row["email"].lower(), country=row["country"])
            session.add(customer)
            session.flush()
            session.add(Address(customer_id=customer.id, city=row["city"]))
            session.commit()
    print(f"imported {len(rows)} customers")


if __name__ == "__main__":
    main()
"""


@recipe("sqlalchemy-echo-import-unique-violation", "sqlalchemy", "crash", pyver("SQLAlchemy"), needs=("python",))
def _sqlalchemy(root):
    """Write the `sqlalchemy-echo-import-unique-violation` project under `root`; return its command and signals."""
    write(root, "crm/__init__.py", "")
    write(root, "crm/load.py", _SA_LOAD)
    cities = ("Lisbon", "Porto", "Braga", "Faro", "Coimbra", "Aveiro")
    rows = "".join(f"{n},Customer {n},{'Customer.1288' if n == 2741 else f'customer.{n}'}@example.pt,PT,"
                   f"{cities[n % 6]}\n" for n in range(3000))
    write(root, "customers.csv", "id,name,email,country,city\n" + rows)
    return Run(["python", "-m", "crm.load"], [
        S("stdout", r" INFO sqlalchemy\.engine\.Engine ROLLBACK$", "the one rollback among 2,741 commits"),
        S("stdout", r"\] \('Customer 2741', 'customer\.1288@example\.pt', 'PT'\)$", "the row that failed"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the chained trace's starts"),
        S("stderr", r'^  File ".*/crm/load\.py", line 35, in main$', "the project's own frame"),
        S("stderr", r"^sqlite3\.IntegrityError: UNIQUE constraint failed: customers\.email$", "the driver's error"),
        S("stderr", r"^sqlalchemy\.exc\.IntegrityError: \(sqlite3\.IntegrityError\) UNIQUE constraint failed: "
          r"customers\.email$", "the exception"),
        S("stderr", r"^\[parameters: \('Customer 2741', 'customer\.1288@example\.pt', 'PT'\)\]$", "the failing row"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1), timeout=300)


_CHERRY_APP = """\
import cherrypy

PRICES = {sku: round(2.5 + (sku * 7) % 90 * 0.35, 2) for sku in range(3000)}
CURRENCY = {sku: ("EUR", "GBP", "CHF")[sku % 3] for sku in range(3000) if sku != 2288}


class Catalogue:
    @cherrypy.expose
    @cherrypy.tools.json_out()
    def price(self, sku):
        sku = int(sku)
        return {"sku": sku, "price": PRICES[sku], "currency": CURRENCY[sku]}


if __name__ == "__main__":
    cherrypy.config.update({"server.socket_host": "127.0.0.1", "server.socket_port": 18851,
                            "engine.autoreload.on": False})
    cherrypy.quickstart(Catalogue())
"""

_CHERRY_CLIENT = """\
import urllib.error
import urllib.request

failed = 0
for sku in range(3000):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:18851/price?sku={sku}").read()
    except urllib.error.HTTPError:
        failed += 1
print(f"price sync: 3000 requests, {failed} failed", flush=True)
"""


@recipe("cherrypy-price-api-one-500", "cherrypy", "log", pyver("CherryPy"), needs=("python",))
def _cherrypy(root):
    """Write the `cherrypy-price-api-one-500` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/catalogue.py", _CHERRY_APP)
    write(root, "sync.py", _CHERRY_CLIENT)
    command = served("python -m shop.catalogue", 18851, "python sync.py")
    return Run(["python", "-m", "shop.catalogue"], [
        S("stdout", r'"GET /price\?sku=2288 HTTP/1\.1" 500 ', "the one request that failed among 3,000"),
        S("stdout", r"^price sync: 3000 requests, 1 failed$", "the client's summary"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/shop/catalogue\.py", line 12, in price$', "the handler's own frame"),
        S("stderr", r"^KeyError: 2288$", "the exception"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)


def _testslide_module(area: str, n: int) -> str:
    """A TestCase of 40 tariff tests for one area; one area's test expects last year's rounding."""
    tests = []
    for k in range(40):
        kwh = 120 + k * 17
        want = f"round({kwh} * 0.2314 + 9.5, 2)"
        if (n, k) == (13, 27):
            want = f"round({kwh} * 0.2314 + 9.5, 1)"
        tests.append(f"    def test_bill_{k:02d}_{kwh}_kwh(self):\n"
                     f"        self.assertEqual(tariff.bill({kwh}), {want})\n\n")
    return (f"import testslide\n\nfrom energy import tariff\n\n\n"
            f"class {area}TariffTest(testslide.TestCase):\n" + "".join(tests))


@recipe("testslide-tariff-one-failure", "testslide", "test-runner", pyver("testslide"), needs=("testslide",))
def _testslide(root):
    """Write the `testslide-tariff-one-failure` project under `root`; return its command and signals."""
    write(root, "energy/__init__.py", "")
    write(root, "energy/tariff.py", "def bill(kwh):\n    return round(kwh * 0.2314 + 9.5, 2)\n")
    areas = ["North", "South", "East", "West", "Coast", "Valley", "Harbour", "Airport", "Campus", "Market",
             "Docks", "Hills", "Lakes", "Old Town", "Station", "Riverside", "Forest", "Bay", "Park", "Bridge"]
    files = []
    for n, area in enumerate(areas):
        name = area.replace(" ", "")
        files.append(f"tests/test_{name.lower()}.py")
        write(root, files[-1], _testslide_module(name, n))
    write(root, "tests/__init__.py", "")
    return Run(["testslide", *files], [
        S("stdout", r"^tests\.test_oldtown\.OldTownTariffTest$", "the failing test's class"),
        S("stdout", r"^  test_bill_27_579_kwh: AssertionError: 143\.48 != 143\.5$", "the one failure among 800"),
        S("stdout", r"^  1\) tests\.test_oldtown\.OldTownTariffTest: test_bill_27_579_kwh$", "the failure's heading"),
        S("stdout", r"^    1\) AssertionError: 143\.48 != 143\.5$", "its assertion"),
        S("stdout", r'^      File "tests/test_oldtown\.py", line 89, in test_bill_27_579_kwh$', "the test's own frame"),
        S("stdout", r"^(Executed 800 examples in [\d.]+s:|  Failed: 1) ", "the counts"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


def _doc_module(n: int) -> str:
    """A fleet module documented in epytext: links to helpers, one module whose docstring lost a field's end."""
    classes = []
    for k in range(4):
        classes.append(f'''

class Route{n}_{k}:
    """A delivery route of depot {n}.

    Built by L{{plan_routes}} and priced by L{{fleet.pricing.quote}}; see also L{{Route{n}_{(k + 1) % 4}}}.

    @ivar stops: the ordered stops.
    @type stops: C{{list}}
    """

    def __init__(self, stops):
        """Make a route.

        @param stops: the stops, as returned by L{{fleet.geo.Locator.nearest}}.
        """
        self.stops = stops

    def length(self):
        """The route's length in km, from L{{fleet.geo.distance}}.

        @rtype: C{{float}}
        """
        return float(len(self.stops))
''')
    broken = '\n    @param depot: the depot C{number\n' if n == 37 else ""
    return (f'"""Routes of depot {n}."""\n\n\ndef plan_routes(depot):\n    """Plan the routes of a depot.\n'
            f'{broken}\n    @return: the routes, see L{{Route{n}_0}}.\n    """\n    return []\n' + "".join(classes))


@recipe("pydoctor-fleet-api-docs-warnings", "pydoctor", "docs", [vbin("pydoctor"), "--version"], needs=("pydoctor",))
def _pydoctor(root):
    """Write the `pydoctor-fleet-api-docs-warnings` project under `root`; return its command and signals."""
    write(root, "fleet/__init__.py", '"""Fleet planning."""\n')
    write(root, "fleet/pricing.py", '"""Prices."""\n\n\ndef quote(route):\n    """Quote a route."""\n    return 1.0\n')
    for n in range(60):
        write(root, f"fleet/depots/depot{n:02d}.py", _doc_module(n))
    write(root, "fleet/depots/__init__.py", '"""Depots."""\n')
    return Run(["pydoctor", "--html-output=apidocs", "--docformat=epytext", "--project-name=fleet", "fleet"], [
        S("stdout", r"/fleet/depots/depot37\.py:7: bad docstring: Unbalanced '\{'\.$", "the one docstring error among 480 "
          "unresolved links"),
        S("stdout", r"^these 1 objects' docstrings contain syntax errors:$", "the summary"),
        S("stdout", r"^    fleet\.depots\.depot37\.plan_routes$", "the object it names"),
    ], expect_exit=exits(0, 1, 2, 3))


_SHOP_WSGI = """\\
import json
import re

SKU = re.compile(r"^/products/(\\d+)$")
STOCK = re.compile(r"^/products/(\\d+)/stock$")


def respond(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def app(environ, start_response):
    path, query = environ["PATH_INFO"], environ.get("QUERY_STRING", "")
    if path == "/openapi.json":
        with open("openapi.json", "rb") as handle:
            data = handle.read()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [data]
    if path == "/products":
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        limit = int(params.get("limit", "20"))
        pages = 1000 // limit
        return respond(start_response, "200 OK", {"items": [], "pages": pages})
    match = SKU.match(path)
    if match:
        return respond(start_response, "200 OK", {"sku": int(match[1]), "name": "Lamp", "price": "12.50"})
    match = STOCK.match(path)
    if match:
        return respond(start_response, "200 OK", {"sku": int(match[1]), "on_hand": 4})
    return respond(start_response, "404 Not Found", {"detail": "not found"})
"""


def _shop_openapi() -> dict:
    """The shop's OpenAPI document: a listing with a limit, a product whose price is declared a number."""
    def ok(schema):
        return {"200": {"description": "OK", "content": {"application/json": {"schema": schema}}}}
    sku = [{"name": "sku", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}]
    return {"openapi": "3.0.3", "info": {"title": "Shop", "version": "2.1.0"}, "paths": {
        "/products": {"get": {"operationId": "listProducts", "parameters": [
            {"name": "limit", "in": "query", "required": False, "schema": {"type": "integer", "minimum": 0, "maximum": 100}}],
            "responses": ok({"type": "object", "required": ["items", "pages"], "properties": {
                "items": {"type": "array"}, "pages": {"type": "integer"}}})}},
        "/products/{sku}": {"get": {"operationId": "getProduct", "parameters": sku, "responses": ok({
            "type": "object", "required": ["sku", "name", "price"], "properties": {
                "sku": {"type": "integer"}, "name": {"type": "string"}, "price": {"type": "number"}}})}},
        "/products/{sku}/stock": {"get": {"operationId": "getStock", "parameters": sku, "responses": ok({
            "type": "object", "required": ["sku", "on_hand"], "properties": {
                "sku": {"type": "integer"}, "on_hand": {"type": "integer"}}})}}}}


@recipe("schemathesis-shop-api-two-failures", "schemathesis", "test-runner", [vbin("schemathesis"), "--version"],
        needs=("schemathesis",))
def _schemathesis(root):
    """Write the `schemathesis-shop-api-two-failures` project under `root`; return its command and signals."""
    import json
    write(root, "shop/__init__.py", "")
    write(root, "shop/wsgi.py", _SHOP_WSGI)
    write(root, "openapi.json", json.dumps(_shop_openapi(), indent=2) + "\n")
    return Run(["schemathesis", "run", "--app=shop.wsgi:app", "--checks=all", "--hypothesis-seed=7",
                "--hypothesis-max-examples=60", "--no-color", "/openapi.json"], [
        S("stdout", r"^GET /products(/\{sku\})? [EF] +\[ \d+%\]$", "the two operations that did not pass"),
        S("stdout", r"^_+ GET /products(/\{sku\})? _+$", "their sections"),
        S("stdout", r"^integer division or modulo by zero$", "the server error"),
        S("stdout", r"^- Response violates schema$", "the failed check"),
        S("stdout", r"^    '12\.50' is not of type 'number'$", "what violates it"),
        S("stdout", r"^    response_schema_conformance +\d+ / \d+ passed +FAILED $", "the failed check's count"),
        S("stdout", r"^=+ 1 passed, 1 failed, 1 errored in [\d.]+s =+$", "the summary"),
    ], env={"PYTHONPATH": root, "SCHEMATHESIS_TELEMETRY": "false"}, expect_exit=exits(1))


_KWALIFY_SCHEMA = """\
type: map
mapping:
  service: {type: str, required: true}
  replicas: {type: int, range: {min: 1, max: 12}}
  queues:
    type: seq
    sequence:
      - type: map
        mapping:
          name: {type: str, required: true, pattern: '^[a-z][a-z0-9-]*$'}
          max_retries: {type: int}
          dead_letter: {type: bool}
"""


@recipe("pykwalify-worker-config-errors", "pykwalify", "linter", pyver("pykwalify"), needs=("pykwalify",))
def _pykwalify(root):
    """Write the `pykwalify-worker-config-errors` project under `root`; return its command and signals."""
    write(root, "schema.yaml", _KWALIFY_SCHEMA)
    queues = "".join(f"  - name: {'Billing_Retry' if n == 9 else f'queue-{n}'}\n"
                     f"    max_retries: {'five' if n == 14 else n % 6}\n    dead_letter: {'true' if n % 2 else 'false'}\n"
                     for n in range(18))
    write(root, "worker.yaml", f"service: invoicing-worker\nreplicas: 16\nqueues:\n{queues}")
    return Run(["pykwalify", "-d", "worker.yaml", "-s", "schema.yaml"], [
        S("stdout", r"^ ERROR - validation\.invalid$", "the verdict"),
        S("stdout", r"^ ERROR - \[\"Type 'scalar' has size of '16'", "the list of all errors"),
        S("stderr", r"^pykwalify\.errors\.SchemaError: <SchemaError: error code 2: Schema validation failed:$", "the exception"),
        S("stderr", r"^ - (Type 'scalar' has size|Value 'Billing_Retry' does not match|Value 'five' is not of type)",
          "the three errors with their paths"),
    ], expect_exit=exits(1, 2))


_FREEZE_MAIN = """\
import argparse
import csv
import json
import sqlite3

from invoices import render


def main():
    parser = argparse.ArgumentParser(prog="invoicer")
    parser.add_argument("orders")
    args = parser.parse_args()
    with open(args.orders, newline="") as handle:
        for row in csv.DictReader(handle):
            print(json.dumps(render.invoice(row)))
    sqlite3.connect(":memory:").close()


if __name__ == "__main__":
    main()
"""

_FREEZE_RENDER = """\
import decimal
import email.utils
import logging

try:
    from weasyprint import HTML
except ImportError:
    HTML = None

log = logging.getLogger(__name__)


def invoice(row):
    total = decimal.Decimal(row["amount"]) * decimal.Decimal("1.23")
    return {"number": row["number"], "total": str(total), "date": email.utils.formatdate(usegmt=True)}
"""


@recipe("cxfreeze-build-missing-module", "cxfreeze", "build", [vbin("cxfreeze"), "--version"], needs=("cxfreeze",))
def _cxfreeze(root):
    """Write the `cxfreeze-build-missing-module` project under `root`; return its command and signals."""
    write(root, "invoicer.py", _FREEZE_MAIN)
    write(root, "invoices/__init__.py", "")
    write(root, "invoices/render.py", _FREEZE_RENDER)
    return Run(["cxfreeze", "--script", "invoicer.py", "--target-dir", "dist"], [
        S("stdout", r"^Missing modules:$", "the missing modules' heading"),
        S("stdout", r"^\? weasyprint imported from invoices\.render$", "the project's import the frozen build lacks"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=600)


def _legacy_report(n: int) -> str:
    """A reporting module of an old code base: long lines, no blank-line discipline, a bare except."""
    funcs = []
    for k in range(6):
        body = (f"def report_{n}_{k}(rows, currency='EUR', include_tax=True, rounding=2, locale='pt_PT', title=None):\n"
                f"    total=0\n    for row in rows:\n        if row['amount']>0 and row['currency']==currency and row['status'] in ('paid','settled','refunded'):\n"
                f"            total+=row['amount']*(1.23 if include_tax else 1)\n"
                f"    try:\n        label = title or 'Report %d/%d for %s' % ({n}, {k}, currency)\n    except:\n        label = 'Report'\n"
                f"    return {{'label':label, 'total':round(total,rounding), 'locale':locale, 'rows':len(rows)}}\n")
        if (n, k) in ((23, 4), (88, 1)):
            body = body.replace("'rows':len(rows)}", "'rows':len(rows), 'region':region}")
        funcs.append(body)
    return "import os, sys\nimport json\n" + "\n".join(funcs)


@recipe("pylama-legacy-reports-two-undefined", "pylama", "linter", [vbin("pylama"), "--version"], needs=("pylama",))
def _pylama(root):
    """Write the `pylama-legacy-reports-two-undefined` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"reports/report{n:03d}.py", _legacy_report(n))
    write(root, "reports/__init__.py", "")
    return Run(["pylama", "reports"], [
        S("stdout", r"^reports/report0(23|88)\.py:\d+:\d+ E0602 undefined name 'region' \[pyflakes\]$",
          "the two real bugs among 10,444 style findings"),
    ], expect_exit=exits(1))


def _notebook(cells: list[str]) -> str:
    """An nbformat 4 notebook of code cells with the given sources."""
    import json
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}, "cells": [
        {"cell_type": "code", "id": f"cell-{n:02d}", "metadata": {}, "execution_count": None, "outputs": [],
         "source": source} for n, source in enumerate(cells)]}, indent=1) + "\n"


@recipe("nbmerge-forecast-notebook-conflict", "nbmerge", "vcs", pyver("nbdime"), needs=("nbmerge",))
def _nbmerge(root):
    """Write the `nbmerge-forecast-notebook-conflict` project under `root`; return its command and signals."""
    base = [f"demand_{n} = load_series('region-{n}')\nmodel_{n} = fit(demand_{n}, order=(2, 1, 1))\n" for n in range(30)]
    base[0] = "import pandas as pd\nfrom forecast import fit, load_series\n"
    local, remote = list(base), list(base)
    local[12] = "demand_12 = load_series('region-12', start='2024-01')\nmodel_12 = fit(demand_12, order=(2, 1, 1))\n"
    remote[12] = "demand_12 = load_series('region-12')\nmodel_12 = fit(demand_12, order=(3, 1, 2))\n"
    local[20] = base[20].replace("order=(2, 1, 1)", "order=(1, 1, 1)")
    remote.append("plot_all(globals())\n")
    write(root, "base.ipynb", _notebook(base))
    write(root, "local.ipynb", _notebook(local))
    write(root, "remote.ipynb", _notebook(remote))
    return Run(["nbmerge", "base.ipynb", "local.ipynb", "remote.ipynb"], [
        S("stderr", r"^\[W nbmergeapp:\d+\] Conflicts occurred during merge operation\.$", "the verdict"),
        S("stdout", r'^   "id": "cell-12",$', "the conflicting cell"),
        S("stdout", r'^    "(<<<<<<< local\\n|=======\\n|>>>>>>> remote)"', "its conflict markers"),
    ], expect_exit=exits(0, 1))


_DISCOUNTS = """\
def bulk_discount(quantity):
    if quantity >= 100:
        return 0.15
    if quantity >= 50:
        return 0.10
    if quantity >= 10:
        return 0.05
    return 0.0


def loyalty_discount(years):
    return min(years * 0.01, 0.08)


def shipping(weight, express=False):
    cost = 4.5 + weight * 1.2
    if express:
        cost = cost * 1.8
    return round(cost, 2)


def total(unit_price, quantity, years=0, weight=0.0, express=False):
    rate = bulk_discount(quantity) + loyalty_discount(years)
    subtotal = unit_price * quantity * (1 - rate)
    return round(subtotal + shipping(weight, express), 2)
"""

_DISCOUNT_TESTS = """\
from pricing.discounts import bulk_discount, loyalty_discount, shipping, total


def test_bulk_tiers():
    assert bulk_discount(5) == 0.0
    assert bulk_discount(20) == 0.05
    assert bulk_discount(70) == 0.10
    assert bulk_discount(500) == 0.15


def test_loyalty_is_capped():
    assert loyalty_discount(3) == 0.03
    assert loyalty_discount(20) == 0.08


def test_shipping():
    assert shipping(2.0) == 6.9
    assert shipping(2.0, express=True) == 12.42


def test_total():
    assert total(10.0, 20, years=2, weight=1.0) == 191.7
"""


@recipe("mutmut-pricing-survivors", "mutmut", "test-runner", [vbin("mutmut"), "version"], needs=("mutmut",))
def _mutmut(root):
    """Write the `mutmut-pricing-survivors` project under `root`; return its command and signals."""
    write(root, "pricing/__init__.py", "")
    write(root, "pricing/discounts.py", _DISCOUNTS)
    write(root, "tests/__init__.py", "")
    write(root, "tests/test_discounts.py", _DISCOUNT_TESTS)
    return Run(["mutmut", "run", "--paths-to-mutate", "pricing/", "--runner", "python -m pytest -x -q tests"], [
        S("stdout", r"35/35  🎉 25  ⏰ 0  🤔 0  🙁 10  🔇 0$", "the final tally: ten mutants survived"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0, 2, 4, 6, 10, 14), timeout=600)


_ARQ_TASKS = """\
import asyncio

from arq.connections import RedisSettings

ACCOUNTS = {n: {"email": f"billing+{n}@example.org", "plan": ("basic", "team", "scale")[n % 3]} for n in range(1600)}
PRICES = {"basic": 9, "team": 29}


async def send_invoice(ctx, account_id):
    account = ACCOUNTS[account_id]
    await asyncio.sleep(0)
    return f"{account['email']}: {PRICES[account['plan']]} EUR"


class WorkerSettings:
    functions = [send_invoice]
    redis_settings = RedisSettings(host="127.0.0.1", port=18871)
    max_jobs = 20
"""

_ARQ_ENQUEUE = """\
import asyncio

from arq import create_pool
from arq.connections import RedisSettings


async def main():
    redis = await create_pool(RedisSettings(host="127.0.0.1", port=18871))
    for account_id in range(0, 1600, 3):
        await redis.enqueue_job("send_invoice", account_id, _job_id=f"invoice-{account_id:04d}")
    await redis.enqueue_job("send_invoice", 1202, _job_id="invoice-1202")
    for account_id in range(1, 1600, 3):
        await redis.enqueue_job("send_invoice", account_id, _job_id=f"invoice-{account_id:04d}")


asyncio.run(main())
"""


@recipe("arq-worker-burst-one-job-failed", "arq", "log", pyver("arq"), needs=("arq", "redis-server"))
def _arq(root):
    """Write the `arq-worker-burst-one-job-failed` project under `root`; return its command and signals."""
    write(root, "billing/__init__.py", "")
    write(root, "billing/worker.py", _ARQ_TASKS)
    write(root, "enqueue.py", _ARQ_ENQUEUE)
    command = ("redis-server --port 18871 --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 & redis=$!; " +
               wait_port(18871) + "python enqueue.py && arq billing.worker.WorkerSettings --burst; status=$?; "
               "kill $redis; wait $redis; exit $status")
    return Run(["arq", "billing.worker.WorkerSettings", "--burst"], [
        S("stderr", r"→ invoice-1202:send_invoice\(1202\)", "the failing job's start"),
        S("stderr", r"! invoice-1202:send_invoice failed, KeyError: 'scale'$", "the one job that failed among 1,068"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/billing/worker\.py", line 12, in send_invoice$', "the task's own frame"),
        S("stderr", r"^KeyError: 'scale'$", "the exception"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0, 1), timeout=600)
