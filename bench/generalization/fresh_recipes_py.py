"""Fresh recipes for Python: pytest's -x and --lf, Flask and SQLAlchemy logs, a worker log, csvkit.

Each signal is written from the raw output's meaning, before any view of it.
"""

from __future__ import annotations

import os

from fresh_common import (
    VENV_BIN,
    Run,
    S,
    exits,
    py_env,
    recipe,
    sh,
    write,
)

PYTHON = [os.path.join(VENV_BIN, "python"), "--version"]


def _vbin(name: str) -> str:
    return os.path.join(VENV_BIN, name)


def _pricing_tests(root: str, modules: int) -> None:
    write(root, "pricing/__init__.py", "")
    write(root, "pricing/rules.py", """
        def vat(amount, rate=0.2):
            return round(amount * rate, 2)


        def bulk_discount(qty, unit):
            if qty > 100:
                return qty * unit * 0.9
            return qty * unit


        def parse_price(text):
            return float(text.replace("EUR", ""))
        """)
    pairs = "[(1, 2), (5, 3), (10, 1), (50, 2), (99, 1), (7, 7)]"
    for i in range(modules):
        write(root, f"tests/test_rules_{i:02d}.py", f"""
            import pytest

            from pricing.rules import bulk_discount, vat


            @pytest.mark.parametrize("qty,unit", {pairs})
            def test_bulk_small_{i}(qty, unit):
                assert bulk_discount(qty, unit) == qty * unit


            def test_vat_{i}():
                assert vat({i + 10}) == round({i + 10} * 0.2, 2)
            """)
    write(root, "tests/test_zparse.py", """
        from pricing.rules import bulk_discount, parse_price


        def test_parse_plain():
            assert parse_price("12.50") == 12.5


        def test_parse_with_currency():
            assert parse_price("EUR 1,299.00") == 1299.0


        def test_bulk_large():
            assert bulk_discount(200, 1) == 180
        """)


@recipe("pytest-x-verbose-stop", "pytest", "test-runner", [_vbin("pytest"), "--version"], needs=())
def _pytest_x(root):
    _pricing_tests(root, 40)
    write(root, "tests/test_zz_late.py", "def test_late():\n    assert True\n")
    return Run(["pytest", "-x", "-v"], [
        S("stdout", r"::test_parse_with_currency FAILED", "the failing test, in place among 280 passing ones"),
        S("stdout", r"^_+ test_parse_with_currency _+$", "the failing test's heading"),
        S("stdout", r"^E       ValueError: could not convert string to float", "the exception"),
        S("stdout", r"^tests/test_zparse\.py:\d+: ?$|^pricing/rules\.py:12: ValueError$",
          "the test's line and the project's line that raised"),
        S("stdout", r"^FAILED tests/test_zparse\.py::test_parse_with_currency", "the short summary"),
        S("stdout", r"stopping after 1 failures", "why the run stopped early (-x)"),
        S("stdout", r"^=+ 1 failed, \d+ passed in ", "the closing count"),
    ], command=[_vbin("python"), "-m", "pytest", "-x", "-v", "-p",
               "no:cacheprovider"], env=py_env(), expect_exit=exits(1))


@recipe("pytest-lf-rerun", "pytest", "test-runner", [_vbin("pytest"), "--version"], needs=())
def _pytest_lf(root):
    _pricing_tests(root, 30)
    write(root, "tests/test_rounding.py", """
        from pricing.rules import vat


        def test_vat_half_cent():
            assert vat(0.125) == 0.03


        def test_vat_zero_rate():
            assert vat(10, rate=0) == 0
        """)
    sh([_vbin("python"), "-m", "pytest", "-q"], root, env=py_env(), check=False)
    return Run(["pytest", "--lf"], [
        S("stdout", r"^run-last-failure: rerun previous 1 failure", "what --lf chose to run"),
        S("stdout", r"^_+ test_parse_with_currency _+$", "the failing test's heading"),
        S("stdout", r"^E       ValueError: could not convert string to float", "the exception"),
        S("stdout", r"^tests/test_zparse\.py:\d+: ?$|^pricing/rules\.py:12: ValueError$",
          "the test's line and the project's line that raised"),
        S("stdout", r"^FAILED tests/test_zparse\.py::test_parse_with_currency", "the short summary"),
        S("stdout", r"^=+ 1 failed in ", "the closing count"),
    ], command=[_vbin("python"), "-m", "pytest", "--lf"], env=py_env(),
               expect_exit=exits(1))


