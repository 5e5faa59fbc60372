"""Mantled recipes for PyPI tools and Python programs: Granian, zizmor, subunit2pyunit, eliot-tree, pyang,
restructuredtext-lint, Jinja2, PDM, j2lint, taskiq.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from mantled_common import Run, S, exits, pyver, recipe, redis_server, served, sh, vbin, write

NPM_PINS: list[str] = []
PY_PINS = ["granian==2.8.9", "zizmor==1.33.1", "eliot==1.18.0", "eliot-tree==24.0.0", "pyang==2.7.1",
           "restructuredtext-lint==2.0.2", "python-subunit==1.4.6", "testtools==2.9.1",
           "Jinja2==3.1.6", "pdm==2.29.4", "hishel[httpx2]==1.4.0", "j2lint==1.3.0", "taskiq==0.13.0",
           "taskiq-redis==1.2.4"]
APT_PINS: dict[str, str] = {}

_ASGI_APP = """\
import json

PRICES = {sku: round(2.5 + (sku * 7) % 90 * 0.35, 2) for sku in range(3600)}
CURRENCY = {sku: ("EUR", "USD", "GBP")[sku % 3] for sku in range(3600) if sku != 2741}


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    sku = int(scope["path"].rsplit("/", 1)[1])
    body = json.dumps({"sku": sku, "price": PRICES[sku], "currency": CURRENCY[sku]}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
"""

_PRICE_CLIENT = """\
import urllib.error
import urllib.request

failed = 0
for sku in range(3600):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:18934/prices/{sku}").read()
    except urllib.error.HTTPError:
        failed += 1
print(f"price sync: 3600 requests, {failed} failed", flush=True)
"""


@recipe("granian-access-log-one-500", "granian", "log", [vbin("granian"), "--version"], needs=("granian",))
def _granian(root):
    """Write the `granian-access-log-one-500` project under `root`; return its command and signals."""
    write(root, "pricing/__init__.py", "")
    write(root, "pricing/asgi.py", _ASGI_APP)
    write(root, "sync.py", _PRICE_CLIENT)
    serve = "granian --interface asgi --host 127.0.0.1 --port 18934 --workers 1 --access-log pricing.asgi:app"
    command = served(serve, 18934, "python sync.py")
    return Run(serve.split(), [
        S("stdout", r'^\[[-\d :+]+\] 127\.0\.0\.1 - "GET /prices/2741 HTTP/1\.1" 500 ', "the one request that failed among 3,600"),
        S("stdout", r"^\[ERROR\] Application callable raised an exception$", "the server's error"),
        S("stdout", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stdout", r'^  File ".*/pricing/asgi\.py", line \d+, in app$', "the application's own frame"),
        S("stdout", r"^KeyError: 2741$", "the exception"),
        S("stdout", r"^price sync: 3600 requests, 1 failed$", "the client's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)


def _workflow(n: int) -> str:
    """A CI workflow of one service: checkout, setup, cache, test; actions pinned by tag, as most teams do."""
    steps = ("      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n        with:\n"
             "          python-version: '3.12'\n      - uses: actions/cache@v4\n        with:\n"
             f"          path: ~/.cache/pip\n          key: pip-{n}-${{{{ hashFiles('requirements.txt') }}}}\n"
             f"      - run: pip install -r services/svc{n:02d}/requirements.txt\n"
             f"      - run: pytest services/svc{n:02d}\n")
    return (f"name: service {n:02d}\n\non:\n  push:\n    paths: ['services/svc{n:02d}/**']\n  pull_request:\n\n"
            f"jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}")


_TRIAGE = """\
name: triage

on:
  issues:
    types: [opened, edited]

permissions:
  issues: write

jobs:
  label:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: label by title
        run: |
          title="${{ github.event.issue.title }}"
          case "$title" in
            *crash*) gh issue edit ${{ github.event.issue.number }} --add-label bug ;;
          esac
        env:
          GH_TOKEN: ${{ secrets.GITHUB_TOKEN }}
