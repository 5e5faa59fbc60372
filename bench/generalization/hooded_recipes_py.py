"""Hooded recipes for PyPI tools and Python programs: radish, Tornado, APScheduler, loguru, Fixit, pycln, sqlfmt,
pandera, pdoc, jupyter-execute (nbclient), rich, mamba.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from hooded_common import Run, S, exits, pyver, recipe, served, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS = ["radish-bdd==0.18.4", "tornado==6.6.1", "APScheduler==3.11.3", "fixit==2.2.1", "pandera==0.35.0",
           "pandas==2.2.3", "shandy-sqlfmt==0.32.0", "loguru==0.7.3", "pdoc==16.0.0", "pycln==2.6.0", "nbclient==0.11.0",
           "ipykernel==6.29.5", "rich==15.0.0", "mamba==0.11.3", "expects==0.9.0"]
APT_PINS: dict[str, str] = {}
_RADISH_STEPS = """\
from radish import given, when, then

from shipping.rates import quote


@given("a parcel of {weight:g} kg to zone {zone:d}")
def parcel(step, weight, zone):
    step.context.parcel = (weight, zone)


@when("the courier quotes it")
def quotes(step):
    step.context.price = quote(*step.context.parcel)


@then("the price is {price:g} EUR")
def price_is(step, price):
    assert step.context.price == price, f"quoted {step.context.price}, expected {price}"
"""


def _radish_feature(zone: int, wrong: tuple[int, int]) -> str:
    """A feature of 24 shipping-rate scenarios for one zone; `wrong` (zone, n) expects a stale price."""
    rows = []
    for n in range(24):
        weight = 0.5 + n * 0.75
        price = round(4.9 + zone * 1.5 + weight * 0.8, 2) + (0.6 if (zone, n) == wrong else 0)
        rows.append(f"  Scenario: zone {zone} parcel {n + 1}\n    Given a parcel of {weight:g} kg to zone {zone}\n"
                    f"    When the courier quotes it\n    Then the price is {round(price, 2):g} EUR\n\n")
    return f"Feature: Shipping rates for zone {zone}\n  Quotes follow the published table.\n\n" + "".join(rows)


@recipe("radish-bdd-one-stale-rate", "radish", "test-runner", pyver("radish-bdd"), needs=("radish",))
def _radish(root):
    """Write the `radish-bdd-one-stale-rate` project under `root`; return its command and signals."""
    write(root, "shipping/__init__.py", "")
    write(root, "shipping/rates.py", "def quote(weight, zone):\n    return round(4.9 + zone * 1.5 + weight * 0.8, 2)\n")
    write(root, "radish/steps.py", _RADISH_STEPS)
    for zone in range(1, 11):
        write(root, f"features/zone{zone:02d}.feature", _radish_feature(zone, (7, 15)))
    return Run(["radish", "features", "-b", "radish", "--no-ansi"], [
        S("stdout", r"^Feature: Shipping rates for zone 7  # features/zone07\.feature$", "the failing scenario's feature"),
        S("stdout", r"^    Scenario: zone 7 parcel 16$", "the one failing scenario among 240"),
        S("stdout", r"^ +AssertionError: quoted 24\.8, expected 25\.4$", "its failed assertion"),
        S("stdout", r"^\d+ (features|scenarios|steps) \(\d+ passed, 1 failed\)$", "the counts"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


_TORNADO_APP = """\
import tornado.ioloop
import tornado.log
import tornado.web

STOCK = {sku: (sku * 37) % 120 for sku in range(2400)}
WAREHOUSES = {sku: ("berlin", "lyon", "porto")[sku % 3] for sku in range(2400) if sku != 1733}


class StockHandler(tornado.web.RequestHandler):
    def get(self, sku):
        sku = int(sku)
        self.write({"sku": sku, "on_hand": STOCK[sku], "warehouse": WAREHOUSES[sku]})


def make_app():
    return tornado.web.Application([(r"/stock/(\\d+)", StockHandler)])


