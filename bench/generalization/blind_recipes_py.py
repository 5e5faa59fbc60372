"""Blind recipes for PyPI tools: codespell, pyupgrade, radon, sqlfluff, yapf, pyflakes, interrogate,
nose2, behave, Robot Framework, uvicorn, gunicorn, poetry, ansible-playbook, a faulthandler crash.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from blind_common import Run, S, exits, recipe, vbin, write


def _ver(tool: str) -> list[str]:
    """The version command of a pinned PyPI tool."""
    return [vbin(tool), "--version"]


def _dist_ver(dist: str) -> list[str]:
    """A version command for a tool without one: its distribution's installed version."""
    return [vbin("python"), "-c", f"import importlib.metadata as m; print('{dist}', m.version('{dist}'))"]


@recipe("codespell-typos", "codespell", "linter", _ver("codespell"))
def _codespell(root):
    """Write the `codespell-typos` project under `root`; return its command and signals."""
    words = ["receive", "separate", "occurred", "definitely", "environment", "necessary"]
    typos = {3: ("recieve", 14), 11: ("seperate", 7), 19: ("occured", 22), 27: ("enviroment", 3)}
    for i in range(32):
        lines = [f"# module {i}: handles the {words[k % 6]} step of the pipeline" for k in range(30)]
        if i in typos:
            word, at = typos[i]
            lines[at] = f"# when we {word} a message we store it before acking"
        write(root, f"src/app/mod_{i:02d}.py", "\n".join(lines) + "\nVALUE = 1\n")
    write(root, "README.md", "# App\n\nIt is definately the neccessary glue.\n")
    return Run(["codespell", "src", "README.md"], [
        S("stdout", r"^(src/app/mod_\d\d\.py|README\.md):\d+: \w+ ==> ", "each misspelling with its file and line"),
    ], command=[vbin("codespell"), "src", "README.md"], expect_exit=exits(65))


@recipe("pyupgrade-rewrite", "pyupgrade", "formatter", _dist_ver("pyupgrade"))
def _pyupgrade(root):
    """Write the `pyupgrade-rewrite` project under `root`; return its command and signals."""
    old = """
        from typing import Dict, List, Optional


        class Store(object):
            def keys(self) -> List[str]:
                return list(set([k for k in self.data]))

            def get(self, key: str) -> Optional[Dict[str, int]]:
                return self.data.get(key)

            def label(self, key):
                return "{0}: {1}".format(key, self.data[key])
        """
    for i in range(12):
        write(root, f"pkg/m{i:02d}.py", old if i in (2, 7, 9) else f"VALUE_{i} = {i}\n")
    files = [f"pkg/m{i:02d}.py" for i in range(12)]
    return Run(["pyupgrade", "--py311-plus", *files], [
        S("stderr", r"^Rewriting pkg/m0[279]\.py$", "each file it rewrote"),
    ], command=[vbin("pyupgrade"), "--py311-plus", *files], expect_exit=exits(1))


def _radon_module(i: int) -> str:
    """A module of twelve one-branch functions; modules 137 and 251 hold one very branchy function."""
    parts = [f"def handler_{i}_{k}(event):\n    if event:\n        return {k}\n    return 0\n\n" for k in range(12)]
    if i in (137, 251):
        body = "".join(f"    if kind == {k}:\n        total += {k}\n    elif flag and kind > {k}:\n"
                       f"        total -= 1\n" for k in range(22))
        parts.append(f"def dispatch_{i}(kind, flag):\n    total = 0\n{body}    return total\n")
    return "\n".join(parts)


@recipe("radon-cc-large-tree", "radon", "linter", _ver("radon"))
def _radon(root):
    """Write the `radon-cc-large-tree` project under `root`; return its command and signals."""
    for i in range(320):
        write(root, f"svc/pkg{i % 8}/mod_{i:03d}.py", _radon_module(i))
    return Run(["radon", "cc", "-s", "-a", "svc"], [
        S("stdout", r"^    F \d+:0 dispatch_(137|251) - [DEF] \(\d+\)$", "the two functions graded far worse than the rest"),
        S("stdout", r"^\d+ blocks \(classes, functions, methods\) analyzed\.$", "how much was analysed"),
        S("stdout", r"^Average complexity: ", "the closing average"),
    ], command=[vbin("radon"), "cc", "-s", "-a", "svc"], expect_exit=exits(0))


