"""Shrouded recipes for PyPI tools and Python programs: lizard, rq, Celery, ward, PyMarkdown, ansible-lint,
xmlschema, Locust, Daphne, papermill, pyrefly, diff-cover, FawltyDeps, cookiecutter, Pelican.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from generate_native import Repo
from shrouded_common import Run, S, exits, pyver, recipe, redis_server, sh, vbin, write

NPM_PINS: list[str] = []
PY_PINS = ["lizard==1.24.3", "rq==3.0.0", "celery[redis]==5.7.0", "ward==0.68.0b0", "pymarkdownlnt==0.9.41",
           "ansible-lint==26.10.1", "xmlschema==4.3.2", "locust==2.47.0", "daphne==4.2.3", "papermill==2.7.0",
           "ipykernel==7.4.0", "pyrefly==1.5.1", "diff-cover==11.0.4", "fawltydeps==0.20.0", "cookiecutter==2.7.1",
           "pelican==4.12.0"]
APT_PINS: dict[str, str] = {}
def _lizard_module(n: int) -> str:
    """A C module of twelve small functions on stock levels."""
    return "".join(f"int stock_{n}_{k}(int level, int reserved)\n{{\n    if (level < reserved)\n        return 0;\n"
                   f"    return level - reserved + {k};\n}}\n\n" for k in range(12))


def _dispatch(name: str, cases: int) -> str:
    """A C function whose switch has `cases` branches, each with a nested test."""
    body = "".join(f"    case {c}:\n        if (qty > {c}) rate += {c};\n        else if (qty == {c}) rate -= 1;\n"
                   f"        break;\n" for c in range(cases))
    return f"int {name}(int code, int qty)\n{{\n    int rate = 0;\n    switch (code) {{\n{body}    }}\n    return rate;\n}}\n"


@recipe("lizard-complexity-three-over-threshold", "lizard", "linter", pyver("lizard"), needs=("lizard",))
def _lizard(root):
    """Write the `lizard-complexity-three-over-threshold` project under `root`; return its command and signals."""
    for n in range(130):
        write(root, f"src/stock{n:03d}.c", _lizard_module(n))
    write(root, "src/stock047.c", _lizard_module(47) + _dispatch("route_rate", 9))
    write(root, "src/stock088.c", _lizard_module(88) + _dispatch("carrier_fee", 7))
    write(root, "src/stock121.c", _lizard_module(121) + _dispatch("customs_band", 11))
    return Run(["lizard", "src"], [
        S("stdout", r"^!+ Warnings \(cyclomatic_complexity > 15", "the warnings' heading"),
        S("stdout", r"\b(route_rate|carrier_fee|customs_band)@\d+-\d+@src/stock(047|088|121)\.c$",
          "each function over the threshold among 1,563"),
        S("stdout", r"^Total nloc +Avg\.NLOC|^ +\d+ +[\d.]+ +[\d.]+ +[\d.]+ +1563 +[23] ", "the totals"),
    ], expect_exit=exits(1))


@recipe("rq-worker-burst-one-failed-job", "rq", "log", [vbin("rq"), "--version"], needs=("rq", "redis-server"))
def _rq(root):
    """Write the `rq-worker-burst-one-failed-job` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/jobs.py", "SIZES = {n: (n * 7) % 900 + 100 for n in range(700) if n != 433}\n\n\n"
          "def thumbnail(photo):\n    width = SIZES[photo]\n    return {'photo': photo, 'width': width // 4}\n")
    write(root, "enqueue.py", "import sys\n\nfrom redis import Redis\nfrom rq import Queue\n\n"
          "queue = Queue('thumbnails', connection=Redis(unix_socket_path=sys.argv[1]))\nfor n in range(700):\n"
          "    queue.enqueue('shop.jobs.thumbnail', n, job_id=f'thumb-{n:04d}')\n")
    sock = f"{root}/redis.sock"
    command = (redis_server(sock) + f"python enqueue.py {sock} && rq worker --burst --url unix://{sock} thumbnails; "
               "status=$?; kill $redis; wait $redis; exit $status")
    return Run(["rq", "worker", "--burst", "--url", f"unix://{sock}", "thumbnails"], [
        S("stdout", r"thumbnails: shop\.jobs\.thumbnail\(433\) \(thumb-0433\)$", "the one job that failed, started, among 700"),
        S("stderr", r": job thumb-0433: exception raised while executing \(shop\.jobs\.thumbnail\)$", "the failure"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/shop/jobs\.py", line \d+, in thumbnail$', "the job's own frame"),
        S("stderr", r"^KeyError: 433$", "the exception"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0, 1))


@recipe("celery-worker-one-task-raised", "celery", "log", [vbin("celery"), "--version"], needs=("celery", "redis-server"))
def _celery(root):
    """Write the `celery-worker-one-task-raised` project under `root`; return its command and signals."""
    sock = f"{root}/redis.sock"
    write(root, "shop/__init__.py", "")
    write(root, "shop/tasks.py", "from celery import Celery\n\n"
          f"app = Celery('shop', broker='redis+socket://{sock}', backend='redis+socket://{sock}')\n"
          "app.conf.update(worker_hijack_root_logger=True, broker_connection_retry_on_startup=True,\n"
          "                result_expires=600, worker_redirect_stdouts=True)\n"
          "RATES = {zone: 1 + zone / 100 for zone in range(500) if zone != 317}\n\n\n"
          "@app.task\ndef quote(zone, weight):\n    return round(weight * RATES[zone], 2)\n")
    write(root, "enqueue.py", "from shop.tasks import quote\n\n"
          "for zone in range(500):\n    quote.apply_async((zone, 10 + zone % 7), task_id=f'quote-{zone:04d}')\n")
    write(root, "wait.py", "from celery.result import AsyncResult\n\nfrom shop.tasks import app\n\n"
          "failed = 0\nfor zone in range(500):\n    result = AsyncResult(f'quote-{zone:04d}', app=app)\n"
          "    result.get(timeout=120, propagate=False)\n    failed += result.failed()\n"
          "print(f'wait: 500 quotes, {failed} failed', flush=True)\n")
    command = (redis_server(sock) + "python enqueue.py && "
               "{ celery -A shop.tasks worker --pool=solo --loglevel=INFO --without-gossip --without-mingle "
               "--without-heartbeat -n quotes@shop & worker=$!; } && python wait.py; "
               "kill -TERM $worker; wait $worker; kill $redis; wait $redis; exit 0")
    return Run(["celery", "-A", "shop.tasks", "worker", "--pool=solo", "--loglevel=INFO"], [
        S("stderr", r"Task shop\.tasks\.quote\[quote-0317\] raised unexpected: KeyError\(317\)$",
          "the one task that raised among 500"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/shop/tasks\.py", line \d+, in quote$', "the task's own frame"),
        S("stderr", r"^KeyError: 317$", "the exception"),
        S("stdout", r"^wait: 500 quotes, 1 failed$", "the run's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0))


def _ward_module(part: int, broken: tuple[int, int]) -> str:
    """A ward test module of 60 tests of parcel volumes; `broken` (part, test) expects a wrong volume."""
    tests = "".join(f"@test(\"volume of box {part}-{n} is {part * 60 + n} times {n % 4 + 1}\")\ndef _():\n"
                    f"    assert volume({part * 60 + n}, {n % 4 + 1}) == "
                    f"{(part * 60 + n) * (n % 4 + 1) + (1 if (part, n) == broken else 0)}\n\n\n" for n in range(60))
    return "from ward import test\n\nfrom parcels.volume import volume\n\n\n" + tests


@recipe("ward-one-failure-among-passes", "ward", "test-runner", pyver("ward"), needs=("ward",))
def _ward(root):
    """Write the `ward-one-failure-among-passes` project under `root`; return its command and signals."""
    write(root, "parcels/__init__.py", "")
    write(root, "parcels/volume.py", "def volume(base, height):\n    return base * height\n")
    write(root, "pyproject.toml", "[tool.ward]\npath = [\"tests\"]\n")
    for part in range(12):
        write(root, f"tests/test_volume_{part:02d}.py", _ward_module(part, (7, 22)))
    return Run(["ward"], [
        S("stdout", r"^ FAIL  test_volume_07:116 volume of box 7-22 ", "the one failing test among 720"),
        S("stdout", r"^  Failed at tests/test_volume_07\.py:118 ", "its place"),
        S("stdout", r"❱ 118     assert volume\(442, 3\) == 1327", "the failed assertion"),
        S("stdout", r"^│    1  Failures ", "the count of failures"),
        S("stdout", r" FAILED in [\d.]+ seconds ", "the verdict"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1))


def _markdown_page(n: int) -> str:
    """A guide page written with long unwrapped lines, as pasted from an editor."""
    body = "".join(f"Step {k} of guide {n}: open the warehouse console, choose the bin for aisle {k}, and scan every parcel "
                   f"label before you confirm the pick list for the evening courier.\n\n" for k in range(6))
    return f"# Guide {n}\n\n## Before you start\n\n{body}## Next steps\n\nSee the [index](index.md).\n"


@recipe("pymarkdown-scan-long-lines-one-heading", "pymarkdown", "linter", pyver("pymarkdownlnt"), needs=("pymarkdown",))
def _pymarkdown(root):
    """Write the `pymarkdown-scan-long-lines-one-heading` project under `root`; return its command and signals."""
    for n in range(80):
        write(root, f"docs/guide-{n:02d}.md", _markdown_page(n))
    write(root, "docs/guide-33.md", _markdown_page(33).replace("## Next steps", "#### Next steps"))
    return Run(["pymarkdown", "scan", "docs"], [
        S("stdout", r"/docs/guide-33\.md:\d+:\d+: MD001: ", "the one finding of another kind among hundreds of long lines"),
    ], expect_exit=exits(1))


def _playbook(n: int, extra: str = "") -> str:
    """A deploy playbook in an older house style: short module names, unnamed tasks, `become: yes`."""
    tasks = "".join(f"    - copy:\n        src: files/site{n}-{k}.conf\n        dest: /etc/nginx/sites-enabled/site{n}-{k}.conf\n"
                    f"        mode: \"0644\"\n" for k in range(8))
    return (f"---\n- name: Deploy shop site {n}\n  hosts: web{n % 4}\n  become: yes\n  tasks:\n"
            f"    - apt:\n        name: nginx\n        state: present\n{tasks}{extra}")


@recipe("ansible-lint-warnings-two-errors", "ansible-lint", "linter", pyver("ansible-lint"), needs=("ansible-lint",))
def _ansible_lint(root):
    """Write the `ansible-lint-warnings-two-errors` project under `root`; return its command and signals."""
    write(root, ".ansible-lint", "---\noffline: true\nwarn_list:\n  - fqcn[action-core]\n  - name[missing]\n"
          "  - yaml[truthy]\n")
    for n in range(30):
        write(root, f"playbooks/deploy-{n:02d}.yml", _playbook(n))
    write(root, "playbooks/deploy-17.yml", _playbook(17, "    - command: rm -rf /var/cache/shop\n"))
    write(root, "playbooks/deploy-26.yml", _playbook(26, "    - shell: cat /etc/shop/*.conf | grep listen\n"
                                                         "      register: listen\n"))
    sh("git init -q .", root)
    return Run(["ansible-lint", "playbooks"], [
        S("stdout", r"^(no-changed-when|risky-shell-pipe): ", "the three errors among 574 warnings"),
        S("stdout", r"^playbooks/deploy-(17|26)\.yml:41 Task/Handler: ", "their places"),
        S("stderr", r"^ +\d+ (no-changed-when|risky-shell-pipe) profile:", "their rows in the summary table"),
        S("stderr", r"^Failed: 3 failure\(s\), 574 warning\(s\) in 30 files", "the summary"),
    ], env={"ANSIBLE_HOME": f"{root}/.ansible"}, expect_exit=exits(2))


def _invoice(n: int, amount: str = "", currency: str = "EUR") -> str:
    """An invoice document; a line's amount and the currency can be set."""
    lines = "".join(f"  <line sku=\"SKU-{n:03d}-{k}\"><qty>{k + 1}</qty><amount>{amount or f'{(n + k) * 1.5:.2f}'}</amount></line>\n"
                    for k in range(6))
    return (f"<?xml version=\"1.0\"?>\n<invoice number=\"INV-{n:04d}\" currency=\"{currency}\">\n"
            f"  <customer>C{n % 50:03d}</customer>\n  <issued>2024-03-{n % 28 + 1:02d}</issued>\n{lines}</invoice>\n")


@recipe("xmlschema-validate-two-invalid-invoices", "xmlschema-validate", "data", pyver("xmlschema"),
        needs=("xmlschema-validate",))
def _xmlschema(root):
    """Write the `xmlschema-validate-two-invalid-invoices` project under `root`; return its command and signals."""
    write(root, "invoice.xsd", """\
        <?xml version="1.0"?>
        <xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
          <xs:simpleType name="currency"><xs:restriction base="xs:string">
            <xs:enumeration value="EUR"/><xs:enumeration value="USD"/><xs:enumeration value="GBP"/>
          </xs:restriction></xs:simpleType>
          <xs:element name="invoice"><xs:complexType>
            <xs:sequence>
              <xs:element name="customer" type="xs:string"/>
              <xs:element name="issued" type="xs:date"/>
              <xs:element name="line" maxOccurs="unbounded"><xs:complexType>
                <xs:sequence><xs:element name="qty" type="xs:positiveInteger"/><xs:element name="amount" type="xs:decimal"/></xs:sequence>
                <xs:attribute name="sku" type="xs:string" use="required"/>
              </xs:complexType></xs:element>
            </xs:sequence>
            <xs:attribute name="number" type="xs:string" use="required"/>
            <xs:attribute name="currency" type="currency" use="required"/>
          </xs:complexType></xs:element>
        </xs:schema>
        """)
    for n in range(240):
        write(root, f"invoices/inv-{n:04d}.xml", _invoice(n))
    write(root, "invoices/inv-0071.xml", _invoice(71, amount="12,50"))
    write(root, "invoices/inv-0188.xml", _invoice(188, currency="CHF"))
    return Run(["xmlschema-validate", "-v", "--schema", "invoice.xsd", "invoices/*.xml"], [
        S("stderr", r"^invoices/inv-0(071|188)\.xml is not valid$", "the two invalid documents among 240"),
        S("stderr", r"^Reason: (invalid value '12,50' for xs:decimal|attribute currency='CHF': value must be one of )",
          "why each is invalid"),
    ], command="xmlschema-validate -v --schema invoice.xsd invoices/*.xml", expect_exit=exits(7))


_SHOP_WSGI = """\
import itertools
import json
from wsgiref.simple_server import WSGIRequestHandler, make_server

CHECKOUTS = itertools.count(1)


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


def app(environ, start_response):
    path = environ['PATH_INFO']
    if path == '/checkout' and next(CHECKOUTS) % 6 == 0:
        start_response('500 Internal Server Error', [('Content-Type', 'text/plain')])
        return [b'payment gateway timeout']
    start_response('200 OK', [('Content-Type', 'application/json')])
    return [json.dumps({'path': path, 'ok': True}).encode()]


make_server('127.0.0.1', PORT, app, handler_class=Quiet).serve_forever()
"""


@recipe("locust-headless-checkout-errors", "locust", "profiler", pyver("locust"), needs=("locust",))
def _locust(root):
    """Write the `locust-headless-checkout-errors` project under `root`; return its command and signals."""
    write(root, "server.py", _SHOP_WSGI.replace("PORT", "18961"))
    write(root, "locustfile.py", "from locust import HttpUser, constant, task\n\n\nclass Shopper(HttpUser):\n"
          "    wait_time = constant(0.1)\n\n    @task(10)\n    def browse(self):\n"
          "        self.client.get('/products/42', name='/products/[id]')\n\n    @task(4)\n    def search(self):\n"
          "        self.client.get('/search?q=lamp', name='/search')\n\n    @task(3)\n    def cart(self):\n"
          "        self.client.post('/cart', json={'sku': 'SKU-1', 'qty': 1})\n\n    @task(1)\n    def checkout(self):\n"
          "        self.client.post('/checkout')\n")
    argv = ["locust", "-f", "locustfile.py", "--headless", "-u", "8", "-r", "8", "-t", "30s",
            "--host", "http://127.0.0.1:18961"]
    command = ("python server.py & server=$!; for i in $(seq 50); do python -c 'import socket; "
               "socket.create_connection((\"127.0.0.1\", 18961))' 2>/dev/null && break; sleep 0.1; done; "
               + " ".join(argv) + "; status=$?; kill $server; wait $server; exit $status")
    return Run(argv, [
        S("stderr", r"^Error report$", "the error report's heading"),
        S("stderr", r"/INFO/locust\.main: Shutting down \(exit code 1\)$", "why the run fails"),
        S("stderr", r"^\s*\d+\s+POST /checkout: HTTPError\('500 Server Error: Internal Server Error for url: /checkout'\)",
          "the one kind of failure, with its count"),
    ], command=command, expect_exit=exits(1))


@recipe("daphne-asgi-one-request-exception", "daphne", "log", pyver("daphne"), needs=("daphne",))
def _daphne(root):
    """Write the `daphne-asgi-one-request-exception` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/asgi.py", "import json\n\nSTOCK = {n: n * 5 % 97 for n in range(450) if n != 268}\n\n\n"
          "async def application(scope, receive, send):\n    if scope['type'] == 'lifespan':\n        return\n"
          "    sku = int(scope['path'].rsplit('/', 1)[1])\n    body = json.dumps({'sku': sku, 'stock': STOCK[sku]}).encode()\n"
          "    await send({'type': 'http.response.start', 'status': 200,\n"
          "                'headers': [(b'content-type', b'application/json')]})\n"
          "    await send({'type': 'http.response.body', 'body': body})\n")
    write(root, "smoke.py", "import urllib.error\nimport urllib.request\n\nfailed = 0\nfor n in range(450):\n"
          "    try:\n        urllib.request.urlopen(f'http://127.0.0.1:18967/stock/{n}').read()\n"
          "    except urllib.error.HTTPError:\n        failed += 1\n"
          "print(f'smoke: 450 requests, {failed} failed', flush=True)\n")
    command = ("daphne -b 127.0.0.1 -p 18967 shop.asgi:application & server=$!; "
               "for i in $(seq 80); do python -c 'import socket; socket.create_connection((\"127.0.0.1\", 18967))' "
               "2>/dev/null && break; sleep 0.1; done; python smoke.py; kill $server; wait $server; exit 0")
    return Run(["daphne", "-b", "127.0.0.1", "-p", "18967", "shop.asgi:application"], [
        S("stderr", r"Exception inside application: 268$", "the one failed request among 450"),
        S("stdout", r'"GET /stock/268" 500 \d+$', "its line in the access log"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/shop/asgi\.py", line \d+, in application$', "the app's own frame"),
        S("stderr", r"^KeyError: 268$", "the exception"),
        S("stdout", r"^smoke: 450 requests, 1 failed$", "the smoke run's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0))


def _cell(source: str, kind: str = "code", tags: tuple[str, ...] = ()) -> dict:
    """One notebook cell, its id taken from its source."""
    import hashlib

    cell = {"cell_type": kind, "id": hashlib.sha256(source.encode()).hexdigest()[:8],
            "metadata": {"tags": list(tags)} if tags else {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


@recipe("papermill-report-cell-keyerror", "papermill", "docs", pyver("papermill"), needs=("papermill",))
def _papermill(root):
    """Write the `papermill-report-cell-keyerror` project under `root`; return its command and signals."""
    import json

    cells = [_cell("# Weekly sales report", "markdown"), _cell("region = 'north'\nweeks = 52", tags=("parameters",)),
             _cell("import random\nrandom.seed(7)\nsales = [{'week': w, 'store': s, 'units': random.randint(20, 400)}\n"
                   "         for w in range(weeks) for s in range(6)]\nprint(len(sales), 'rows loaded')"),
             _cell("for row in sales:\n    print(f\"week {row['week']:>2}  store {row['store']}  units {row['units']:>4}\")"),
             _cell("totals = {}\nfor row in sales:\n    totals[row['store']] = totals.get(row['store'], 0) + row['units']\n"
                   "print(totals)"),
             _cell("by_region = {'north': [0, 1, 2], 'east': [3, 4, 5]}\n"
                   "share = sum(totals[s] for s in by_region[region]) / sum(totals.values())\nprint(f'{region}: {share:.1%}')"),
             _cell("south = sum(totals[s] for s in by_region['south'])\nprint('south', south)"),
             _cell("print('report written')")]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                                             "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    write(root, "weekly_sales.ipynb", json.dumps(notebook, indent=1) + "\n")
    return Run(["papermill", "weekly_sales.ipynb", "out/weekly_sales.ipynb", "--log-output", "-p", "region", "north"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r"^papermill\.exceptions\.PapermillExecutionError: ?$", "papermill's error"),
        S("stderr", r"^Exception encountered at \"In \[\d+\]\":$", "the failed cell"),
        S("stderr", r"^----> 1 south = sum\(totals\[s\] for s in by_region\['south'\]\)$", "the failing line"),
        S("stderr", r"^KeyError: 'south'$", "the exception"),
    ], command="mkdir -p out && papermill weekly_sales.ipynb out/weekly_sales.ipynb --log-output -p region north",
               expect_exit=exits(1))


@recipe("pyrefly-check-refactor-errors", "pyrefly", "type-checker", [vbin("pyrefly"), "--version"], needs=("pyrefly",))
def _pyrefly(root):
    """Write the `pyrefly-check-refactor-errors` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/money.py", "from dataclasses import dataclass\nfrom decimal import Decimal\n\n\n@dataclass\nclass Item:\n"
          "    sku: str\n    unit: Decimal\n    qty: int\n\n\ndef line_total(item: Item, discount: Decimal) -> Decimal:\n"
          "    return item.unit * item.qty * (1 - discount)\n")
    for n in range(10):
        write(root, f"shop/view{n}.py", "from decimal import Decimal\n\nfrom shop.money import Item, line_total\n\n\n"
              f"def show{n}(item: Item) -> str:\n    return str(line_total(item, Decimal('0.{n}')))\n")
    write(root, "shop/view3.py", "from shop.money import Item, line_total\n\n\ndef show3(item: Item) -> str:\n"
          "    return line_total(item)\n")
    write(root, "shop/view8.py", "from decimal import Decimal\n\nfrom shop.money import Item, line_total\n\n\n"
          "def show8(item: Item) -> str:\n    total: int = line_total(item, Decimal('0.8'))\n    return item.price + str(total)\n")
    write(root, "pyrefly.toml", "project-includes = [\"shop\"]\n")
    return Run(["pyrefly", "check"], [
        S("stdout", r"^ERROR .* \[(bad-return|missing-argument|bad-assignment|missing-attribute)\]$", "each error"),
        S("stdout", r"^ --> shop/view[38]\.py:\d+:\d+$", "each error's place"),
        S("stderr", r"^ INFO 4 errors$", "the count"),
    ], expect_exit=exits(1))


def _cobertura(root: str, files: dict[str, tuple[int, set[int]]]) -> str:
    """A Cobertura report of `files` (path -> (line count, missed lines)), as coverage.py writes it."""
    classes = []
    for path, (count, missed) in files.items():
        lines = "".join(f'\t\t\t\t\t\t<line number="{n}" hits="{0 if n in missed else 1}"/>\n' for n in range(1, count + 1))
        classes.append(f'\t\t\t\t<class name="{path.rsplit("/", 1)[1]}" filename="{path}" complexity="0" line-rate="0.9" '
                       f'branch-rate="0">\n\t\t\t\t\t<methods/>\n\t\t\t\t\t<lines>\n{lines}\t\t\t\t\t</lines>\n\t\t\t\t</class>\n')
    return (f'<?xml version="1.0" ?>\n<coverage version="7.6.1" timestamp="1709280000000" lines-valid="0" lines-covered="0" '
            f'line-rate="0.9" branches-covered="0" branches-valid="0" branch-rate="0" complexity="0">\n'
            f'\t<sources>\n\t\t<source>{root}</source>\n\t</sources>\n\t<packages>\n'
            f'\t\t<package name="shop" line-rate="0.9" branch-rate="0" complexity="0">\n\t\t\t<classes>\n'
            + "".join(classes) + "\t\t\t</classes>\n\t\t</package>\n\t</packages>\n</coverage>\n")


def _fees(n: int, count: int) -> str:
    """A module of `count` fee functions."""
    return "".join(f"def fee_{n}_{j}(amount):\n    return amount * {j + 1}\n\n\n" for j in range(count))


@recipe("diff-cover-below-threshold", "diff-cover", "coverage", pyver("diff-cover"), needs=("diff-cover", "git"))
def _diff_cover(root):
    """Write the `diff-cover-below-threshold` project under `root`; return its command and signals."""
    repo = Repo(root)
    for n in range(12):
        repo.write(f"shop/fees{n:02d}.py", _fees(n, 6))
    repo.commit("Fee tables")
    repo.git("checkout", "-q", "-b", "weekend-rates")
    sizes = {}
    for n in (2, 5, 9):
        text = _fees(n, 6) + f"def weekend_{n}(amount, day):\n    if day in ('sat', 'sun'):\n        return amount * 2\n" \
                             f"    if day == 'fri':\n        return amount + 5\n    return amount\n"
        repo.write(f"shop/fees{n:02d}.py", text)
        sizes[f"shop/fees{n:02d}.py"] = text.count("\n")
    repo.commit("Weekend rates")
    missed = {"shop/fees02.py": set(), "shop/fees05.py": {28, 29}, "shop/fees09.py": {27, 28, 29, 30}}
    write(root, "coverage.xml", _cobertura(root, {p: (sizes[p], missed[p]) for p in sizes}))
    return Run(["diff-cover", "coverage.xml", "--compare-branch=main", "--fail-under=90"], [
        S("stdout", r"^shop/fees0[59]\.py \([\d.]+%\): Missing lines ", "each changed file with uncovered lines"),
        S("stdout", r"^Coverage: \d+%$", "the diff's coverage"),
        S("stderr", r"^Failure\. Coverage is below 90%\.$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("fawltydeps-undeclared-and-unused", "fawltydeps", "package-manager", [vbin("fawltydeps"), "--version"],
        needs=("fawltydeps",))
def _fawltydeps(root):
    """Write the `fawltydeps-undeclared-and-unused` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", "[project]\nname = 'shop-reports'\nversion = '0.4.0'\n"
          "dependencies = ['requests>=2.31', 'click>=8', 'jinja2']\n")
    write(root, "reports/__init__.py", "")
    for n in range(20):
        write(root, f"reports/r{n:02d}.py", "import requests\nfrom jinja2 import Template\n\n\n"
              f"def fetch{n}(url):\n    return Template('{{{{ x }}}}').render(x=requests.get(url).text)\n")
    write(root, "reports/r07.py", "import yaml\nimport requests\n\n\ndef load7(url):\n    return yaml.safe_load(requests.get(url).text)\n")
    write(root, "reports/r15.py", "import pandas as pd\n\n\ndef frame15(rows):\n    return pd.DataFrame(rows)\n")
    return Run(["fawltydeps"], [
        S("stdout", r"^These imports appear to be undeclared dependencies:$", "the first finding's heading"),
        S("stdout", r"^- '(yaml|pandas)'", "each undeclared import"),
        S("stdout", r"^These dependencies appear to be unused", "the second finding's heading"),
        S("stdout", r"^- 'click'", "the unused dependency"),
    ], expect_exit=exits(3, 4))


@recipe("cookiecutter-undefined-variable", "cookiecutter", "build", pyver("cookiecutter"),
        needs=("cookiecutter",))
def _cookiecutter(root):
    """Write the `cookiecutter-undefined-variable` project under `root`; return its command and signals."""
    tpl = "service-template"
    write(root, f"{tpl}/cookiecutter.json", '{\n  "project_name": "Shop Service",\n'
          '  "project_slug": "{{ cookiecutter.project_name.lower().replace(\' \', \'_\') }}",\n  "author": "Shop Team",\n'
          '  "python_version": "3.11"\n}\n')
    slug = "{{cookiecutter.project_slug}}"
    for n in range(6):
        write(root, f"{tpl}/{slug}/{slug}/mod{n}.py", f'"""Module {n} of {{{{ cookiecutter.project_name }}}}."""\n')
    write(root, f"{tpl}/{slug}/pyproject.toml", "[project]\nname = \"{{ cookiecutter.project_slug }}\"\n"
          "authors = [{name = \"{{ cookiecutter.author }}\", email = \"{{ cookiecutter.author_email }}\"}]\n"
          "requires-python = \">={{ cookiecutter.python_version }}\"\n")
    write(root, f"{tpl}/{slug}/README.md", "# {{ cookiecutter.project_name }}\n")
    return Run(["cookiecutter", "--no-input", "service-template", "-o", "out"], [
        S("stdout", r"^Unable to create file 'pyproject\.toml'$", "the error"),
        S("stdout", r"^Error message: .*has no attribute 'author_email'$", "why it failed"),
    ], expect_exit=exits(1))


@recipe("pelican-verbose-build-succeeds", "pelican", "docs", [vbin("pelican"), "--version"], needs=("pelican",))
def _pelican(root):
    """Write the `pelican-verbose-build-succeeds` project under `root`; return its command and signals."""
    write(root, "pelicanconf.py", "SITENAME = 'Shop Journal'\nSITEURL = 'https://journal.shop.example'\nPATH = 'content'\n"
          "TIMEZONE = 'UTC'\nDEFAULT_LANG = 'en'\nRELATIVE_URLS = True\nDEFAULT_PAGINATION = 20\n")
    for n in range(160):
        write(root, f"content/post-{n:03d}.rst", f"Store note {n}\n{'#' * 20}\n\n:date: 2024-{n % 12 + 1:02d}-{n % 28 + 1:02d} 10:00\n"
              f":category: {('News', 'Stores', 'Recipes')[n % 3]}\n:tags: shop, aisle{n % 9}\n\n"
              f"Opening hours and stock news for store {n}.\n")
    return Run(["pelican", "content", "-s", "pelicanconf.py", "-o", "output", "-v"], [
        S("stdout", r"^Done: Processed 160 articles, 0 drafts, |^pages and 0 draft pages in [\d.]+ seconds\.$",
          "the summary of a successful build (wrapped over two lines)"),
    ], expect_exit=exits(0))
