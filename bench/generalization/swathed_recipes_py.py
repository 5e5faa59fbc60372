"""Swathed recipes for PyPI tools and Python programs: gevent's WSGI server, structlog, peewee, pynose, cProfile,
tqdm, pyanalyze, jsonschema, prance, detect-secrets, tach.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from swathed_common import Run, S, exits, pyver, recipe, served, sh, vbin, write

NPM_PINS: list[str] = []
PY_PINS = ["gevent==24.11.1", "structlog==25.1.0", "peewee==3.17.9", "pynose==1.5.4", "tqdm==4.67.1",
           "pyanalyze==0.13.1", "jsonschema==4.23.0", "prance[cli]==23.6.21.0", "click==8.5.1",
           "openapi-spec-validator==0.7.1", "detect-secrets==1.5.0",
           "tach==0.27.3"]
APT_PINS: dict[str, str] = {}

_GEVENT_APP = """\
from gevent.pywsgi import WSGIServer

PRICES = {sku: 3.5 + (sku % 40) * 0.25 for sku in range(4000)}
CURRENCY = {sku: ("EUR", "GBP", "CHF")[sku % 3] for sku in range(4000) if sku != 2917}


def app(environ, start_response):
    sku = int(environ["PATH_INFO"].rsplit("/", 1)[-1])
    body = f'{{"sku": {sku}, "price": {PRICES[sku]}, "currency": "{CURRENCY[sku]}"}}'.encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


if __name__ == "__main__":
    WSGIServer(("127.0.0.1", 18851), app).serve_forever()
"""

_GEVENT_CLIENT = """\
import urllib.error
import urllib.request

failed = 0
for sku in range(4000):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:18851/prices/{sku}").read()
    except urllib.error.HTTPError:
        failed += 1
print(f"price refresh: 4000 requests, {failed} failed", flush=True)
"""


@recipe("gevent-pywsgi-log-one-500", "gevent", "log", pyver("gevent"), needs=("python",))
def _gevent(root):
    """Write the `gevent-pywsgi-log-one-500` project under `root`; return its command and signals."""
    write(root, "pricing/__init__.py", "")
    write(root, "pricing/server.py", _GEVENT_APP)
    write(root, "refresh.py", _GEVENT_CLIENT)
    command = served("python -m pricing.server", 18851, "python refresh.py")
    return Run(["python", "-m", "pricing.server"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/pricing/server\.py", line \d+, in app$', "the application's own frame"),
        S("stderr", r"^KeyError: 2917$", "the exception"),
        S("stderr", r"failed with KeyError$", "the server's report of the failed request"),
        S("stderr", r'"GET /prices/2917 HTTP/1\.1" 500 ', "the one 500 among 4,000 requests in the access log"),
        S("stdout", r"^price refresh: 4000 requests, 1 failed$", "the client's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)


_STRUCTLOG_JOB = """\
import logging
import sys

import structlog

from ledger.sync import sync_account

