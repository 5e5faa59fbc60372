"""Masked recipes for PyPI tools and Python programs: Dramatiq, honcho, Sanic, Semgrep, dbt, prospector, Yamale,
IPython, tryceratops, pyinfra, pypyr, pyroma, sqlite-utils, Copier, Docutils.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from masked_common import Run, S, exits, pyver, recipe, redis_server, sh, vbin, wait_port, write

NPM_PINS: list[str] = []
PY_PINS = ["dramatiq[redis]==2.2.1", "honcho==2.0.0", "sanic==25.12.1", "semgrep==1.187.0", "dbt-core==1.11.16",
           "dbt-duckdb==1.11.1", "prospector==1.20.0", "yamale==6.1.0", "ipython==9.19.1", "tryceratops==2.4.1",
           "pyinfra==3.10.0", "pypyr==5.9.1", "pyroma==5.0.1", "sqlite-utils==4.2.1", "copier==9.14.0", "docutils==0.23.1"]
APT_PINS: dict[str, str] = {}


@recipe("dramatiq-worker-one-actor-raised", "dramatiq", "log", pyver("dramatiq"), needs=("dramatiq", "redis-server"))
def _dramatiq(root):
    """Write the `dramatiq-worker-one-actor-raised` project under `root`; return its command and signals."""
    sock = f"{root}/redis.sock"
    write(root, "media/__init__.py", "")
    write(root, "media/tasks.py", "import logging\n\nimport dramatiq\nfrom dramatiq.brokers.redis import RedisBroker\n\n"
          f"dramatiq.set_broker(RedisBroker(unix_socket_path='{sock}'))\nlog = logging.getLogger('media.tasks')\n"
          "CODECS = {n: ('h264', 'vp9', 'av1')[n % 3] for n in range(900) if n != 614}\n\n\n"
          "@dramatiq.actor(max_retries=0)\ndef transcode(clip):\n    try:\n        codec = CODECS[clip]\n"
          "        log.info('transcoded clip %04d to %s (%d frames)', clip, codec, 240 + clip % 60)\n    finally:\n"
          f"        with open('{root}/done.txt', 'a') as done:\n            done.write(f'{{clip}}\\n')\n")
    write(root, "enqueue.py", "from media.tasks import transcode\n\nfor clip in range(900):\n    transcode.send(clip)\n")
    write(root, "wait.py", "import time\n\nfor _ in range(1200):\n    try:\n"
          f"        if len(open('{root}/done.txt').read().split()) >= 900:\n            break\n"
          "    except FileNotFoundError:\n        pass\n    time.sleep(0.1)\n")
    command = (redis_server(sock) + "python enqueue.py && { dramatiq media.tasks --processes 1 --threads 2 & worker=$!; } "
               "&& python wait.py; kill -TERM $worker; wait $worker; kill $redis; wait $redis; exit 0")
    return Run(["dramatiq", "media.tasks", "--processes", "1", "--threads", "2"], [
        S("stderr", r"\[ERROR\] Failed to process message transcode\(614\) with unhandled exception\.$",
          "the one message that failed among 900"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the trace's start"),
        S("stderr", r'^  File ".*/media/tasks\.py", line \d+, in transcode$', "the actor's own frame"),
        S("stderr", r"^KeyError: 614$", "the exception"),
        S("stderr", r"\[WARNING\] Retries exceeded for message ", "the message given up, the one warning"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0))


_PROCS = {
    "web": "import time\nfor n in range(1400):\n    print(f'GET /catalog/item/{n} 200 {n % 37 + 3}ms', flush=True)\n"
           "    time.sleep(0.002)\ntime.sleep(60)\n",
    "mailer": "import time\nfor n in range(500):\n    print(f'queued order-confirmation mail #{n} for customer {n * 7 % 991}',"
              " flush=True)\n    time.sleep(0.004)\ntime.sleep(60)\n",
    "indexer": "import time\n\nfrom shop.search import reindex\n\nfor n in range(900):\n    print(reindex(n), flush=True)\n"
               "    time.sleep(0.003)\ntime.sleep(60)\n",
}


@recipe("honcho-start-indexer-crashes", "honcho", "log", pyver("honcho"), needs=("honcho",))
def _honcho(root):
    """Write the `honcho-start-indexer-crashes` project under `root`; return its command and signals."""
    for name, text in _PROCS.items():
        write(root, f"procs/{name}.py", text)
    write(root, "shop/__init__.py", "")
    write(root, "shop/search.py", "BOOSTS = {n: 1 + n % 5 for n in range(900)}\nBOOSTS[743] = '1.5x'\n\n\n"
          "def score(doc):\n    return round(doc * BOOSTS[doc] / 10, 1)\n\n\n"
          "def reindex(doc):\n    return f'indexed document {doc} with score {score(doc)}'\n")
    write(root, "Procfile", "".join(f"{name}: python -u procs/{name}.py\n" for name in _PROCS))
    return Run(["honcho", "start"], [
        S("stdout", r"indexer\.1 +\| Traceback \(most recent call last\):$", "the trace's start"),
        S("stdout", r'indexer\.1 +\|   File ".*/shop/search\.py", line \d+, in score$', "the project's own frame"),
        S("stdout", r"indexer\.1 +\| TypeError: unsupported operand type", "the exception"),
        S("stdout", r"system +\| indexer\.1 stopped \(rc=1\)$", "the process that died"),
    ], env={"PYTHONPATH": root}, expect_exit=exits(1), timeout=180)


@recipe("sanic-server-one-500-among-requests", "sanic", "log", pyver("sanic"), needs=("sanic",))
def _sanic(root):
    """Write the `sanic-server-one-500-among-requests` project under `root`; return its command and signals."""
    write(root, "shop/__init__.py", "")
    write(root, "shop/app.py", "from sanic import Sanic\nfrom sanic.response import json\n\napp = Sanic('shop')\n"
          "PRICES = {sku: round(3 + sku * 0.25, 2) for sku in range(600) if sku != 377}\n\n\n"
          "@app.get('/price/<sku:int>')\nasync def price(request, sku):\n    return json({'sku': sku, 'price': PRICES[sku]})\n")
    write(root, "smoke.py", "import urllib.error\nimport urllib.request\n\nfailed = 0\nfor sku in range(600):\n    try:\n"
          "        urllib.request.urlopen(f'http://127.0.0.1:18791/price/{sku}').read()\n"
          "    except urllib.error.HTTPError:\n        failed += 1\nprint(f'smoke: 600 requests, {failed} failed', flush=True)\n")
    argv = ["sanic", "shop.app:app", "--host", "127.0.0.1", "--port", "18791", "--single-process", "--access-logs",
            "--no-motd"]
    command = (" ".join(argv) + " & server=$!; " + wait_port(18791) +
               "python smoke.py; kill -INT $server; wait $server; exit 0")
    return Run(argv, [
        S("stderr", r"ERROR: Exception occurred while handling uri: 'http://127\.0\.0\.1:18791/price/377'$",
          "the one failed request among 600"),
        S("stderr", r"^│ shop/app\.py:\d+ price:$", "the app's own frame"),
        S("stderr", r"^╰ KeyError: 377$", "the exception"),
        S("stdout", r"GET http://127\.0\.0\.1:18791/price/377 500 \d+ ", "its line in the access log"),
        S("stdout", r"^smoke: 600 requests, 1 failed$", "the smoke run's summary"),
    ], command=command, env={"PYTHONPATH": root}, expect_exit=exits(0))


_SEMGREP_RULES = """\
rules:
  - id: print-in-library
    languages: [python]
    severity: INFO
    message: print() in library code; use the module's logger
    pattern: print(...)
  - id: broad-except
    languages: [python]
    severity: WARNING
    message: catching Exception hides the real failure; catch what the block can raise
    pattern: |
      try:
        ...
      except Exception:
        ...
  - id: subprocess-shell-true
    languages: [python]
    severity: ERROR
    message: subprocess call with shell=True runs a string built from input through the shell
    pattern: subprocess.$FUNC(..., shell=True, ...)