@recipe("flask-request-log-traceback", "flask", "framework", [_vbin("flask"), "--version"], needs=())
def _flask(root):
    write(root, "shop/__init__.py", "")
    write(root, "shop/app.py", """
        import logging

        from flask import Flask, jsonify, request

        app = Flask(__name__)
        ORDERS = {i: {"id": i, "items": [{"sku": f"S{i}", "qty": i % 4}]} for i in range(1, 200)}


        def order_total(order):
            return sum(line["qty"] * line["price"] for line in order["items"])


        @app.route("/orders/<int:order_id>")
        def show_order(order_id):
            order = ORDERS.get(order_id)
            if order is None:
                return jsonify(error="not found"), 404
            if request.args.get("with_total"):
                order = {**order, "total": order_total(order)}
            return jsonify(order)
        """)
    write(root, "replay.py", """
        import logging

        from werkzeug.serving import WSGIRequestHandler  # noqa: F401

        from shop.app import app

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                            datefmt="%H:%M:%S")
        log = logging.getLogger("replay")
        client = app.test_client()
        for n in range(1, 181):
            path = f"/orders/{n}" + ("?with_total=1" if n == 137 else "")
            response = client.get(path)
            log.info("GET %s -> %s (%d bytes)", path, response.status_code, len(response.data))
        for n in (404, 405):
            log.info("GET /orders/%d -> %s", n, client.get(f"/orders/{n}").status_code)
        """)
    return Run(["python", "replay.py"], [
        S("stderr", r"ERROR shop\.app: Exception on /orders/137 \[GET\]$", "the one failed request among 180"),
        S("stderr", r"^Traceback \(most recent call last\):$", "the start of its trace"),
        S("stderr", r'shop/app\.py", line \d+, in ', "the project's own frames below Flask's"),
        S("stderr", r"^KeyError: 'price'$", "the exception"),
        S("stderr", r"GET /orders/137\?with_total=1 -> 500 ", "the request's status as the client saw it"),
    ], command=[_vbin("python"), "replay.py"], env=py_env(),
               expect_exit=exits(0))


@recipe("sqlalchemy-echo-integrity-error", "python", "database", [_vbin("python"), "-c",
        "import sqlalchemy; print('SQLAlchemy', sqlalchemy.__version__)"], needs=())
def _sqlalchemy(root):
    write(root, "load_users.py", """
        from sqlalchemy import ForeignKey, String, create_engine, select
        from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


        class Base(DeclarativeBase):
            pass


        class Team(Base):
            __tablename__ = "teams"
            id: Mapped[int] = mapped_column(primary_key=True)
            name: Mapped[str] = mapped_column(String(40), unique=True)


        class User(Base):
            __tablename__ = "users"
            id: Mapped[int] = mapped_column(primary_key=True)
            email: Mapped[str] = mapped_column(String(120), unique=True)
            team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"))


        def load(session, count):
            for n in range(count):
                session.add(User(email=f"user{n % 57 if n == 91 else n}@example.com", team_id=1 + n % 3))
                session.flush()


        def main():
            engine = create_engine("sqlite:///users.db", echo=True)
            Base.metadata.create_all(engine)
            with Session(engine) as session:
                session.add_all([Team(name=t) for t in ("core", "web", "data")])
                session.flush()
                load(session, 120)
                session.commit()
                print(session.scalar(select(User).limit(1)))


        if __name__ == "__main__":
            main()
        """)
    return Run(["python", "load_users.py"], [
        S("stderr", r"^Traceback \(most recent call last\):$", "the start of each chained trace"),
        S("stderr", r'load_users\.py", line \d+, in (main|load)$', "the project's own frames"),
        S("stderr", r"^sqlalchemy\.exc\.IntegrityError: \(sqlite3\.IntegrityError\) UNIQUE constraint failed: users\.email$",
          "the exception"),
        S("stderr", r"^\[parameters: \('user34@example\.com', 2\)\]$", "the row that broke the constraint"),
        S("stdout", r"INFO sqlalchemy\.engine\.Engine ROLLBACK$", "the transaction rolled back, among the echoed SQL"),
    ], command=[_vbin("python"), "load_users.py"], env=py_env(),
               expect_exit=exits(1))