if __name__ == "__main__":
    tornado.log.enable_pretty_logging()
    make_app().listen(18817, address="127.0.0.1")
    tornado.ioloop.IOLoop.current().start()
"""

_TORNADO_CLIENT = """\
import urllib.error
import urllib.request

failed = 0
for sku in range(2400):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:18817/stock/{sku}").read()
    except urllib.error.HTTPError:
        failed += 1
print(f"stock sync: 2400 requests, {failed} failed", flush=True)
"""


@recipe("tornado-access-log-one-500", "tornado", "log", pyver("tornado"), needs=("python",))
def _tornado(root):
    """Write the `tornado-access-log-one-500` project under `root`; return its command and signals."""
    write(root, "inventory/__init__.py", "")
    write(root, "inventory/server.py", _TORNADO_APP)
    write(root, "sync.py", _TORNADO_CLIENT)
    command = served("python -m inventory.server", 18817, "python sync.py")
    return Run(["python", "-m", "inventory.server"], [
        S("stderr", r"^\[E \d+ [\d:]+ web:\d+\] Uncaught exception GET /stock/1733 \(127\.0\.0\.1\)$",
          "the one request that raised among 2,400"),
        S("stderr", r"^    Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^      File ".*/inventory/server\.py", line \d+, in get$', "the handler's own frame"),
        S("stderr", r"^    KeyError: 1733$", "the exception"),
        S("stderr", r"^\[E \d+ [\d:]+ web:\d+\] 500 GET /stock/1733 ", "its line in the access log"),
        S("stdout", r"^stock sync: 2400 requests, 1 failed$", "the client's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)


_SCHEDULER = """\
import logging
import time
from datetime import datetime, timedelta, timezone

from apscheduler.schedulers.background import BackgroundScheduler

from reports.jobs import build_report

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
scheduler = BackgroundScheduler(timezone="UTC", job_defaults={"misfire_grace_time": 30})
start = datetime.now(timezone.utc) + timedelta(seconds=1)
for n in range(700):
    scheduler.add_job(build_report, "date", run_date=start + timedelta(milliseconds=6 * n), args=[n],
                      id=f"report-{n:03d}", name=f"nightly report {n:03d}")
scheduler.start()
time.sleep(7)
scheduler.shutdown()
"""

_REPORT_JOBS = """\
import logging

log = logging.getLogger("reports.jobs")
TEMPLATES = {n: ("sales", "stock", "returns", "payroll")[n % 4] for n in range(700)}
REGIONS = {n: f"region-{n % 12}" for n in range(700)}
del REGIONS[418]


def build_report(n):
    region = REGIONS[n]
    log.debug("rendering %s report for %s", TEMPLATES[n], region)
    return f"{TEMPLATES[n]}-{region}.pdf"
"""


@recipe("apscheduler-one-job-raised", "apscheduler", "log", pyver("APScheduler"), needs=("python",))
def _apscheduler(root):
    """Write the `apscheduler-one-job-raised` project under `root`; return its command and signals."""
    write(root, "reports/__init__.py", "")
    write(root, "reports/jobs.py", _REPORT_JOBS)
    write(root, "scheduler.py", _SCHEDULER)
    return Run(["python", "scheduler.py"], [
        S("stderr", r' ERROR apscheduler\.executors\.default: Job "nightly report 418 \(.*\)" raised an exception$',
          "the one job that raised among 700"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/reports/jobs\.py", line \d+, in build_report$', "the job's own frame"),
        S("stderr", r"^KeyError: 418$", "the exception"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=120)


_LOGURU_IMPORT = """\
import csv
import sys

from loguru import logger

from crm.normalize import normalize

logger.remove()
logger.add(sys.stderr, format="{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}",
           backtrace=True, diagnose=True)

imported = failed = 0
with open("customers.csv", newline="") as handle:
    for row in csv.DictReader(handle):
        try:
            record = normalize(row)
        except Exception:
            logger.exception("could not import customer {}", row["id"])
            failed += 1
            continue
        logger.info("imported customer {id} ({country}, {segment})", **record)
        imported += 1