"""


@recipe("zizmor-offline-workflows-one-injection", "zizmor", "linter", [vbin("zizmor"), "--version"], needs=("zizmor",))
def _zizmor(root):
    """Write the `zizmor-offline-workflows-one-injection` project under `root`; return its command and signals."""
    for n in range(36):
        write(root, f".github/workflows/svc{n:02d}.yml", _workflow(n))
    write(root, ".github/workflows/triage.yml", _TRIAGE)
    return Run(["zizmor", "--offline", "."], [
        S("stdout", r"^error\[template-injection\]: code injection via template expansion$",
          "the one finding of its kind among 296 (109 of them unpinned actions)"),
        S("stdout", r"^  --> \./\.github/workflows/triage\.yml:17:22$", "where it is"),
        S("stdout", r"\^+ may expand into attacker-controllable code$", "what it does"),
        S("stdout", r"^296 findings \(113 suppressed, 38 unsafe fixes\): 0 informational, 0 low, 73 medium, 110 high$",
          "the totals"),
    ], expect_exit=exits(14))


def _hardened_workflow(n: int) -> str:
    """The same workflow after hardening: actions pinned by commit, no persisted credentials, read-only token."""
    pins = {"checkout": "11bd71901bbe5b1630ceea73d27597364c9af683", "setup-python": "0b93645e9fea7318ecaed2b359559ac225c90a2b",
            "cache": "1bd1e32a3bdc45362d1e726936510720a7c30a57"}
    return _workflow(n).replace("    runs-on: ubuntu-latest\n", "    runs-on: ubuntu-latest\n    permissions:\n      contents: read\n").replace(
        "      - uses: actions/checkout@v4\n", f"      - uses: actions/checkout@{pins['checkout']}  # v4.2.2\n        with:\n"
        "          persist-credentials: false\n").replace(
        "actions/setup-python@v5", f"actions/setup-python@{pins['setup-python']}  # v5.3.0").replace(
        "actions/cache@v4", f"actions/cache@{pins['cache']}  # v4.2.0")


@recipe("zizmor-offline-hardened-workflows-clean", "zizmor", "linter", [vbin("zizmor"), "--version"], needs=("zizmor",))
def _zizmor_clean(root):
    """Write the `zizmor-offline-hardened-workflows-clean` project under `root`; return its command and signals."""
    for n in range(36):
        write(root, f".github/workflows/svc{n:02d}.yml", _hardened_workflow(n))
    return Run(["zizmor", "--offline", "."], [
        S("stdout", r"^No findings to report\. Good job! \(108 suppressed\)$", "the verdict"),
    ], expect_exit=exits(0))


def _subunit_module(part: int) -> str:
    """A unittest module of 60 unit-conversion tests for one product family; one test expects a rounding the code
    does not do."""
    tests = []
    for n in range(60):
        grams = 125 + part * 40 + n * 15
        want = round(grams / 28.349523125, 2) + (0.01 if (part, n) == (37, 22) else 0)
        tests.append(f"    def test_weight_{n:02d}(self):\n        self.assertEqual(to_ounces({grams}), {round(want, 2)})\n")
    return (f"import unittest\n\nfrom units.convert import to_ounces\n\n\n"
            f"class Family{part:02d}Test(unittest.TestCase):\n" + "\n".join(tests))


@recipe("subunit2pyunit-one-failure-among-passes", "subunit2pyunit", "test-runner", pyver("python-subunit"),
        needs=("subunit2pyunit",))
def _subunit(root):
    """Write the `subunit2pyunit-one-failure-among-passes` project under `root`; return its command and signals."""
    write(root, "units/__init__.py", "")
    write(root, "units/convert.py", "def to_ounces(grams):\n    return round(grams / 28.349523125, 2)\n")
    write(root, "tests/__init__.py", "")
    for part in range(50):
        write(root, f"tests/test_family{part:02d}.py", _subunit_module(part))
    command = "python -m subunit.run discover -s tests -t . | subunit2pyunit"
    return Run(["subunit2pyunit"], [
        S("stderr", r"^tests\.test_family37\.Family37Test\.test_weight_22 \.\.\. FAIL$", "the one failing test among 3,000"),
        S("stderr", r"^FAIL: tests\.test_family37\.Family37Test\.test_weight_22$", "its failure's heading"),
        S("stderr", r"_StringException: Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/tests/test_family37\.py", line 74, in test_weight_22$', "the test's own frame"),
        S("stderr", r"^AssertionError: 68\.26 != 68\.27$", "the failed assertion"),
        S("stderr", r"^Ran 3000 tests in [\d.]+s$", "the count"),
        S("stderr", r"^FAILED \(failures=1\)$", "the verdict"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(1))


_ELIOT_JOB = """\
import json

from eliot import Message, start_action, to_file

from fulfil.picking import pick

to_file(open("fulfil.log", "w"))

for order, lines in json.load(open("orders.json")).items():
    with start_action(action_type="fulfil:order", order_id=int(order)):
        Message.log(message_type="fulfil:lines", count=len(lines))
        try:
            for sku in lines:
                with start_action(action_type="fulfil:pick", sku=sku) as action:
                    action.add_success_fields(bin=pick(sku))
        except KeyError:
            pass