structlog.configure(
    processors=[structlog.processors.add_log_level, structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
    wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
    logger_factory=structlog.PrintLoggerFactory(sys.stdout),
)
log = structlog.get_logger("ledger.nightly")
synced = failed = 0
for account in range(7200):
    try:
        entries = sync_account(account)
    except Exception:
        log.exception("account sync failed", account=account)
        failed += 1
        continue
    log.info("account synced", account=account, entries=entries, branch=f"br-{account % 31:02d}")
    synced += 1
log.info("nightly sync finished", synced=synced, failed=failed)
sys.exit(1 if failed else 0)
"""

_STRUCTLOG_SYNC = """\
from decimal import Decimal

RATES = {branch: Decimal("1.0") + Decimal(branch) / 100 for branch in range(31)}
OPENING = {account: Decimal(account % 977) for account in range(7200)}
OPENING[3391] = None
CLOSED = {5128}


def sync_account(account):
    if account in CLOSED:
        raise PermissionError(f"account {account} is closed at the bank")
    balance = OPENING[account] * RATES[account % 31]
    return int(balance) % 40 + 1
"""


@recipe("structlog-nightly-sync-two-failed", "structlog", "log", pyver("structlog"), needs=("python",))
def _structlog(root):
    """Write the `structlog-nightly-sync-two-failed` project under `root`; return its command and signals."""
    write(root, "ledger/__init__.py", "")
    write(root, "ledger/sync.py", _STRUCTLOG_SYNC)
    write(root, "nightly.py", _STRUCTLOG_JOB)
    return Run(["python", "nightly.py"], [
        S("stdout", r'"level": "error"', "the two failed accounts among 7,200, each with its trace"),
        S("stdout", r'"event": "nightly sync finished"', "the summary"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1), timeout=300)


_PEEWEE_IMPORT = """\
import logging

from peewee import CharField, DecimalField, ForeignKeyField, IntegerField, Model, SqliteDatabase

logging.basicConfig(level=logging.DEBUG, format="%(asctime)s %(name)s %(levelname)s %(message)s")
db = SqliteDatabase("shop.db")


class Customer(Model):
    email = CharField(unique=True)
    name = CharField()

    class Meta:
        database = db


class Order(Model):
    customer = ForeignKeyField(Customer, backref="orders")
    number = IntegerField(unique=True)
    total = DecimalField(decimal_places=2)

    class Meta:
        database = db


db.connect()
db.create_tables([Customer, Order])
for n in range(1800):
    customer = Customer.create(email=f"customer{n}@example.org", name=f"Customer {n}")
    Order.create(customer=customer, number=100000 + n, total=12.5 + n % 70)
# the legacy shop numbered its orders from 101000
legacy = [(f"legacy{n}@example.org", 101000 + n) for n in range(400)]
for email, number in legacy:
    customer = Customer.create(email=email, name=email.split("@")[0])
    Order.create(customer=customer, number=number, total=30)
print("import done")
"""


@recipe("peewee-debug-import-integrity-error", "peewee", "orm", pyver("peewee"), needs=("python",))
def _peewee(root):
    """Write the `peewee-debug-import-integrity-error` project under `root`; return its command and signals."""
    write(root, "import_shop.py", _PEEWEE_IMPORT)
    return Run(["python", "import_shop.py"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the traces' starts"),
        S("stderr", r"^sqlite3\.IntegrityError: UNIQUE constraint failed: order\.number$", "the database's error"),
        S("stderr", r'^  File ".*/import_shop\.py", line \d+, in <module>$', "the script's own frame"),
        S("stderr", r"^peewee\.IntegrityError: UNIQUE constraint failed: order\.number$", "the exception"),
        S("stderr", r"\[1801, 101000, 30\]\)$", "the failing insert, last among 3,600 logged queries"),
    ], expect_exit=exits(1), timeout=300)


def _nose_module(k: int, broken: int) -> str:
    """A test module of 40 unit-conversion tests; test `broken` of module 11 expects a rounded value."""
    tests = []
    for n in range(40):
        expected = f"round({n} * 2.54 + {k}, 4)" if (k, n) != (11, broken) else f"{round(n * 2.54 + k, 1)}"
        tests.append(f"    def test_inches_{n:02d}(self):\n"
                     f"        self.assertEqual(round(to_cm({n}) + {k}, 4), {expected})\n\n")
    return (f"import unittest\n\nfrom units import to_cm\n\n\nclass TestConversions{k:02d}(unittest.TestCase):\n"
            + "".join(tests))


@recipe("nosetests-verbose-one-failure", "nosetests", "test-runner", pyver("pynose"), needs=("nosetests",))
def _nose(root):
    """Write the `nosetests-verbose-one-failure` project under `root`; return its command and signals."""
    write(root, "units.py", "def to_cm(inches):\n    return inches * 2.54\n")
    for k in range(16):
        write(root, f"tests/test_conversions_{k:02d}.py", _nose_module(k, 37))
    return Run(["nosetests", "-v", "tests"], [
        S("stderr", r"^test_inches_37 \(test_conversions_11\.TestConversions11\.test_inches_37\) \.\.\. FAIL$",
          "the one failing test among 640"),
        S("stderr", r"^FAIL: test_inches_37 ", "the failure's heading"),
        S("stderr", r'^  File ".*/tests/test_conversions_11\.py", line \d+, in test_inches_37$', "the test's frame"),
        S("stderr", r"^AssertionError: 104\.98 != 105\.0$", "the failed assertion"),
        S("stderr", r"^Ran 640 tests in ", "the count"),
        S("stderr", r"^FAILED \(failures=1\)$", "the verdict"),
    ], expect_exit=exits(1), timeout=300)


@recipe("nosetests-verbose-all-pass", "nosetests", "test-runner", pyver("pynose"), needs=("nosetests",))
def _nose_pass(root):
    """Write the `nosetests-verbose-all-pass` project under `root` (the suite, fixed); return its command, signals."""
    write(root, "units.py", "def to_cm(inches):\n    return inches * 2.54\n")
    for k in range(16):
        write(root, f"tests/test_conversions_{k:02d}.py", _nose_module(k, -1))
    return Run(["nosetests", "-v", "tests"], [
        S("stderr", r"^Ran 640 tests in ", "the count"),
        S("stderr", r"^OK$", "the verdict of a clean run"),
    ], expect_exit=exits(0), timeout=300)


def _profile_module(k: int) -> str:
    """One pricing rule module of 24 small functions, each called per order line."""
    funcs = "".join(f"def rule_{k}_{j}(line):\n    return line['qty'] * {j + 1} + line['sku'] % {k + 3}\n\n\n"
                    for j in range(24))
    table = ", ".join(f"rule_{k}_{j}" for j in range(24))
    return funcs + f"RULES = [{table}]\n"


_PROFILE_MAIN = """\
from pricing import rules_00
from pricing.catalogue import find_product

MODULES = [__import__(f"pricing.rules_{k:02d}", fromlist=["RULES"]) for k in range(48)]
LINES = [{"sku": n, "qty": 1 + n % 5} for n in range(1500)]

total = 0
for line in LINES:
    product = find_product(line["sku"])
    for module in MODULES:
        for rule in module.RULES:
            total += rule(line)
print("quote total", total)
"""

_PROFILE_CATALOGUE = """\
CATALOGUE = [{"sku": n, "name": f"item {n}"} for n in range(6000)]


def find_product(sku):
    for product in CATALOGUE:
        if product["sku"] == sku:
            return product
    return None
"""


@recipe("cprofile-quote-cumulative", "cProfile", "profile", [vbin("python"), "-V"], needs=("python",))
def _cprofile(root):
    """Write the `cprofile-quote-cumulative` project under `root`; return its command and signals."""
    write(root, "pricing/__init__.py", "")
    write(root, "pricing/catalogue.py", _PROFILE_CATALOGUE)
    for k in range(48):
        write(root, f"pricing/rules_{k:02d}.py", _profile_module(k))
    write(root, "quote.py", _PROFILE_MAIN)
    return Run(["python", "-m", "cProfile", "-s", "cumulative", "quote.py"], [
        S("stdout", r"^ +\d+ function calls \(\d+ primitive calls\) in [\d.]+ seconds$", "the profile's total"),
        S("stdout", r"^ +ncalls +tottime +percall +cumtime +percall filename:lineno\(function\)$", "the table's heading"),
        S("stdout", r" quote\.py:1\(<module>\)$", "the script's own row: most of the time is its loop"),
        S("stdout", r" catalogue\.py:\d+\(find_product\)$", "the project's hottest function, a linear search"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)


_TQDM_CONVERT = """\
import json
import sys

from tqdm import tqdm

from tiles.decode import decode_record

for shard in range(90):
    with open(f"shards/shard-{shard:03d}.jsonl") as handle:
        records = handle.readlines()
    tiles = 0
    for raw in tqdm(records, desc=f"shard {shard:03d}", unit="rec", file=sys.stderr, ascii=True, mininterval=0,
                    miniters=250, ncols=90):
        tiles += decode_record(json.loads(raw))
    print(f"shard {shard:03d}: {tiles} tiles written", flush=True)
"""

_TQDM_DECODE = """\
def decode_record(record):
    width, height = record["size"]
    if width * height == 0:
        raise ValueError(f"record {record['id']} has an empty raster")
    return (width // 256 + 1) * (height // 256 + 1)
"""


@recipe("tqdm-convert-shards-one-raises", "tqdm", "progress", pyver("tqdm"), needs=("python",))
def _tqdm(root):
    """Write the `tqdm-convert-shards-one-raises` project under `root`; return its command and signals."""
    write(root, "tiles/__init__.py", "")
    write(root, "tiles/decode.py", _TQDM_DECODE)
    write(root, "convert.py", _TQDM_CONVERT)
    for shard in range(90):
        lines = [f'{{"id": "{shard}-{n}", "size": [{0 if (shard, n) == (71, 1642) else 512 + n % 900}, '
                 f'{300 + n % 700}]}}\n' for n in range(2500)]
        write(root, f"shards/shard-{shard:03d}.jsonl", "".join(lines))
    return Run(["python", "convert.py"], [
        S("stderr", r"shard 071: +66%\|.*\| 1642/2500 ", "the progress bar where the conversion stopped"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/tiles/decode\.py", line \d+, in decode_record$', "the project's frame that raised"),
        S("stderr", r"^ValueError: record 71-1642 has an empty raster$", "the exception"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1), timeout=300)


def _analyze_module(k: int) -> str:
    """One module of the billing package; three of them hold a mistake (pyanalyze reports two of the three)."""
    body = [(f"from billing.money import Money\n\n\ndef fee_{k}(amount: Money) -> Money:\n"
            f"    return amount.scaled({k + 1})\n\n\n"
            f"def label_{k}(amount: Money) -> str:\n    return f\"fee {k}: {{amount.cents}}\"\n")]
    if k == 9:
        body.append("\n\ndef refund_9(amount: Money) -> Money:\n    return amount.negated()\n")
    if k == 23:
        body.append("\n\ndef split_23(amount: Money) -> int:\n    return amount.cents + \"0\"\n")
    if k == 31:
        body.append("\n\ndef total_31(items: list[Money]) -> Money:\n    return Money.sum(items, currency=\"EUR\")\n")
    return "".join(body)


_MONEY = """\
from __future__ import annotations


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents

    def scaled(self, factor: int) -> Money:
        return Money(self.cents * factor)

    @staticmethod
    def sum(items: list[Money]) -> Money:
        return Money(sum(item.cents for item in items))
"""


@recipe("pyanalyze-billing-two-findings", "pyanalyze", "type-checker", pyver("pyanalyze"), needs=("python",))
def _pyanalyze(root):
    """Write the `pyanalyze-billing-two-findings` project under `root`; return its command and signals."""
    write(root, "billing/__init__.py", "")
    write(root, "billing/money.py", _MONEY)
    for k in range(40):
        write(root, f"billing/fees_{k:02d}.py", _analyze_module(k))
    return Run(["python", "-m", "pyanalyze", "billing"], [
        S("stderr", r"Got an unexpected keyword argument 'currency' \(code: incompatible_call\)$", "the first error"),
        S("stderr", r"^In billing/fees_31\.py at line 13$", "its location"),
        S("stderr", r"^Attribute negated of type .* probably does not exist \(code: attribute_is_never_set\)$",
          "the second error"),
        S("stderr", r"^In billing/fees_09\.py at line 13$", "its location"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1), timeout=300)


_CONFIG_SCHEMA = """\
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["service", "replicas", "port", "env"],
  "additionalProperties": false,
  "properties": {
    "service": {"type": "string", "pattern": "^[a-z][a-z0-9-]+$"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 12},
    "port": {"type": "integer", "minimum": 1024, "maximum": 65535},
    "env": {"type": "object", "additionalProperties": {"type": "string"}},
    "probes": {"type": "array", "items": {"enum": ["liveness", "readiness", "startup"]}}
  }
}
"""


@recipe("jsonschema-cli-service-configs", "jsonschema", "validation", pyver("jsonschema"), needs=("jsonschema",))
def _jsonschema(root):
    """Write the `jsonschema-cli-service-configs` project under `root`; return its command and signals."""
    import json

    write(root, "schema/service.json", _CONFIG_SCHEMA)
    argv = ["jsonschema"]
    for n in range(30):
        config = {"service": f"svc-{n:02d}", "replicas": 1 + n % 6, "port": 8000 + n,
                  "env": {"LOG_LEVEL": "info", "REGION": "eu-west-1"}, "probes": ["liveness", "readiness"]}
        if n == 7:
            config["replicas"] = 0
        if n == 19:
            config["env"]["WORKERS"] = 4
            config["probes"].append("health")
        write(root, f"services/svc-{n:02d}.json", json.dumps(config, indent=2) + "\n")
        argv += ["-i", f"services/svc-{n:02d}.json"]
    return Run(argv + ["schema/service.json"], [
        S("stderr", r"^0: 0 is less than the minimum of 1$", "the first invalid config's error"),
        S("stderr", r"^4: 4 is not of type 'string'$", "an error of the second invalid config"),
        S("stderr", r"^health: 'health' is not one of \['liveness', 'readiness', 'startup'\]$", "its other error"),
    ], expect_exit=exits(1))


_PRANCE_SPEC = """\
openapi: 3.0.3
info: {title: Orders, version: 2.4.0}
paths:
  /orders:
    get:
      responses:
        "200":
          description: the orders
          content:
            application/json:
              schema: {type: array, items: {$ref: "schemas/order.yaml#/Order"}}
  /orders/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses:
        "200":
          description: one order
          content:
            application/json:
              schema: {$ref: "schemas/order.yaml#/Order"}
        "404":
          description: no such order
          content:
            application/json:
              schema: {$ref: "schemas/errors.yaml#/NotFound"}
"""


@recipe("prance-validate-broken-ref", "prance", "api-schema", pyver("prance"), needs=("prance",))
def _prance(root):
    """Write the `prance-validate-broken-ref` project under `root`; return its command and signals."""
    write(root, "api/openapi.yaml", _PRANCE_SPEC)
    write(root, "api/schemas/order.yaml", "Order:\n  type: object\n  properties:\n    id: {type: integer}\n"
          "    total: {type: number}\n")
    write(root, "api/schemas/errors.yaml", "Problem:\n  type: object\n  properties:\n    title: {type: string}\n")
    return Run(["prance", "validate", "api/openapi.yaml"], [
        S("stderr", r'^ERROR in "api/openapi\.yaml" \[ResolutionError\]: Cannot resolve reference ".*errors\.yaml#/NotFound"',
          "the unresolvable reference"),
    ], expect_exit=exits(1))


def _settings(n: int) -> str:
    """One service's settings module; the key and the password come from the environment."""
    return (f"import os\n\nSERVICE = \"svc-{n}\"\nTIMEOUT = {5 + n % 4}\n"
            f"API_KEY = os.environ[\"SVC_{n}_API_KEY\"]\nDB_PASSWORD = os.environ.get(\"SVC_{n}_DB_PASSWORD\")\n")


@recipe("detect-secrets-hook-new-keys", "detect-secrets-hook", "security", pyver("detect-secrets"),
        needs=("detect-secrets-hook", "git"))
def _detect_secrets(root):
    """Write the `detect-secrets-hook-new-keys` project under `root`; return its command and signals."""
    for n in range(24):
        write(root, f"services/svc_{n:02d}/settings.py", _settings(n))
    write(root, "tests/fixtures.py", 'TEST_TOKEN = "ghp_0000000000000000000000000000000000fake"  # pragma: allowlist secret\n')
    sh("git init -q . && git add -A", root)
    sh("detect-secrets scan > .secrets.baseline", root, env={"PATH": f"{vbin('')}:/usr/bin:/bin"})
    write(root, "services/svc_07/settings.py", _settings(7).replace(
        'os.environ["SVC_7_API_KEY"]', '"AKIAZ7Q4EXAMPLE3KXMB"').replace(
        'os.environ.get("SVC_7_DB_PASSWORD")', '"Tr0ub4dor&3-prod-Lyon"'))
    write(root, "deploy/id_deploy", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n" * 6
          + "-----END OPENSSH PRIVATE KEY-----\n")
    files = [f"services/svc_{n:02d}/settings.py" for n in range(24)] + ["tests/fixtures.py", "deploy/id_deploy"]
    return Run(["detect-secrets-hook", "--baseline", ".secrets.baseline", *files], [
        S("stdout", r"^ERROR: Potential secrets about to be committed to git repo!$", "the verdict"),
        S("stdout", r"^Secret Type: (Private Key|AWS Access Key)$", "the two kinds of key found"),
        S("stdout", r"^Location: +(deploy/id_deploy:1|services/svc_07/settings\.py:[56])$", "where each secret is"),
    ], expect_exit=exits(1))


_TACH_TOML = """\
exclude = ["**/tests", "**/__pycache__"]
source_roots = ["src"]

[[modules]]
path = "shop.catalogue"
depends_on = ["shop.common"]

[[modules]]
path = "shop.orders"
depends_on = ["shop.catalogue", "shop.common"]

[[modules]]
path = "shop.payments"
depends_on = ["shop.common"]

[[modules]]
path = "shop.shipping"
depends_on = ["shop.orders", "shop.common"]

[[modules]]
path = "shop.common"
depends_on = []
"""


@recipe("tach-check-two-boundary-violations", "tach", "architecture-lint", pyver("tach"), needs=("tach",))
def _tach(root):
    """Write the `tach-check-two-boundary-violations` project under `root`; return its command and signals."""
    write(root, "tach.toml", _TACH_TOML)
    write(root, "src/shop/__init__.py", "")
    write(root, "src/shop/common/__init__.py", "")
    write(root, "src/shop/common/money.py", "def cents(value):\n    return round(value * 100)\n")
    deps = {"catalogue": ["common"], "orders": ["catalogue", "common"], "payments": ["common"],
            "shipping": ["orders", "common"]}
    for package, allowed in deps.items():
        write(root, f"src/shop/{package}/__init__.py", "")
        for n in range(12):
            imports = "".join(f"from shop.{dep} import {'money' if dep == 'common' else 'api'}\n" for dep in allowed)
            if (package, n) == ("payments", 4):
                imports += "from shop.orders.api import mark_paid\n"
            if (package, n) == ("catalogue", 9):
                imports += "from shop.shipping.api import parcel_size\n"
            write(root, f"src/shop/{package}/part_{n:02d}.py", imports + f"\n\ndef step_{n}():\n    return {n}\n")
        write(root, f"src/shop/{package}/api.py", "def mark_paid(order):\n    return order\n\n\n"
              "def parcel_size(item):\n    return 1\n")
    return Run(["tach", "check"], [
        S("stderr", r"^\[FAIL\] .*src/shop/catalogue/part_09\.py\[L2\].*Module 'shop\.catalogue' cannot depend on 'shop\.shipping'\.$",
          "the first violation"),
        S("stderr", r"^\[FAIL\] .*src/shop/payments/part_04\.py\[L2\].*Module 'shop\.payments' cannot depend on 'shop\.orders'\.$",
          "the second violation"),
    ], expect_exit=exits(1))


_THUMBS = """\
import ctypes
import sys

from gallery.render import render


def main():
    for n in range(3200):
        size = render(n)
        print(f"thumbnail {n:04d}: {size[0]}x{size[1]} written to out/{n:04d}.webp", flush=True)


main()
"""

_RENDER = """\
import ctypes

_libc = ctypes.CDLL(None)
_BUFFERS = {n: ctypes.create_string_buffer(64) for n in range(3200)}
_ADDRESSES = {n: ctypes.addressof(buffer) for n, buffer in _BUFFERS.items()}
_ADDRESSES[2471] = 0x40  # a handle the decoder already released


def _pixels(n):
    return ctypes.string_at(_ADDRESSES[n], 64)


def render(n):
    data = _pixels(n)
    return (160 + len(data) + n % 40, 120 + n % 30)
"""


@recipe("faulthandler-thumbnails-segfault", "faulthandler", "crash", [vbin("python"), "-V"], needs=("python",))
def _faulthandler(root):
    """Write the `faulthandler-thumbnails-segfault` project under `root`; return its command and signals."""
    write(root, "gallery/__init__.py", "")
    write(root, "gallery/render.py", _RENDER)
    write(root, "thumbs.py", _THUMBS)
    return Run(["python", "-X", "faulthandler", "thumbs.py"], [
        S("stderr", r"^Fatal Python error: Segmentation fault$", "the crash"),
        S("stderr", r"^Current thread 0x[0-9a-f]+ \(most recent call first\):$", "the trace's start"),
        S("stderr", r'^  File ".*/gallery/render\.py", line \d+ in _pixels$', "the project's frame that crashed"),
        S("stdout", r"^thumbnail 2470: ", "the last thumbnail written before the crash"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(-11, 139))