logger.info("import finished: {} imported, {} failed", imported, failed)
"""

_LOGURU_NORMALIZE = """\
SEGMENTS = {"smb": "small business", "ent": "enterprise", "edu": "education"}


def credit_limit(row):
    return round(int(row["revenue"]) / int(row["employees"]) * 0.05, 2)


def normalize(row):
    return {"id": int(row["id"]), "country": row["country"].upper(), "segment": SEGMENTS[row["segment"]],
            "limit": credit_limit(row)}
"""


@recipe("loguru-import-one-record-raised", "loguru", "log", pyver("loguru"), needs=("python",))
def _loguru(root):
    """Write the `loguru-import-one-record-raised` project under `root`; return its command and signals."""
    write(root, "crm/__init__.py", "")
    write(root, "crm/normalize.py", _LOGURU_NORMALIZE)
    write(root, "import_customers.py", _LOGURU_IMPORT)
    rows = "".join(f"{n},{('de', 'fr', 'pt', 'nl')[n % 4]},{('smb', 'ent', 'edu')[n % 3]},{n * 1300 + 90000},"
                   f"{0 if n == 2217 else n % 40 + 3}\n" for n in range(3200))
    write(root, "customers.csv", "id,country,segment,revenue,employees\n" + rows)
    return Run(["python", "import_customers.py"], [
        S("stderr", r"\| ERROR +\| __main__:<module>:\d+ - could not import customer 2217$", "the one record that failed among 3,200"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/crm/normalize\.py", line \d+, in credit_limit$', "the project's frame that raised"),
        S("stderr", r"^ZeroDivisionError: division by zero$", "the exception"),
        S("stderr", r"- import finished: 3199 imported, 1 failed$", "the summary"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0))


def _legacy_module(n: int) -> str:
    """A billing module from a Python 2 era code base: classes inheriting object, super with arguments, % formatting."""
    classes = "".join(f"class Invoice{n}_{k}(object):\n    def __init__(self, number, lines):\n"
                      f"        super(Invoice{n}_{k}, self).__init__()\n        self.number = number\n"
                      f"        self.lines = lines\n\n    def title(self):\n        return \"Invoice %s (%d lines)\" % "
                      f"(self.number, len(self.lines))\n\n    def total(self):\n"
                      f"        return sum([line.amount for line in self.lines])\n\n\n" for k in range(3))
    return f"import os\nimport sys\n\n\n{classes}"


@recipe("fixit-lint-legacy-one-parse-error", "fixit", "linter", [vbin("fixit"), "--version"], needs=("fixit",))
def _fixit(root):
    """Write the `fixit-lint-legacy-one-parse-error` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", "[tool.fixit]\nroot = true\nenable = [\"fixit.rules\"]\n")
    for n in range(60):
        write(root, f"billing/invoice{n:02d}.py", _legacy_module(n))
    write(root, "billing/export_legacy.py", "import csv\n\n\ndef export(invoices, path):\n"
          "    with open(path, 'w') as handle:\n        for invoice in invoices:\n"
          "            print >>handle, invoice.number, invoice.total()\n    print \"exported\", len(invoices)\n")
    return Run(["fixit", "lint", "billing"], [
        S("stdout", r"^billing/export_legacy\.py: EXCEPTION: Syntax Error @ 8:1\.$", "the one file that could not be parsed"),
        S("stdout", r"^parser error: error at 8:20: expected one of ", "the parser's error"),
        S("stdout", r"^libcst\._exceptions\.ParserSyntaxError: Syntax Error @ 8:1\.$", "the exception"),
        S("stderr", r"61 files checked, 61 files with errors, 360 auto-fixes available", "the summary"),
    ], expect_exit=exits(3))


def _pycln_module(n: int) -> str:
    """A service module that grew imports it no longer uses (every third module is clean)."""
    unused = "" if n % 3 == 0 else "import json\nimport re\nfrom collections import OrderedDict, defaultdict\n"
    return (f"import logging\n{unused}from typing import Any\n\nlog = logging.getLogger(__name__)\n\n\n"
            f"def handle_{n}(payload: dict[str, Any]) -> dict[str, Any]:\n    log.debug('handling %s', payload)\n"
            f"    return {{**payload, 'handled_by': {n}}}\n")