@recipe("python-recursion-error", "python", "runtime", PYTHON, needs=())
def _recursion(root):
    write(root, "tree.py", """
        class Node:
            def __init__(self, name, parent=None):
                self.name = name
                self.parent = parent

            def path(self):
                if self.parent is None:
                    return self.name
                return self.parent.path() + "/" + self.name


        root = Node("root")
        child = Node("etc", root)
        root.parent = child
        print(child.path())
        """)
    return Run(["python", "tree.py"], [
        S("stderr", r'tree\.py", line \d+, in (<module>|path)$', "the project's frames (the recursion is all its own)"),
        S("stderr", r"^  \[Previous line repeated \d+ more times\]$", "how deep the repetition went"),
        S("stderr", r"^RecursionError: maximum recursion depth exceeded$", "the exception"),
    ], command=[_vbin("python"), "tree.py"], env=py_env(), expect_exit=exits(1))


@recipe("coverage-html-no-data", "coverage", "coverage", [_vbin("coverage"), "--version"], needs=())
def _coverage_html(root):
    write(root, "pkg/__init__.py", "")
    write(root, ".coveragerc", "[run]\nsource = pkg\n")
    return Run(["coverage", "html"], [
        S("stdout", r"^No data to report\.$", "why nothing was written"),
    ], command=[_vbin("coverage"), "html"], env=py_env(), expect_exit=exits(1))


@recipe("csvstat-columns", "csvstat", "data", [_vbin("csvstat"), "--version"], needs=())
def _csvstat(root):
    import random
    rng = random.Random(7)
    extra = ["weight_kg", "items", "discount", "tax", "shipping_fee", "rating", "returns", "warehouse"]
    rows = ["order_id,customer,country,amount,currency,shipped,created," + ",".join(extra)]
    for n in range(1, 1501):
        shipped = "" if n == 1204 else rng.choice(["true", "false"])
        more = ",".join(str(rng.randint(0, 40 * (k + 1))) for k in range(len(extra)))
        rows.append(f"{n},cust{rng.randint(1, 300):04d},{rng.choice(['DE', 'FR', 'NL', 'BE', 'AT'])},"
                    f"{rng.randint(100, 99999) / 100},EUR,{shipped},2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)},"
                    + more)
    write(root, "orders.csv", "\n".join(rows) + "\n")
    return Run(["csvstat", "orders.csv"], [
        S("stdout", r'^  6\. "shipped"$', "the heading of the one column holding nulls"),
        S("stdout", r"Contains null values:  True", "the one column with a missing value"),
        S("stdout", r"^Row count: 1500$", "the closing count"),
    ], command=[_vbin("csvstat"), "orders.csv"], env=py_env(),
               expect_exit=exits(0))


@recipe("worker-log-task-retry-failure", "python", "log", PYTHON, needs=())
def _worker_log(root):
    write(root, "worker.py", """
        import logging
        import random

        logging.basicConfig(level=logging.INFO, format="[%(asctime)s: %(levelname)s/%(processName)s] %(message)s")
        logging.Formatter.converter = lambda *a: __import__("time").gmtime(1700000000)
        log = logging.getLogger("worker")
        rng = random.Random(11)
        tasks = ["emails.send_receipt", "images.make_thumbnail", "reports.nightly_rollup", "search.reindex_doc"]
        log.info("Connected to redis://localhost:6379/0")
        log.info("mingle: all alone")
        log.info("worker@build-7 ready.")
        for n in range(9000):
            task = tasks[n % 4]
            tid = "%08x-%04x" % (rng.getrandbits(32), rng.getrandbits(16))
            log.info("Task %s[%s] received", task, tid)
            if n == 6113:
                log.warning("Task %s[%s] retry: Retry in 30s: ConnectionResetError(104, 'Connection reset by peer')",
                            task, tid)
                continue
            if n == 7342:
                try:
                    {"width": 640}["height"]
                except KeyError:
                    log.exception("Task %s[%s] raised unexpected: KeyError('height')", task, tid)
                continue
            log.info("Task %s[%s] succeeded in %.4fs: None", task, tid, rng.random())
        log.info("Warm shutdown (MainProcess)")
        """)
    return Run(["python", "worker.py"], [
        S("stderr", r"WARNING/MainProcess\] Task images\.make_thumbnail\[[0-9a-f-]+\] retry: ", "the one retry among 9,000 tasks"),
        S("stderr", r"ERROR/MainProcess\] Task reports\.nightly_rollup\[[0-9a-f-]+\] raised unexpected: ", "the one failed task"),
        S("stderr", r'worker\.py", line \d+, in <module>$', "the project's frame of that failure"),
        S("stderr", r"^KeyError: 'height'$", "its exception"),
        S("stderr", r"Warm shutdown \(MainProcess\)$", "the worker ended cleanly"),
    ], command=[_vbin("python"), "worker.py"], env=py_env(),
               expect_exit=exits(0))