@recipe("sqlfluff-lint-parse-error", "sqlfluff", "linter", _ver("sqlfluff"))
def _sqlfluff(root):
    """Write the `sqlfluff-lint-parse-error` project under `root`; return its command and signals."""
    write(root, ".sqlfluff", "[sqlfluff]\ndialect = postgres\n")
    for i in range(6):
        write(root, f"queries/report_{i}.sql", f"""
            select id,name , created_at
            from customers c join orders o on c.id=o.customer_id
            where o.total>{i * 10} AND c.region = 'eu'
            order by 1
            """)
    write(root, "queries/report_9.sql", "SELECT id, FROM orders WHERE total > 5 GROUP;\n")
    return Run(["sqlfluff", "lint", "queries"], [
        S("stdout", r"^== \[queries/report_9\.sql\] FAIL$", "the file that does not parse"),
        S("stdout", r"\| +PRS \| Line 1, Position 40: Found unparsable section", "the parse error, the one finding that is not style"),
        S("stdout", r"^WARNING: Parsing errors found", "the tool's own warning that the SQL did not parse"),
        S("stdout", r"^All Finished", "the end of the run"),
    ], command=[vbin("sqlfluff"), "lint", "queries"], expect_exit=exits(1), timeout=900)


@recipe("yapf-diff", "yapf", "formatter", _ver("yapf"))
def _yapf(root):
    """Write the `yapf-diff` project under `root`; return its command and signals."""
    write(root, "tools/report.py", """
        import sys
        def main( argv ):
            rows=[ (a,b) for a,b in zip(argv,argv[1:]) ]
            for a,b in rows :
                print( a,b )
            return {'rows':rows,'count' : len(rows)}
        """)
    write(root, "tools/ok.py", "def ok():\n    return 1\n")
    write(root, "tools/merge.py", "def merge(a,b):\n  return {**a,**b}\n")
    return Run(["yapf", "--diff", "-r", "tools"], [
        S("stdout", r"^--- tools/(report|merge)\.py\t\(original\)$", "each file yapf would reformat"),
    ], command=[vbin("yapf"), "--diff", "-r", "tools"], expect_exit=exits(1))


@recipe("pyflakes-undefined-name", "pyflakes", "linter", _ver("pyflakes"))
def _pyflakes(root):
    """Write the `pyflakes-undefined-name` project under `root`; return its command and signals."""
    for i in range(60):
        extra = "\n\ndef total(rows):\n    return sum(r.amount for r in rowz)\n" if i == 23 else ""
        write(root, f"billing/m{i:02d}.py", "import os\nimport sys\nimport json\nfrom typing import Any\n\n"
              f"VALUE = {i}\n{extra}")
    return Run(["pyflakes", "billing"], [
        S("stdout", r"^billing/m23\.py:\d+:\d+:? undefined name 'rowz'$", "the one real bug among 240 unused imports"),
    ], command=[vbin("pyflakes"), "billing"], expect_exit=exits(1))


@recipe("interrogate-docstring-coverage", "interrogate", "coverage", _ver("interrogate"))
def _interrogate(root):
    """Write the `interrogate-docstring-coverage` project under `root`; return its command and signals."""
    for i in range(14):
        documented = "" if i == 6 else '    """Do it."""\n'
        module_doc = "" if i == 6 else f'"""Module {i}."""\n'
        funcs = "".join(f"def step_{k}():\n{documented if k % 3 else ''}    return {k}\n\n\n" for k in range(6))
        write(root, f"lib/mod_{i:02d}.py", module_doc + funcs)
    return Run(["interrogate", "-vv", "--fail-under", "80", "lib"], [
        S("stdout", r"\| lib/mod_06\.py .*\| +0% \|$|^\| mod_06\.py .*\| +0% \|$", "the one file with no docstring at all"),
        S("stdout", r"RESULT: FAILED \(minimum: 80\.0%, actual: 66\.3%\)", "the verdict"),
    ], command=[vbin("interrogate"), "-vv", "--fail-under", "80", "lib"], expect_exit=exits(1))