@recipe("pycln-check-unused-one-syntax-error", "pycln", "linter", [vbin("pycln"), "--version"], needs=("pycln",))
def _pycln(root):
    """Write the `pycln-check-unused-one-syntax-error` project under `root`; return its command and signals."""
    for n in range(240):
        write(root, f"services/handler{n:03d}.py", _pycln_module(n))
    write(root, "services/handler157.py", _pycln_module(157).replace("    return {", "    return {{"))
    return Run(["pycln", "--check", "--diff", "services"], [
        S("stderr", r"^  services/handler157\.py:12:12 SyntaxError: '\{' was never closed ", "the one file that failed"),
        S("stdout", r"^Oh no, there was an error!", "the verdict"),
        S("stdout", r"^636 imports would be removed, 159 files would be changed, 80 files would be left unchanged, "
          r"1 file has failed to be cleaned\.$", "the summary"),
    ], expect_exit=exits(250))


def _sql_model(n: int) -> str:
    """A dbt-style SQL model: most already in sqlfmt's style, every third one written by hand on one line."""
    if n % 3:
        return (f"select order_id, customer_id, sum(amount) as revenue_{n}\nfrom {{{{ ref('orders') }}}}\n"
                f"where region_id = {n}\ngroup by 1, 2\n")
    return (f"SELECT order_id,customer_id, SUM(amount) AS revenue_{n}, COUNT(*) AS line_count, MAX(ordered_at) AS "
            f"last_order_at FROM {{{{ ref('orders') }}}} WHERE region_id = {n} AND status IN ('paid','shipped') "
            f"GROUP BY 1,2\n")


@recipe("sqlfmt-check-models-one-unparsable", "sqlfmt", "linter", [vbin("sqlfmt"), "--version"], needs=("sqlfmt",))
def _sqlfmt(root):
    """Write the `sqlfmt-check-models-one-unparsable` project under `root`; return its command and signals."""
    for n in range(300):
        write(root, f"models/marts/revenue_r{n:03d}.sql", _sql_model(n))
    write(root, "models/marts/revenue_r211.sql", "select order_id, customer_id, sum(amount) as revenue_211\n"
          "from {{ ref('orders') }\nwhere region_id = 211\ngroup by 1, 2\n")
    return Run(["sqlfmt", "--check", "--diff", "--no-color", "models"], [
        S("stderr", r"^1 file had errors while formatting\.$", "the verdict"),
        S("stderr", r"^(100 files failed|199 files passed) formatting check\.$", "the counts"),
        S("stderr", r"^models/marts/revenue_r211\.sql$", "the file in error"),
        S("stderr", r"^    sqlfmt encountered an error: Unterminated multiline token 'jinja_expression_start' ",
          "its error"),
    ], expect_exit=exits(2))


_PANDERA_SCRIPT = """\
import pandas as pd
import pandera.pandas as pa

schema = pa.DataFrameSchema({
    "order_id": pa.Column(int, unique=True),
    "country": pa.Column(str, pa.Check.isin(["DE", "FR", "PT", "NL", "ES"])),
    "quantity": pa.Column(int, pa.Check.in_range(1, 500)),
    "unit_price": pa.Column(float, pa.Check.gt(0)),
    "shipped_at": pa.Column("datetime64[ns]", nullable=True),
}, strict=True)

orders = pd.read_csv("orders.csv", parse_dates=["shipped_at"])
validated = schema.validate(orders, lazy=True)
print(f"{len(validated)} orders valid")
"""