"""

_PICKING = """\
BINS = {sku: f"A{sku // 20:02d}-{sku % 20:02d}" for sku in range(300)}


def pick(sku):
    return BINS[sku]
"""


@recipe("eliot-tree-one-failed-action", "eliot-tree", "log", pyver("eliot-tree"), needs=("eliot-tree",))
def _eliot_tree(root):
    """Write the `eliot-tree-one-failed-action` project under `root`; return its command and signals."""
    write(root, "fulfil/__init__.py", "")
    write(root, "fulfil/picking.py", _PICKING)
    write(root, "run_fulfilment.py", _ELIOT_JOB)
    orders = {n: [(n * 7 + k) % 300 for k in range(1 + n % 3)] for n in range(1400)}
    orders[911].append(412)
    write(root, "orders.json", json.dumps(orders) + "\n")
    sh([vbin("python"), "run_fulfilment.py"], root, env={"PYTHONPATH": root})
    return Run(["eliot-tree", "fulfil.log"], [
        S("stdout", r"^    ├── order_id: 911$", "the order whose action failed, among 1,400"),
        S("stdout", r"^    │   ├── sku: 412$", "the failed pick's item"),
        S("stdout", r"⇒ failed \d{4}-", "the one failed action"),
        S("stdout", r"^    │       ├── exception: builtins\.KeyError$", "its exception"),
        S("stdout", r"^    │       └── reason: 412$", "its reason"),
    ], expect_exit=exits(0))


def _yang_module(n: int) -> str:
    """A YANG module of one line card's interface settings, as the vendor team writes them."""
    leafref = "/ifc:interfaces/ifc:interface/ifc:nam" if n == 9 else "/ifc:interfaces/ifc:interface/ifc:name"
    speed_type = "ifc:port-speed" if n != 14 else "ifc:port-sped"
    return f"""module card{n:02d}-ports {{
  yang-version 1.1;
  namespace "urn:example:card{n:02d}-ports";
  prefix c{n:02d};

  import example-interfaces {{ prefix ifc; }}

  organization "Example Networks";
  description "Port settings of line card {n}.";

  revision 2024-03-01 {{ description "Initial revision."; }}

  container card{n:02d} {{
    list port {{
      key "slot index";
      leaf slot {{ type uint8; }}
      leaf index {{ type uint8; }}
      leaf interface {{
        type leafref {{ path "{leafref}"; }}
      }}
      leaf speed {{ type {speed_type}; }}
      leaf mtu {{ type uint16 {{ range "576..9216"; }} default 1500; }}
      leaf enabled {{ type boolean; default true; }}
      leaf description {{ type string; }}
    }}
  }}
}}
"""


_YANG_BASE = """module example-interfaces {
  yang-version 1.1;
  namespace "urn:example:interfaces";
  prefix ifc;

  organization "Example Networks";
  description "Interfaces shared by all line cards.";

  revision 2024-03-01 { description "Initial revision."; }

  typedef port-speed {
    type enumeration { enum 1g; enum 10g; enum 25g; enum 100g; }
  }

  container interfaces {
    list interface {
      key name;
      leaf name { type string; }
    }
  }
}
"""


@recipe("pyang-lint-line-cards-two-errors", "pyang", "linter", [vbin("pyang"), "--version"], needs=("pyang",))
def _pyang(root):
    """Write the `pyang-lint-line-cards-two-errors` project under `root`; return its command and signals."""
    write(root, "yang/example-interfaces.yang", _YANG_BASE)
    for n in range(24):
        write(root, f"yang/card{n:02d}-ports.yang", _yang_module(n))
    return Run(["pyang", "--lint", "-p", "yang", "yang/*.yang"], [
        S("stderr", r'^yang/card09-ports\.yang:19: error: "example-interfaces:nam" in the path for interface at '
          r"yang/card09-ports\.yang:18 is not found$", "a leafref to nothing, among 270 style errors"),
        S("stderr", r'^yang/card14-ports\.yang:21: error: type "port-sped" not found in module "example-interfaces"$',
          "an unknown type, among 270 style errors"),
    ],
               command="pyang --lint -p yang yang/*.yang", expect_exit=exits(1))


def _rst_page(n: int) -> str:
    """A how-to page of the operations handbook, cross-referencing its neighbours."""
    nxt = f"`next page <howto-{n + 1:02d}.html>`__" if n < 47 else "the index"
    return (f".. _howto-{n:02d}:\n\nRunbook {n:02d}: restarting service {n}\n{'=' * 36}\n\n"
            f"Stop the service with ``systemctl stop svc{n}``, wait for the drain, then start it again.\n\n"
            f".. note::\n   Service {n} drains for {10 + n % 7} seconds.\n\nSee {nxt}.\n\n"
            f"Steps\n-----\n\n#. Check the dashboard.\n#. Announce the restart.\n#. Restart.\n")