"""


def _semgrep_module(n: int, extra: str = "") -> str:
    """A billing module with prints and broad excepts, as in an older code base."""
    funcs = "".join(f"def charge_{n}_{k}(account, amount):\n    print('charging', account, amount)\n    try:\n"
                    f"        return account.debit(amount * {k + 1})\n    except Exception:\n"
                    f"        print('charge failed for', account)\n        return None\n\n\n" for k in range(5))
    return f"import subprocess\n\n\n{funcs}{extra}"


@recipe("semgrep-local-rules-two-errors", "semgrep", "linter", [vbin("semgrep"), "--version"], needs=("semgrep",))
def _semgrep(root):
    """Write the `semgrep-local-rules-two-errors` project under `root`; return its command and signals."""
    write(root, "rules.yml", _SEMGREP_RULES)
    for n in range(60):
        write(root, f"billing/mod{n:02d}.py", _semgrep_module(n))
    write(root, "billing/mod23.py", _semgrep_module(23, "def export(path):\n"
          "    return subprocess.run(f'gzip -k {path}', shell=True, check=True)\n"))
    write(root, "billing/mod51.py", _semgrep_module(51, "def archive(month):\n"
          "    subprocess.check_call('tar czf /srv/archive/' + month + '.tgz ledger/' + month, shell=True)\n"))
    argv = ["semgrep", "scan", "--config", "rules.yml", "--metrics=off", "--disable-version-check", "billing"]
    return Run(argv, [
        S("stdout", r"^ +billing/mod(23|51)\.py$", "the two files with an error finding"),
        S("stdout", r"subprocess-shell-true$", "the two error findings among 600"),
        S("stderr", r"^Ran 3 rules on 60 files: \d+ findings\.$", "the summary"),
    ], env={"SEMGREP_SEND_METRICS": "off"}, expect_exit=exits(0, 1))


def _dbt_models(root: str) -> None:
    """A staging layer of 40 views and a mart layer of 40 tables on top, one staging view with a wrong column."""
    write(root, "seeds/raw_orders.csv", "order_id,customer_id,amount,region\n" +
          "".join(f"{n},{n % 97},{n * 3 % 500 + 10},r{n % 8}\n" for n in range(400)))
    for n in range(40):
        write(root, f"models/staging/stg_orders_r{n:02d}.sql", "select order_id, customer_id, amount\n"
              f"from {{{{ ref('raw_orders') }}}}\nwhere order_id % 40 = {n}\n")
        write(root, f"models/marts/fct_revenue_r{n:02d}.sql", "{{ config(materialized='table') }}\n"
              f"select customer_id, sum(amount) as revenue\nfrom {{{{ ref('stg_orders_r{n:02d}') }}}}\ngroup by 1\n")
    write(root, "models/staging/stg_orders_r17.sql", "select order_id, customer_id, amount_cents / 100 as amount\n"
          "from {{ ref('raw_orders') }}\nwhere order_id % 40 = 17\n")


@recipe("dbt-build-one-model-binder-error", "dbt", "build", pyver("dbt-core"), needs=("dbt",))
def _dbt(root):
    """Write the `dbt-build-one-model-binder-error` project under `root`; return its command and signals."""
    write(root, "dbt_project.yml", "name: shop\nversion: '1.0.0'\nprofile: shop\nmodel-paths: ['models']\n"
          "seed-paths: ['seeds']\nmodels:\n  shop:\n    +materialized: view\n")
    write(root, "profiles.yml", f"shop:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
          f"      path: {root}/shop.duckdb\n      threads: 1\n")
    _dbt_models(root)
    argv = ["dbt", "build", "--profiles-dir", ".", "--no-use-colors", "--no-send-anonymous-usage-stats"]
    return Run(argv, [
        S("stdout", r"ERROR creating sql view model main\.stg_orders_r17 ", "the one model that failed among 80"),
        S("stdout", r"SKIP relation main\.fct_revenue_r17 ", "the model skipped because of it"),
        S("stdout", r"^\S+ +Runtime Error in model stg_orders_r17 \(models/staging/stg_orders_r17\.sql\)$",
          "the error's heading"),
        S("stdout", r"Binder Error: Referenced column \"amount_cents\" not found", "the database's error"),
        S("stdout", r"Completed with 1 error, 0 partial successes, and 0 warnings:$", "the verdict"),
        S("stdout", r"Done\. PASS=\d+ WARN=0 ERROR=1 SKIP=1 ", "the summary"),
    ], env={"DBT_SEND_ANONYMOUS_USAGE_STATS": "False", "DO_NOT_TRACK": "1"}, expect_exit=exits(1))


def _prospector_module(n: int, extra: str = "") -> str:
    """An inventory module in a loose style: unused imports and arguments, long lines, a bare except."""
    funcs = "".join(f"def restock_{k}(sku, quantity, warehouse, note=None):\n    level = quantity * {k + 2}\n"
                    f"    try:\n        return {{'sku': sku, 'level': level, 'warehouse': warehouse, 'reason': "
                    f"'scheduled restock number {k} for the north and south distribution centres'}}\n"
                    f"    except:\n        return None\n\n\n" for k in range(4))
    return f"import os\nimport sys\n\n\n{funcs}{extra}"


@recipe("prospector-two-undefined-names", "prospector", "linter", pyver("prospector"), needs=("prospector",))
def _prospector(root):
    """Write the `prospector-two-undefined-names` project under `root`; return its command and signals."""
    write(root, "inventory/__init__.py", "")
    for n in range(30):
        write(root, f"inventory/stock{n:02d}.py", _prospector_module(n))
    write(root, "inventory/stock08.py", _prospector_module(8, "def reorder_point(sku):\n"
          "    return SAFETY_STOCK[sku] * 2\n"))
    write(root, "inventory/stock19.py", _prospector_module(19, "def transfer(sku, quantity):\n"
          "    return restock_1(sku, quantity, warehous)\n"))
    return Run(["prospector", "--no-autodetect", "inventory"], [
        S("stdout", r"^inventory/stock(08|19)\.py$", "the two files with an undefined name"),
        S("stdout", r"^  Line: 38$", "the line of each"),
        S("stdout", r"undefined-variable / Undefined variable '(SAFETY_STOCK|warehous)' \(col \d+\)$",
          "the two errors among 328 style findings"),
        S("stdout", r"^  Messages Found: \d+$", "the count"),
    ], expect_exit=exits(1))


_YAMALE_SCHEMA = """\
name: str()
port: int(min=1024, max=65535)
replicas: int(min=1)
region: enum('eu-west', 'eu-north', 'us-east')
env: map(str(), key=str())
healthcheck: include('probe')
---
probe:
  path: str()
  interval_seconds: int(min=1)