@recipe("pandera-validate-orders-lazy-errors", "pandera", "data", pyver("pandera"), needs=("python",))
def _pandera(root):
    """Write the `pandera-validate-orders-lazy-errors` project under `root`; return its command and signals."""
    write(root, "validate_orders.py", _PANDERA_SCRIPT)
    rows = []
    for n in range(5000):
        country = ("DE", "FR", "PT", "NL", "ES")[n % 5] if n not in (1204, 3377) else "UK"
        quantity = 0 if n == 2950 else n % 40 + 1
        rows.append(f"{n if n != 4411 else 4410},{country},{quantity},{round(2.5 + n % 17 * 1.25, 2)},"
                    f"{'' if n % 9 == 0 else f'2024-03-{n % 28 + 1:02d}'}\n")
    write(root, "orders.csv", "order_id,country,quantity,unit_price,shipped_at\n" + "".join(rows))
    return Run(["python", "validate_orders.py"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/validate_orders\.py", line 13, in <module>$', "the script's own frame"),
        S("stderr", r"^pandera\.errors\.SchemaErrors: \{$", "the exception"),
        S("stderr", r'^ +"error": "(series \'order_id\' contains duplicate|Column \'(country|quantity)\' failed)',
          "the three failed checks"),
    ], expect_exit=exits(1))


@recipe("pdoc-build-one-module-import-error", "pdoc", "docs", [vbin("pdoc"), "--version"], needs=("pdoc",))
def _pdoc(root):
    """Write the `pdoc-build-one-module-import-error` project under `root`; return its command and signals."""
    write(root, "geo/__init__.py", '"""Geometry helpers for the routing service."""\n')
    for name in ("distance", "bbox", "polyline", "tiles", "projection", "snapping"):
        write(root, f"geo/{name}.py", f'"""{name.capitalize()} helpers."""\n\nimport math\n\n\n'
              f'def {name}_of(points: list[tuple[float, float]]) -> float:\n    """The {name} of `points`; see `geo.bbox`."""\n'
              f'    return math.fsum(x + y for x, y in points)\n')
    write(root, "geo/raster.py", '"""Raster helpers, backed by GDAL."""\n\nfrom osgeo import gdal\n\n\n'
          'def open_tile(path):\n    """Open a GeoTIFF tile."""\n    return gdal.Open(path)\n')
    write(root, "geo/snapping.py", '"""Snapping helpers."""\n\n\ndef snap(point):\n'
          '    """Snap `point` to the nearest road; see `geo.roads.nearest` and `geo.distance.distance_of`."""\n'
          '    return point\n')
    return Run(["pdoc", "-o", "site", "geo"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the traces' starts"),
        S("stderr", r'^  File ".*/geo/raster\.py", line 3, in <module>$', "the project's own frame"),
        S("stderr", r"^ModuleNotFoundError: No module named 'osgeo'$", "the cause"),
        S("stderr", r"^RuntimeError: Error importing geo\.raster$", "the exception"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0, 1))


def _notebook(cells: list[str]) -> str:
    """A notebook (nbformat 4) of code cells with no outputs."""
    import json

    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{n:02d}", "metadata": {},
                                  "outputs": [], "source": source} for n, source in enumerate(cells)],
                       "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=1)


@recipe("jupyter-execute-notebook-cell-error", "jupyter-execute", "notebook", pyver("nbclient"), needs=("jupyter-execute",))
def _jupyter_execute(root):
    """Write the `jupyter-execute-notebook-cell-error` project under `root`; return its command and signals."""
    cells = ["import csv\nimport statistics\n", "with open('sensors.csv') as handle:\n    rows = list(csv.DictReader(handle))\nlen(rows)\n"]
    cells += [f"station_{k} = [float(r['temp']) for r in rows if r['station'] == 's{k}']\n"
              f"print('station s{k}:', len(station_{k}), 'readings, mean', round(statistics.mean(station_{k}), 2))\n"
              for k in range(14)]
    cells.append("humidity = [float(r['humidity']) for r in rows]\nprint('mean humidity', statistics.mean(humidity))\n")
    cells += ["summary = {k: len(v) for k, v in globals().items() if k.startswith('station_')}\nprint(summary)\n"]
    write(root, "analysis.ipynb", _notebook(cells))
    write(root, "sensors.csv", "station,temp,humidity\n" + "".join(
        f"s{n % 14},{round(12 + n % 9 * 0.7, 1)},{'n/a' if n == 1181 else n % 60 + 30}\n" for n in range(2000)))
    return Run(["jupyter-execute", "analysis.ipynb"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r"^nbclient\.exceptions\.CellExecutionError: An error occurred while executing the following cell:$",
          "the exception"),
        S("stderr", r"In\[17\].*, line 1\S*$", "the cell and line that raised"),
        S("stderr", r"ValueError.*: could not convert string to float: 'n/a'$", "the cell's own exception"),
    ], expect_exit=exits(1))