@recipe("rst-lint-handbook-one-error", "rst-lint", "linter", pyver("restructuredtext-lint"), needs=("rst-lint",))
def _rst_lint(root):
    """Write the `rst-lint-handbook-one-error` project under `root`; return its command and signals."""
    for n in range(48):
        write(root, f"handbook/howto-{n:02d}.rst", _rst_page(n))
    write(root, "handbook/howto-31.rst", _rst_page(31).replace(".. note::", ".. nots::"))
    write(root, "handbook/howto-12.rst", _rst_page(12).replace("-----\n", "----\n"))
    return Run(["rst-lint", "handbook"], [
        S("stdout", r'^ERROR handbook/howto-31\.rst:8 Unknown directive type "nots"\.$', "the error"),
    ], expect_exit=exits(2))


_SITE_BUILD = """\
import json
import os

from jinja2 import Environment, FileSystemLoader, StrictUndefined

env = Environment(loader=FileSystemLoader("templates"), undefined=StrictUndefined, autoescape=True)
page = env.get_template("product.html")
products = json.load(open("catalogue.json"))
os.makedirs("site/products", exist_ok=True)
for product in products:
    path = f"site/products/{product['slug']}.html"
    with open(path, "w") as handle:
        handle.write(page.render(product=product))
    print(f"wrote {path} ({product['category']})")
print(f"built {len(products)} pages")
"""

_PRODUCT_TEMPLATE = """\
{% extends "base.html" %}
{% block body %}
<h1>{{ product.name }}</h1>
<p class="price">{{ "%.2f"|format(product.price) }} {{ product.currency }}</p>
<p>Ships from {{ product.warehouse.city }} in {{ product.warehouse.days }} days.</p>
{% endblock %}
"""