"""


def _service(n: int, port: str = "", region: str = "") -> str:
    """A service's deploy configuration; the port and region can be set."""
    return (f"name: svc-{n:03d}\nport: {port or 8000 + n}\nreplicas: {n % 4 + 1}\nregion: {region or ('eu-west', 'eu-north', 'us-east')[n % 3]}\n"
            f"env:\n  LOG_LEVEL: info\n  POOL_SIZE: '{n % 9 + 2}'\nhealthcheck:\n  path: /healthz\n  interval_seconds: 10\n")


@recipe("yamale-two-invalid-service-configs", "yamale", "data", pyver("yamale"), needs=("yamale",))
def _yamale(root):
    """Write the `yamale-two-invalid-service-configs` project under `root`; return its command and signals."""
    write(root, "schema.yaml", _YAMALE_SCHEMA)
    for n in range(120):
        write(root, f"services/svc-{n:03d}.yaml", _service(n))
    write(root, "services/svc-042.yaml", _service(42, port="80"))
    write(root, "services/svc-097.yaml", _service(97, region="ap-south"))
    return Run(["yamale", "-s", "schema.yaml", "services"], [
        S("stdout", r"^Validation failed!$", "the verdict"),
        S("stdout", r"^Error validating data '.*/services/svc-(042|097)\.yaml' with schema", "the two invalid files"),
        S("stdout", r"port: 80 is less than 1024|region: 'ap-south' not in", "why each is invalid"),
    ], expect_exit=exits(1))