_RICH_CLI = """\
import json
import sys

from rich.console import Console
from rich.traceback import install

from deploy.render import render_all

install(show_locals=True, width=100)
console = Console(stderr=True)
services = json.load(open(sys.argv[1]))
for name, manifest in render_all(services):
    console.print(f"rendered {name}: {len(manifest)} bytes")
"""

_RICH_RENDER = """\
PORT_BASE = 8000


def container(service, index):
    limits = service["resources"]["limits"]
    return {"name": f"{service['name']}-{index}", "image": service["image"], "cpu": limits["cpu"],
            "memory": limits["memory"], "port": PORT_BASE + index}


def render(service):
    containers = [container(service, index) for index in range(service["replicas"])]
    return "\\\\n".join(f"{c['name']} {c['image']} cpu={c['cpu']} mem={c['memory']} :{c['port']}" for c in containers)


def render_all(services):
    for service in services:
        yield service["name"], render(service)
"""


@recipe("rich-traceback-locals-deploy-render", "rich", "crash", pyver("rich"), needs=("python",))
def _rich(root):
    """Write the `rich-traceback-locals-deploy-render` project under `root`; return its command and signals."""
    import json

    write(root, "deploy/__init__.py", "")
    write(root, "deploy/render.py", _RICH_RENDER)
    write(root, "render_manifests.py", _RICH_CLI)
    services = [{"name": f"svc-{n:02d}", "image": f"registry.local/svc-{n:02d}:1.{n}.0", "replicas": 1 + n % 3,
                 "resources": {"limits": {"cpu": "500m", "memory": f"{256 * (1 + n % 4)}Mi"}}} for n in range(24)]
    del services[19]["resources"]["limits"]["memory"]
    write(root, "services.json", json.dumps(services, indent=1))
    return Run(["python", "render_manifests.py", "services.json"], [
        S("stderr", r"^╭─+ Traceback \(most recent call last\) ─+╮$", "the trace's start"),
        S("stderr", r"^│ py:7 in container +│$", "the innermost frame, in the project's own code"),
        S("stderr", r'^│ ❱  7 │ +│ +│ +"memory": limits\["memory"\]', "the line that raised"),
        S("stderr", r"^KeyError: 'memory'$", "the exception"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


def _mamba_spec(part: int) -> str:
    """A mamba spec of tax calculations for one country, every example passing."""
    examples = "".join(f"        with it('taxes {amount} cents at {rate}%'):\n"
                       f"            expect(tax({amount}, {rate})).to(equal(round({amount} * {rate} / 100)))\n\n"
                       for amount, rate in ((100 * k + part, (7, 19, 21, 23)[k % 4]) for k in range(36)))
    return (f"from expects import equal, expect\nfrom mamba import context, description, it\n\nfrom ledger.tax import tax\n\n"
            f"with description('VAT for country {part}'):\n    with context('standard rates'):\n{examples}")


@recipe("mamba-specs-all-pass", "mamba", "test-runner", pyver("mamba"), needs=("mamba",))
def _mamba(root):
    """Write the `mamba-specs-all-pass` project under `root`; return its command and signals."""
    write(root, "ledger/__init__.py", "")
    write(root, "ledger/tax.py", "def tax(amount_cents, rate_percent):\n    return round(amount_cents * rate_percent / 100)\n")
    for part in range(25):
        write(root, f"spec/vat_{part:02d}_spec.py", _mamba_spec(part))
    return Run(["mamba", "--format", "documentation", "--no-color", "spec"], [
        S("stdout", r"^900 examples ran in [\d.]+ seconds$", "the summary of a run where every example passed"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0))