@recipe("nose2-verbose-failure-error", "nose2", "test-runner", _dist_ver("nose2"))
def _nose2(root):
    """Write the `nose2-verbose-failure-error` project under `root`; return its command and signals."""
    write(root, "ledger/__init__.py", "")
    write(root, "ledger/money.py", """
        def split(amount, parts):
            share = round(amount / parts, 2)
            return [share] * parts


        def parse(text):
            return int(text.strip().replace(",", ""))
        """)
    for i in range(8):
        cases = "".join(f"    def test_split_{k}(self):\n        self.assertEqual(len(split({k + 1}, {k + 2})), {k + 2})\n\n"
                        for k in range(7))
        write(root, f"tests/test_ledger_{i}.py", "import unittest\n\nfrom ledger.money import parse, split\n\n\n"
              f"class Ledger{i}Test(unittest.TestCase):\n{cases}")
    write(root, "tests/test_ledger_9.py", """
        import unittest

        from ledger.money import parse, split


        class EdgeTest(unittest.TestCase):
            def test_split_sums_back(self):
                self.assertEqual(sum(split(10, 3)), 10)

            def test_parse_decimal(self):
                self.assertEqual(parse("1,299.50"), 1299)
        """)
    return Run(["nose2", "-v"], [
        S("stderr", r"^(FAIL|ERROR): test_(split_sums_back|parse_decimal) ", "the failing and the erroring test"),
        S("stderr", r"^AssertionError: 9\.99 != 10$", "the failure"),
        S("stderr", r"^ValueError: invalid literal for int\(\)", "the error"),
        S("stderr", r'File ".*/ledger/money\.py", line \d+, in parse$', "the project's line that raised"),
        S("stderr", r"^Ran \d+ tests in ", "the count"),
        S("stderr", r"^FAILED \(failures=1, errors=1\)$", "the verdict"),
    ], command=[vbin("nose2"), "-v"], expect_exit=exits(1))


@recipe("behave-failing-undefined-steps", "behave", "test-runner", _ver("behave"))
def _behave(root):
    """Write the `behave-failing-undefined-steps` project under `root`; return its command and signals."""
    write(root, "features/cart.feature", """
        Feature: Shopping cart

          Scenario: Add one item
            Given an empty cart
            When I add 2 "apples" at 0.5 each
            Then the total is 1.0

          Scenario: Add items with a discount
            Given an empty cart
            When I add 10 "pears" at 1.0 each
            And a 10 percent discount applies
            Then the total is 9.0

          Scenario: Remove an item
            Given an empty cart
            When I add 1 "plums" at 2.0 each
            And I remove "plums"
            Then the total is 0.0
        """)
    write(root, "features/steps/cart_steps.py", """
        from behave import given, then, when


        @given("an empty cart")
        def step_empty(context):
            context.cart = []


        @when('I add {qty:d} "{name}" at {price:f} each')
        def step_add(context, qty, name, price):
            context.cart.append((name, qty, price))


        @when("a {pct:d} percent discount applies")
        def step_discount(context, pct):
            context.discount = pct


        @then("the total is {total:f}")
        def step_total(context, total):
            got = sum(q * p for _, q, p in context.cart)
            assert got == total, f"expected {total}, got {got}"
        """)
    return Run(["behave", "--no-color"], [
        S("stdout", r"Then the total is 9\.0 .*features/steps/cart_steps\.py:\d+|^ +Assertion Failed: expected 9\.0, got 10\.0$",
          "the failing step and its assertion"),
        S("stdout", r'^ +And I remove "plums" +# None$|You can implement step definitions for undefined steps',
          "the undefined step"),
        S("stdout", r"^Failing scenarios:$|^  features/cart\.feature:\d+  (Add items with a discount|Remove an item)$",
          "which scenario failed"),
        S("stdout", r"^\d+ features? passed, \d+ failed|^\d+ scenarios? passed, \d+ failed|^\d+ steps? passed, \d+ failed",
          "the closing counts"),
    ], command=[vbin("behave"), "--no-color"], expect_exit=exits(1))