@recipe("ipython-etl-script-zero-division", "ipython", "crash", pyver("ipython"), needs=("ipython",))
def _ipython(root):
    """Write the `ipython-etl-script-zero-division` project under `root`; return its command and signals."""
    write(root, "etl/__init__.py", "")
    write(root, "etl/pricing.py", "def unit_price(total, units):\n    return round(total / units, 2)\n\n\n"
          "def enrich(row):\n    row['unit_price'] = unit_price(row['total'], row['units'])\n    return row\n")
    write(root, "load_orders.py", "from etl.pricing import enrich\n\n"
          "rows = [{'order': n, 'total': 10 + n % 300, 'units': 0 if n == 2841 else n % 12 + 1} for n in range(3200)]\n"
          "for row in rows:\n    enriched = enrich(row)\n"
          "    print(f\"order {enriched['order']:05d}: {enriched['units']:2d} units at {enriched['unit_price']:8.2f}"
          " (total {enriched['total']})\")\nprint('loaded', len(rows), 'orders')\n")
    argv = ["ipython", "--no-banner", "--colors=nocolor", "load_orders.py"]
    return Run(argv, [
        S("stdout", r"ZeroDivisionError +Traceback \(most recent call last\)", "the trace's start"),
        S("stdout", r"^File .*/etl/pricing\.py:\d+, in (unit_price|enrich)\(", "the project's own frames"),
        S("stdout", r"^----> 2     return round\(total / units, 2\)$", "the line that raised"),
        S("stdout", r"^ZeroDivisionError: division by zero$", "the exception"),
    ], env={"PYTHONPATH": root, "IPYTHONDIR": f"{root}/.ipython"}, expect_exit=exits(0, 1))