@recipe("jinja2-site-build-one-undefined", "jinja2", "crash", pyver("Jinja2"), needs=("python",))
def _jinja2(root):
    """Write the `jinja2-site-build-one-undefined` project under `root`; return its command and signals."""
    write(root, "build_site.py", _SITE_BUILD)
    write(root, "templates/base.html", "<!doctype html>\n<title>Shop</title>\n{% block body %}{% endblock %}\n")
    write(root, "templates/product.html", _PRODUCT_TEMPLATE)
    categories = ("kitchen", "garden", "bath", "office", "lighting")
    products = [{"slug": f"item-{n:04d}", "name": f"Item {n}", "category": categories[n % 5], "price": 3 + n * 0.25,
                 "currency": "EUR", "warehouse": {"city": ("Leipzig", "Gent")[n % 2], "days": 2 + n % 3}}
                for n in range(4200)]
    del products[3318]["warehouse"]["city"]
    write(root, "catalogue.json", json.dumps(products) + "\n")
    return Run(["python", "build_site.py"], [
        S("stdout", r"^wrote site/products/item-3317\.html \(bath\)$", "the last page written before the crash"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/build_site\.py", line 13, in <module>$', "the build script's frame"),
        S("stderr", r"^  File \"templates/product\.html\", line 5, in block 'body'$", "the template line that failed"),
        S("stderr", r"^jinja2\.exceptions\.UndefinedError: 'dict object' has no attribute 'city'$", "the exception"),
    ], expect_exit=exits(1))


_PDM_PROJECT = """\
[project]
name = "ledger-export"
version = "0.4.0"
requires-python = ">=3.11"
dependencies = [
    "requests==2.32.3",
    "botocore==1.34.0",
    "urllib3>=2.2",
    "click>=8.1",
]
"""


@recipe("pdm-lock-dependency-conflict", "pdm", "conflict", [vbin("pdm"), "--version"], needs=("pdm",))
def _pdm(root):
    """Write the `pdm-lock-dependency-conflict` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", _PDM_PROJECT)
    return Run(["pdm", "lock"], [
        S("stderr", r"^ERROR: Unable to find a resolution for urllib3$", "the error"),
        S("stderr", r'^  urllib3<2\.1,>=1\.25\.4; python_version >= "3\.10" \(from botocore@1\.34\.0\)$', "one side of the conflict"),
        S("stderr", r"^  urllib3>=2\.2 \(from project\)$", "the other side"),
        S("stderr", r"^\[ResolutionError\]: Unable to find a resolution$", "the exception"),
        S("stdout", r"Lock failed\.", "the verdict"),
    ], env={"PDM_CHECK_UPDATE": "false", "PDM_IGNORE_ACTIVE_VENV": "1"},
               expect_exit=exits(1), timeout=300)


def _switch_template(n: int) -> str:
    """A switch configuration template of the network team, in the house style (tight delimiters)."""
    body = (f"hostname {{{{hostname}}}}\n!\n{{% for vlan in vlans %}}\nvlan {{{{ vlan.id }}}}\n"
            f"   name {{{{vlan.name}}}}\n{{%endfor%}}\n!\n"
            f"{{% for port in ports %}}\ninterface Ethernet{{{{ port.index }}}}\n   description {{{{ port.peer }}}}\n"
            f"   switchport access vlan {{{{ port.vlan|default({100 + n}) }}}}\n{{% endfor %}}\n")
    if n == 58:
        body = body.replace("{%endfor%}", "{% endfor %\n")
    return body


@recipe("j2lint-switch-templates-one-syntax-error", "j2lint", "linter", pyver("j2lint"), needs=("j2lint",))
def _j2lint(root):
    """Write the `j2lint-switch-templates-one-syntax-error` project under `root`; return its command and signals."""
    for n in range(90):
        write(root, f"templates/leaf{n:02d}.j2", _switch_template(n))
    return Run(["j2lint", "templates"], [
        S("stdout", r"^templates/leaf58\.j2$", "the heading of the one template that does not parse, among 90"),
        S("stdout", r"templates/leaf58\.j2:6 expected token 'end of statement block', got '%' *$", "its syntax error"),
        S("stdout", r"^│   \(jinja-syntax-error\)$", "the error's rule"),
        S("stdout", r"^Jinja2 linting finished with 538 error\(s\) and 0 warning\(s\)$", "the totals"),
    ], expect_exit=exits(2))


_TASKIQ_BROKER = """\
from taskiq_redis import RedisAsyncResultBackend, RedisStreamBroker

URL = "unix://{sock}"
broker = RedisStreamBroker(URL).with_result_backend(RedisAsyncResultBackend(URL))
"""

_TASKIQ_TASKS = """\
import logging

from thumbs.broker import broker

log = logging.getLogger("thumbs.tasks")
SIZES = {{n: (64 + n % 5 * 32, 48 + n % 4 * 24) for n in range(1800)}}
SIZES[1266] = (0, 48)


@broker.task
async def make_thumbnail(image_id: int) -> str:
    width, height = SIZES[image_id]
    ratio = height / width
    log.info("thumbnail %d: %dx%d (ratio %.3f)", image_id, width, height, ratio)
    return f"thumbs/{{image_id}}.webp"
"""

_TASKIQ_ENQUEUE = """\
import asyncio

from thumbs.broker import broker
from thumbs.tasks import make_thumbnail


async def main():
    await broker.startup()
    tasks = [await make_thumbnail.kiq(n) for n in range(1800)]
    results = [await task.wait_result(timeout=60) for task in tasks]
    failed = sum(1 for r in results if r.is_err)
    print(f"thumbnails: {len(results)} tasks, {failed} failed", flush=True)
    await broker.shutdown()


asyncio.run(main())
"""


@recipe("taskiq-worker-one-task-raised", "taskiq", "log", pyver("taskiq"), needs=("taskiq", "redis-server"))
def _taskiq(root):
    """Write the `taskiq-worker-one-task-raised` project under `root`; return its command and signals."""
    sock = f"{root}/redis.sock"
    write(root, "thumbs/__init__.py", "")
    write(root, "thumbs/broker.py", _TASKIQ_BROKER.format(sock=sock))
    write(root, "thumbs/tasks.py", _TASKIQ_TASKS.format())
    write(root, "enqueue.py", _TASKIQ_ENQUEUE)
    worker = "taskiq worker thumbs.broker:broker thumbs.tasks --workers 1 --log-level INFO"
    command = (redis_server(sock) + f"setsid {worker} & worker=$!; sleep 3; python enqueue.py; "
               "kill -TERM -- -$worker; sleep 2; kill -KILL -- -$worker 2>/dev/null; wait $worker; kill $redis; exit 0")
    return Run(worker.split(), [
        S("stderr", r"\]\[ERROR  \]\[worker-0\] Exception found while executing function\.$", "the one task that raised among 1,800"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/thumbs/tasks\.py", line 13, in make_thumbnail$', "the task's own frame"),
        S("stderr", r"^ZeroDivisionError: division by zero$", "the exception"),
        S("stdout", r"^thumbnails: 1800 tasks, 1 failed$", "the producer's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0), timeout=300)