@recipe("robot-suite-one-failure", "robot", "test-runner", _ver("robot"))
def _robot(root):
    """Write the `robot-suite-one-failure` project under `root`; return its command and signals."""
    for s in range(6):
        cases = []
        for t in range(70):
            value = t * 3 if (s, t) != (4, 51) else t * 3 + 1
            cases.append(f"Inventory Check {s}-{t:02d}\n    ${{got}}=    Evaluate    {t} * 3\n"
                         f"    Should Be Equal As Integers    ${{got}}    {value}\n")
        write(root, f"suites/inventory_{s}.robot", "*** Test Cases ***\n" + "\n".join(cases))
    return Run(["robot", "--consolecolors", "off", "--output", "NONE", "--report", "NONE", "--log", "NONE",
                "suites"], [
        S("stdout", r"^Inventory Check 4-51 +\| FAIL \|$", "the one failing test among 420"),
        S("stdout", r"^153 != 154$", "its failure message"),
        S("stdout", r"^Suites +\| FAIL \|$", "the top suite's verdict"),
        S("stdout", r"^Suites\.Inventory 4 +\| FAIL \|$", "the suite that holds it"),
        S("stdout", r"^420 tests, 419 passed, 1 failed$", "the closing count"),
    ], command=[vbin("robot"), "--consolecolors", "off", "--output", "NONE", "--report", "NONE", "--log", "NONE",
                "suites"], expect_exit=exits(1))


UVICORN_APP = """
    from fastapi import FastAPI

    app = FastAPI()
    PRICES = {n: {"sku": f"SKU-{n:05d}", "price": n * 0.25} for n in range(1, 4000)}


    def with_tax(item):
        return {**item, "gross": round(item["price"] * (1 + item["tax_rate"]), 2)}


    @app.get("/items/{n}")
    def read_item(n: int, gross: bool = False):
        item = PRICES[n]
        return with_tax(item) if gross else item
    """
UVICORN_CLIENT = """
    import time

    import httpx

    for _ in range(100):
        try:
            httpx.get("http://127.0.0.1:8731/items/1")
            break
        except httpx.TransportError:
            time.sleep(0.1)
    with httpx.Client(base_url="http://127.0.0.1:8731") as client:
        for n in range(1, 3200):
            try:
                client.get(f"/items/{n}" + ("?gross=true" if n == 2718 else ""))
            except httpx.TransportError:
                pass
    """