@recipe("tryceratops-exception-antipatterns", "tryceratops", "linter", pyver("tryceratops"), needs=("tryceratops",))
def _tryceratops(root):
    """Write the `tryceratops-exception-antipatterns` project under `root`; return its command and signals."""
    write(root, "payments/gateway.py", """\
        import logging

        log = logging.getLogger(__name__)


        class GatewayError(Exception):
            pass


        def capture(client, charge_id):
            try:
                response = client.post(f"/charges/{charge_id}/capture")
                if response.status != 200:
                    raise Exception(f"capture of {charge_id} failed with status {response.status}")
                return response.json()
            except Exception as exc:
                log.error("capture failed: %s", exc)
                raise GatewayError("capture failed")


        def refund(client, charge_id, amount):
            try:
                return client.post(f"/charges/{charge_id}/refund", json={"amount": amount}).json()
            except ValueError:
                raise
        """)
    return Run(["tryceratops", "payments"], [
        S("stdout", r"^\[TRY\d+\] ", "each finding"),
        S("stdout", r"^Found \d+ violations$", "the summary"),
    ], expect_exit=exits(0, 1))


@recipe("pyinfra-local-deploy-one-op-fails", "pyinfra", "deploy", pyver("pyinfra"), needs=("pyinfra",))
def _pyinfra(root):
    """Write the `pyinfra-local-deploy-one-op-fails` project under `root`; return its command and signals."""
    ops = "".join(f"files.directory(name='Create release dir {n}', path='{root}/srv/shop/releases/r{n:02d}')\n"
                  f"files.put(name='Upload config {n}', src='files/shop-{n:02d}.ini', "
                  f"dest='{root}/srv/shop/releases/r{n:02d}/shop.ini')\n" for n in range(12))
    for n in range(12):
        write(root, f"files/shop-{n:02d}.ini", f"[shop]\nrelease = r{n:02d}\nworkers = {n % 4 + 2}\n")
    write(root, "deploy.py", "from pyinfra.operations import files, server\n\n" + ops +
          f"server.shell(name='Check config syntax', commands=['grep -q \"^listen\" {root}/srv/shop/releases/r11/shop.ini'])\n"
          f"files.link(name='Point current at r11', path='{root}/srv/shop/current', target='{root}/srv/shop/releases/r11')\n")
    argv = ["pyinfra", "-y", "@local", "deploy.py"]
    return Run(argv, [
        S("stderr", r"^--> Starting operation: Check config syntax $", "the failing operation"),
        S("stderr", r"^    \[@local\] Error: ", "its error"),
        S("stderr", r"^--> pyinfra error: No hosts remaining!$", "the run's verdict"),
    ], expect_exit=exits(1))


@recipe("pypyr-pipeline-step-name-error", "pypyr", "build", pyver("pypyr"), needs=("pypyr",))
def _pypyr(root):
    """Write the `pypyr-pipeline-step-name-error` project under `root`; return its command and signals."""
    write(root, "release.yaml", """\
        context_parser: pypyr.parser.keyvaluepairs
        steps:
          - name: pypyr.steps.echo
            in:
              echoMe: building release {version}
          - name: pypyr.steps.set
            in:
              set:
                artifacts: [shop.tar.gz, shop.whl]
          - name: pypyr.steps.py
            in:
              py: |
                for artifact in artifacts:
                    print('signed', artifact, 'with key', signing_key)
          - name: pypyr.steps.echo
            in:
              echoMe: release {version} done
        """)
    return Run(["pypyr", "release", "version=2.4.0"], [
        S("stderr", r"^Error while running step pypyr\.steps\.py at pipeline yaml line: 10, col: 5$", "the failing step"),
        S("stderr", r"NameError: name 'signing_key' is not defined", "the error"),
    ], expect_exit=lambda code: code != 0)


@recipe("pyroma-package-rating", "pyroma", "packaging", pyver("pyroma"), needs=("pyroma",))
def _pyroma(root):
    """Write the `pyroma-package-rating` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "shop-ledger"
        version = "0.3"
        description = "ledger"
        dependencies = ["sqlalchemy"]
        """)
    write(root, "src/shop_ledger/__init__.py", "__version__ = '0.3'\n")
    return Run(["pyroma", "-d", "."], [
        S("stdout", r"^Final rating: \d+/10$", "the rating"),
    ], expect_exit=exits(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))


@recipe("sqlite-utils-insert-unique-constraint", "sqlite-utils", "data", pyver("sqlite-utils"), needs=("sqlite-utils",))
def _sqlite_utils(root):
    """Write the `sqlite-utils-insert-unique-constraint` project under `root`; return its command and signals."""
    write(root, "customers.csv", "id,email,city\n" + "".join(f"{n},c{n}@example.test,city{n % 17}\n" for n in range(1, 41))
          + "41,c7@example.test,city3\n")
    sh(f"{vbin('sqlite-utils')} create-table shop.db customers id integer email text city text --pk id && "
       f"{vbin('sqlite-utils')} create-index shop.db customers email --unique", root)
    return Run(["sqlite-utils", "insert", "shop.db", "customers", "customers.csv", "--csv"], [
        S("stderr", r"UNIQUE constraint failed: customers\.email", "the error"),
    ], expect_exit=exits(1))


@recipe("copier-copy-post-task-fails", "copier", "scaffold", pyver("copier"), needs=("copier",))
def _copier(root):
    """Write the `copier-copy-post-task-fails` project under `root`; return its command and signals."""
    write(root, "template/copier.yml", "project_name:\n  type: str\n  default: shop-service\n"
          "python_version:\n  type: str\n  default: '3.11'\n_subdirectory: project\n_tasks:\n"
          "  - git init -q .\n  - python scripts/check_names.py\n  - echo scaffold ready\n")
    for n in range(60):
        for kind in ("handlers", "models", "schemas"):
            write(root, f"template/project/src/{{{{ project_name }}}}/{kind}/part_{n:02d}.py.jinja",
                  f"\"\"\"{{{{ project_name }}}} {kind} part {n}.\"\"\"\n\nPART = {n}\n")
        write(root, f"template/project/tests/test_part_{n:02d}.py.jinja", f"def test_part_{n}():\n    assert {n} >= 0\n")
    write(root, "template/project/scripts/check_names.py", "import pathlib\nimport sys\n\n"
          "names = sorted(p.name for p in pathlib.Path('src').rglob('*.py'))\nif len(names) != len(set(names)):\n"
          "    sys.exit('check_names: duplicate module names under src/ (part_00.py appears 3 times)')\n")
    write(root, "template/project/README.md.jinja", "# {{ project_name }}\n\nPython {{ python_version }}.\n")
    argv = ["copier", "copy", "--defaults", "--trust", "template", "out"]
    return Run(argv, [
        S("stderr", r"^ > Running task 2 of 3: python scripts/check_names\.py$", "the task that failed"),
        S("stderr", r"^check_names: duplicate module names under src/ ", "the task's own error"),
        S("stderr", r"^Task 'python scripts/check_names\.py' returned non-zero exit status 1\.$", "the failure"),
    ], expect_exit=lambda code: code != 0)


def _rst_section(n: int) -> str:
    """One section of a long operations runbook, its title's underline a character short."""
    title = f"Procedure {n}: restart the order queue worker"
    return (f"{title}\n{'-' * (len(title) - 1)}\n\nDrain the queue, stop worker {n}, and start it again.\n\n"
            f".. code-block:: text\n\n   systemctl restart orders@{n}\n\n")


@recipe("rst2html-runbook-warnings-unknown-target", "rst2html", "docs", pyver("docutils"), needs=("rst2html",))
def _rst2html(root):
    """Write the `rst2html-runbook-warnings-unknown-target` project under `root`; return its command and signals."""
    sections = [_rst_section(n) for n in range(150)]
    sections[61] += "See the refunds_ procedure before draining a queue with payments in flight.\n\n"
    sections[118] += "Check the worker:\n\n  * the pid file exists\n    * and is not stale\n\n"
    write(root, "runbook.rst", "=================\nOperations runbook\n=================\n\n" + "".join(sections))
    return Run(["rst2html", "runbook.rst", "runbook.html"], [
        S("stderr", r"^runbook\.rst:\d+: \(ERROR/3\) Unknown target name: \"refunds\"\.$",
          "the one error among 151 warnings"),
    ], expect_exit=exits(0, 1))