@recipe("uvicorn-access-log-500", "uvicorn", "framework", _ver("uvicorn"))
def _uvicorn(root):
    """Write the `uvicorn-access-log-500` project under `root`; return its command and signals."""
    write(root, "shop.py", UVICORN_APP)
    write(root, "client.py", UVICORN_CLIENT)
    command = (f"{vbin('uvicorn')} shop:app --port 8731 --no-use-colors & server=$!; "
               f"{vbin('python')} client.py >/dev/null 2>&1; kill -INT $server; wait $server")
    return Run(["uvicorn", "shop:app", "--port", "8731"], [
        S("stderr", r"^ERROR: +Exception in ASGI application$", "the one failed request's report"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the start of its trace"),
        S("stderr", r'^  File "/tmp/yarp-gen/blind/work/uvicorn-access-log-500/shop\.py", line \d+, in ',
          "the project's own frames"),
        S("stderr", r"^KeyError: 'tax_rate'$", "the exception"),
        S("stdout", r'"GET /items/2718\?gross=true HTTP/1\.1" 500 Internal Server Error$',
          "the one 500 among 3,200 requests"),
    ], command=command, expect_exit=exits(0, 130, 143))


@recipe("gunicorn-worker-boot-failure", "gunicorn", "framework", _ver("gunicorn"))
def _gunicorn(root):
    """Write the `gunicorn-worker-boot-failure` project under `root`; return its command and signals."""
    write(root, "site/__init__.py", "")
    write(root, "site/wsgi.py", """
        from site.settings import DATABASE_URL


        def application(environ, start_response):
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [DATABASE_URL.encode()]
        """)
    write(root, "webapp/__init__.py", "")
    write(root, "webapp/settings.py", "DEBUG = False\n")
    write(root, "webapp/wsgi.py", """
        from webapp.settings import DATABASE_URL


        def application(environ, start_response):
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [DATABASE_URL.encode()]
        """)
    argv = ["gunicorn", "--workers", "2", "--bind", "127.0.0.1:8732", "webapp.wsgi:application"]
    return Run(argv, [
        S("stderr", r"\[ERROR\] Exception in worker process$", "the worker's crash"),
        S("stderr", r'^  File "/tmp/yarp-gen/blind/work/gunicorn-worker-boot-failure/webapp/wsgi\.py", line 1, in',
          "the project's line that failed"),
        S("stderr", r"^ImportError: cannot import name 'DATABASE_URL' from 'webapp\.settings'", "the exception"),
        S("stderr", r"Reason: Worker failed to boot\.$", "why the master stopped"),
    ], command=[vbin("gunicorn"), *argv[1:]], expect_exit=exits(3), timeout=120)


@recipe("poetry-check-invalid", "poetry", "package-manager", _ver("poetry"))
def _poetry(root):
    """Write the `poetry-check-invalid` project under `root`; return its command and signals."""
    write(root, "pyproject.toml", """
        [tool.poetry]
        name = "ledger"
        version = "0.3"
        description = "Ledger tools"
        authors = ["Dev One <dev@example.org>"]
        license = "Proprietary-Custom"
        readme = "README.rst"
        packages = [{ include = "ledger", from = "src" }]

        [tool.poetry.dependencies]
        python = ">=3.10"
        requests = ">=2.31,<3"
        rich = { version = "^13", extras = ["jupyter"], optionall = true }

        [tool.poetry.group.dev.dependencies]
        pytest = "^8"

        [build-system]
        requires = ["poetry-core>=2.0"]
        build-backend = "poetry.core.masonry.api"
        """)
    return Run(["poetry", "check"], [
        S("stderr", r"^The Poetry configuration is invalid:$", "the verdict"),
        S("stderr", r"^  - tool\.poetry\.dependencies\.rich must be valid", "the error: the misspelt key in rich's table"),
    ], command=[vbin("poetry"), "check", "--no-ansi"], expect_exit=exits(1))


@recipe("ansible-playbook-failed-task", "ansible-playbook", "automation", _ver("ansible-playbook"))
def _ansible(root):
    """Write the `ansible-playbook-failed-task` project under `root`; return its command and signals."""
    tasks = "".join(f"""
    - name: Make directory {d}
      ansible.builtin.file:
        path: "{{{{ playbook_dir }}}}/out/{d}"
        state: directory
""" for d in ("conf", "data", "logs", "run"))
    write(root, "site.yml", f"""---
- name: Prepare the app host
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:{tasks}
    - name: Write the config
      ansible.builtin.copy:
        dest: "{{{{ playbook_dir }}}}/out/conf/app.ini"
        content: "port=8080\\n"
    - name: Check the schema version
      ansible.builtin.command: grep -q schema_version=7 "{{{{ playbook_dir }}}}/out/conf/app.ini"
    - name: Start the app
      ansible.builtin.command: echo started
""")
    write(root, "hosts", "localhost ansible_connection=local ansible_python_interpreter=" + vbin("python") + "\n")
    return Run(["ansible-playbook", "-i", "hosts", "site.yml"], [
        S("stdout", r"^TASK \[Check the schema version\]", "the task that failed"),
        S("stdout", r"^fatal: \[localhost\]: FAILED! =>", "the failure"),
        S("stdout", r"^localhost +: ok=\d+ +changed=\d+ +unreachable=0 +failed=1 ", "the recap"),
    ], command=[vbin("ansible-playbook"), "-i", "hosts", "site.yml"],
        env={"ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": "/tmp/yarp-gen/blind/ansible-tmp"}, expect_exit=exits(2))


@recipe("python-faulthandler-segfault", "python", "crash", _ver("python"))
def _faulthandler(root):
    """Write the `python-faulthandler-segfault` project under `root`; return its command and signals."""
    write(root, "native_reader.py", """
        import ctypes
        import faulthandler

        faulthandler.enable()


        def read_header(address):
            return ctypes.string_at(address, 16)


        def load(paths):
            for n, path in enumerate(paths):
                print(f"loading {path}", flush=True)
                if n == 3:
                    read_header(8)


        load([f"chunk-{n}.bin" for n in range(6)])
        """)
    return Run(["python", "native_reader.py"], [
        S("stderr", r"^Fatal Python error: Segmentation fault$", "the crash"),
        S("stderr", r"^Current thread 0x[0-9a-f]+ \(most recent call first\):$", "the start of the trace"),
        S("stderr", r'^  File "/tmp/yarp-gen/blind/work/python-faulthandler-segfault/native_reader\.py", line \d+ in ',
          "the project's frames"),
        S("stdout", r"^loading chunk-3\.bin$", "the last step before the crash"),
    ], command=f"{vbin('python')} native_reader.py; exit $?", expect_exit=exits(139))
