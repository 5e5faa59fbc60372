"""Recipes for Python packaging, test runners, docs builders and frameworks."""

from __future__ import annotations

import os

from scripting_common import VENV, Recipe, wheel, write

PIP = ["pip", "--version"]
PY = ["python", "--version"]


def _wheels(root: str) -> None:
    """A local index: webapp needs corelib>=2, reportgen needs corelib<2."""
    dest = os.path.join(root, "wheels")
    wheel(dest, "corelib", "1.5.0")
    wheel(dest, "corelib", "2.1.0")
    wheel(dest, "webapp", "1.0.0", ["corelib>=2.0", "jinja-lite>=1.0"])
    wheel(dest, "jinja-lite", "1.2.0")
    wheel(dest, "reportgen", "2.0.0", ["corelib<2.0", "webapp>=1.0"])
    write(root, {"requirements.in": "webapp==1.0.0\nreportgen==2.0.0\n"})


def _pip_check_setup(root: str) -> None:
    _wheels(root)


def _tox_setup(root: str) -> None:
    tests = {}
    for i in range(12):
        checks = "".join(f"\n    def test_rate_{i}_{j}(self):\n        self.assertEqual(convert({j}, 'EUR'), {j})\n"
                         for j in range(8))
        tests[f"tests/test_rates_{i:02d}.py"] = ("import unittest\n\nfrom fxconv import convert\n\n\n"
                                                f"class Rates{i}(unittest.TestCase):{checks}")
    tests["tests/test_rounding.py"] = '''
    import unittest

    from fxconv import convert


    class Rounding(unittest.TestCase):
        def test_half_up(self):
            self.assertEqual(convert(2.675, "USD"), 2.96)
    '''
    write(root, {
        "tox.ini": '''
        [tox]
        envlist = lint, unit
        skipsdist = true

        [testenv:lint]
        skip_install = true
        commands = python -c "import ast, pathlib; [ast.parse(p.read_text()) for p in pathlib.Path('.').glob('*.py')]; print('syntax ok')"

        [testenv:unit]
        skip_install = true
        setenv = PYTHONPATH = {toxinidir}
        commands = python -m unittest discover -s tests -v
        ''',
        "fxconv.py": '''
        RATES = {"EUR": 1.0, "USD": 1.1}


        def convert(amount, currency):
            return round(amount * RATES[currency], 2)
        ''',
        **tests,
    })


def _nox_setup(root: str) -> None:
    write(root, {"noxfile.py": '''
    import nox


    @nox.session(python=["3.11", "3.12"])
    def tests(session):
        """Run the test suite."""
        session.install("pytest")
        session.run("pytest")


    @nox.session
    def lint(session):
        """Lint with ruff."""
        session.install("ruff")
        session.run("ruff", "check", ".")


    @nox.session(default=False)
    def docs(session):
        """Build the documentation."""
        session.run("sphinx-build", "docs", "docs/_build")
    '''})


def _coverage_setup(root: str) -> None:
    files = {"metrics/__init__.py": ""}
    for i in range(150):
        branches = "".join(f"    if x == {j}:\n        return {j * i}\n" for j in range(6))
        files[f"metrics/calc_{i:02d}.py"] = f"def calc(x):\n{branches}    return -1\n"
    files["metrics/export_legacy.py"] = "import csv\n\n\ndef export(rows, path):\n" + "".join(
        f"    value_{j} = rows[{j}]\n" for j in range(20)) + "    return path\n"
    calls = "".join(f"    assert calc_{i:02d}.calc({i % 6}) is not None\n" for i in range(150))
    imports = "".join(f"from metrics import calc_{i:02d}\n" for i in range(150))
    files["tests/test_calc.py"] = f"{imports}\n\ndef test_all():\n{calls}"
    write(root, files)


def _sphinx_setup(root: str) -> None:
    pages = [f"guide/topic_{i:03d}" for i in range(90)]
    files = {
        "docs/conf.py": 'project = "Ledger"\nextensions = []\nexclude_patterns = ["_build"]\n',
        "docs/index.rst": "Ledger\n======\n\n.. toctree::\n   :maxdepth: 1\n\n" + "".join(
            f"   {p}\n" for p in pages) + "   guide/retired\n",
    }
    for i, page in enumerate(pages):
        body = f"Topic {i}\n{'=' * (6 + len(str(i)))}\n\n.. _topic-{i}:\n\nThis topic explains entries of kind {i}.\n"
        if i in (12, 47, 80):
            body += f"\nSee :ref:`ledger-closing-{i}` for the closing rules.\n"
        if i == 63:
            body += "\n.. code-blok:: python\n\n   ledger.close(period)\n"
        files[f"docs/{page}.rst"] = body
    files["docs/orphan_notes.rst"] = "Notes\n=====\n\nNot in any toctree.\n"
    write(root, files)


def _mkdocs_setup(root: str) -> None:
    write(root, {
        "mkdocs.yml": "site_name: Runbook\nnav:\n  - Home: index.md\n  - Deploy: deploy.md\n  - Rollback: rollback.md\n",
        "docs/index.md": "# Runbook\n\nStart with [deploying](deploy.md) or [the on-call guide](oncall.md).\n",
        "docs/deploy.md": "# Deploy\n\nSee [rollback](rollback.md#when-to-roll-back) and [metrics](../metrics.md).\n",
        "docs/rollback.md": "# Rollback\n\n## When to roll back\n\nIf error rates rise.\n",
        "docs/drafts/cutover.md": "# Cutover\n\nDraft.\n",
    })


def _xdist_setup(root: str) -> None:
    files = {"conftest.py": ""}
    for i in range(20):
        tests = "".join(f"\n\ndef test_parse_{i}_{j}():\n    assert parse_amount('{j}.{i:02d}') == {j}.{i:02d}\n"
                        for j in range(15))
        files[f"tests/test_parse_{i:02d}.py"] = "from money import parse_amount\n" + tests
    files["tests/test_locale.py"] = '''
    from money import parse_amount


    def test_comma_decimal():
        assert parse_amount("1.234,50") == 1234.5


    def test_currency_suffix():
        assert parse_amount("12,00 €") == 12.0
    '''
    files["money.py"] = '''
    def parse_amount(text):
        cleaned = text.replace(",", "").strip()
        return float(cleaned)
    '''
    write(root, files)


def _collection_setup(root: str) -> None:
    files = {"conftest.py": ""}
    for i in range(6):
        files[f"tests/test_api_{i}.py"] = "".join(f"def test_endpoint_{i}_{j}():\n    assert True\n\n\n" for j in range(10))
    files["tests/test_oauth.py"] = "from requests_oauthlib import OAuth2Session\n\n\ndef test_token():\n    assert OAuth2Session\n"
    write(root, files)


def _hypothesis_setup(root: str) -> None:
    write(root, {
        "codec.py": '''
        def encode(text):
            return text.encode("latin-1").hex()


        def decode(blob):
            return bytes.fromhex(blob).decode("latin-1")
        ''',
        "tests/test_codec.py": '''
        from hypothesis import given, settings, strategies as st

        from codec import decode, encode


        @settings(derandomize=True, database=None)
        @given(st.text())
        def test_roundtrip(text):
            assert decode(encode(text)) == text


        @given(st.text(alphabet="abc"))
        def test_ascii_roundtrip(text):
            assert decode(encode(text)) == text
        ''',
        "conftest.py": "",
    })


def _unittest_setup(root: str) -> None:
    files = {}
    for i in range(5):
        cases = "".join(f"\n    def test_case_{j}(self):\n        self.assertTrue(normalise('Ünïcödé {j}'))\n"
                        for j in range(9))
        files[f"tests/test_text_{i}.py"] = ("import unittest\n\nfrom textkit import normalise\n\n\n"
                                           f"class Text{i}(unittest.TestCase):{cases}")
    files["tests/test_reports.py"] = "import unittest\n\nimport reportlab.pdfgen\n\n\nclass Reports(unittest.TestCase):\n    pass\n"
    files["textkit.py"] = "import unicodedata\n\n\ndef normalise(text):\n    return unicodedata.normalize('NFKD', text)\n"
    files["tests/__init__.py"] = ""
    write(root, files)


def _doctest_setup(root: str) -> None:
    funcs = []
    for i in range(40):
        funcs.append(f'''
def pad_{i}(text, width={i + 4}):
    """Pad text on the left.

    >>> pad_{i}("ab")
    {("'" + " " * (i + 2) + "ab'")}
    >>> len(pad_{i}("xyz"))
    {i + 4}
    """
    return text.rjust(width)
''')
    funcs.append('''
def slugify(title):
    """A URL slug.

    >>> slugify("Hello, World")
    'hello-world'
    >>> slugify("Crème brûlée")
    'creme-brulee'
    """
    return "-".join(title.lower().replace(",", "").split())
''')
    with open(os.path.join(root, "textutil.py"), "w", encoding="utf-8") as handle:
        handle.write('"""Text helpers."""\n' + "".join(funcs))


def _django_check_setup(root: str) -> None:
    write(root, {
        "manage.py": '''
        import os
        import sys

        if __name__ == "__main__":
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_conf.settings")
            from django.core.management import execute_from_command_line
            execute_from_command_line(sys.argv)
        ''',
        "site_conf/__init__.py": "",
        "site_conf/settings.py": '''
        SECRET_KEY = "dev-only"
        DEBUG = True
        INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "shop"]
        DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
        DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
        USE_TZ = True
        ''',
        "shop/__init__.py": "",
        "shop/models.py": '''
        from django.contrib.auth.models import User
        from django.db import models


        class Customer(models.Model):
            user = models.ForeignKey(User, on_delete=models.CASCADE)
            referrer = models.ForeignKey(User, on_delete=models.SET_NULL)
            name = models.CharField(verbose_name="Kundenname")


        class Order(models.Model):
            customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
            status = models.CharField(max_length=10, choices=["open", "paid"])
            total = models.DecimalField(max_digits=8)
        ''',
    })


def _django_migrate_setup(root: str) -> None:
    _django_check_setup(root)
    write(root, {
        "shop/models.py": '''
        from django.db import models


        class Customer(models.Model):
            name = models.CharField(max_length=100)


        class Order(models.Model):
            customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
            total = models.DecimalField(max_digits=8, decimal_places=2)
        ''',
        "shop/migrations/__init__.py": "",
        "shop/migrations/0001_initial.py": '''
        from django.db import migrations, models


        class Migration(migrations.Migration):
            initial = True
            dependencies = []
            operations = [
                migrations.CreateModel("Customer", [
                    ("id", models.BigAutoField(primary_key=True)),
                    ("name", models.CharField(max_length=100)),
                ]),
                migrations.CreateModel("Order", [
                    ("id", models.BigAutoField(primary_key=True)),
                    ("customer", models.ForeignKey("shop.Customer", on_delete=models.CASCADE)),
                    ("total", models.DecimalField(max_digits=8, decimal_places=2, null=True)),
                ]),
            ]
        ''',
        "shop/migrations/0002_backfill_totals.py": '''
        from django.db import migrations


        def backfill(apps, schema_editor):
            Customer = apps.get_model("shop", "Customer")
            Order = apps.get_model("shop", "Order")
            walk_in = Customer.objects.create(name="walk-in")
            for amount in ("0.00", "12,50"):
                Order.objects.create(customer=walk_in, total=amount)


        class Migration(migrations.Migration):
            dependencies = [("shop", "0001_initial")]
            operations = [migrations.RunPython(backfill)]
        ''',
    })


def _alembic_setup(root: str) -> None:
    write(root, {
        "alembic.ini": '''
        [alembic]
        script_location = migrations
        sqlalchemy.url = sqlite:///billing.db

        [loggers]
        keys = root,sqlalchemy,alembic

        [handlers]
        keys = console

        [formatters]
        keys = generic

        [logger_root]
        level = WARNING
        handlers = console

        [logger_sqlalchemy]
        level = WARNING
        handlers =
        qualname = sqlalchemy.engine

        [logger_alembic]
        level = INFO
        handlers =
        qualname = alembic

        [handler_console]
        class = StreamHandler
        args = (sys.stderr,)
        level = NOTSET
        formatter = generic

        [formatter_generic]
        format = %(levelname)-5.5s [%(name)s] %(message)s
        ''',
        "migrations/env.py": '''
        from alembic import context
        from sqlalchemy import engine_from_config, pool
        from logging.config import fileConfig

        fileConfig(context.config.config_file_name)
        engine = engine_from_config(context.config.get_section(context.config.config_ini_section),
                                    prefix="sqlalchemy.", poolclass=pool.NullPool)
        with engine.connect() as connection:
            context.configure(connection=connection, target_metadata=None)
            with context.begin_transaction():
                context.run_migrations()
        ''',
        "migrations/script.py.mako": "",
        "migrations/versions/a1b2c3d4e5f6_create_accounts.py": '''
        """create accounts"""
        import sqlalchemy as sa
        from alembic import op

        revision = "a1b2c3d4e5f6"
        down_revision = None


        def upgrade():
            op.create_table("accounts", sa.Column("id", sa.Integer, primary_key=True), sa.Column("name", sa.String(80)))
        ''',
        "migrations/versions/b7c8d9e0f1a2_index_invoices.py": '''
        """index invoices by account"""
        from alembic import op

        revision = "b7c8d9e0f1a2"
        down_revision = "a1b2c3d4e5f6"


        def upgrade():
            op.create_index("ix_invoices_account", "invoices", ["account_id"])
        ''',
    })


def _compileall_setup(root: str) -> None:
    files = {}
    for pkg in range(12):
        for mod in range(30):
            files[f"src/pipeline/stage_{pkg:02d}/step_{mod:02d}.py"] = f"def step(x):\n    return x + {mod}\n"
        files[f"src/pipeline/stage_{pkg:02d}/__init__.py"] = ""
    files["src/pipeline/stage_07/step_19.py"] = "def step(x):\n    if x > 3\n        return x\n"
    write(root, files)


def _jinja_setup(root: str) -> None:
    write(root, {
        "render.py": '''
        import json
        import sys

        from jinja2 import Environment, FileSystemLoader, StrictUndefined


        def main():
            env = Environment(loader=FileSystemLoader("templates"), undefined=StrictUndefined)
            with open("invoice.json", encoding="utf-8") as handle:
                invoice = json.load(handle)
            sys.stdout.write(env.get_template("invoice.txt").render(invoice=invoice))


        if __name__ == "__main__":
            main()
        ''',
        "templates/base.txt": "INVOICE {{ invoice.number }}\n{% block body %}{% endblock %}\n",
        "templates/invoice.txt": '''
        {% extends "base.txt" %}
        {% import "macros.txt" as m %}
        {% block body %}
        {% for line in invoice.lines %}{{ m.line(line) }}
        {% endfor %}
        {% endblock %}
        ''',
        "templates/macros.txt": "{% macro line(l) %}{{ l.sku }}  {{ '%8.2f' % l.unit_price }} x {{ l.qty }}{% endmacro %}\n",
        "invoice.json": '{"number": "F-2026-0042", "lines": [{"sku": "A-1", "unit_price": 3.5, "qty": 2},'
                        ' {"sku": "B-7", "price": 12.0, "qty": 1}]}\n',
    })


def _venv_prep() -> list[list[str]]:
    return [[os.path.join(VENV, "bin", "python"), "-m", "venv", ".venv"]]


RECIPES = [
    Recipe(
        name="pip-install-conflict", tool="pip", category="package-manager",
        argv=["pip", "install", "--no-index", "--find-links", "wheels", "webapp==1.0.0", "reportgen==2.0.0"],
        setup=_wheels, prep=_venv_prep(), path_first=".venv/bin", version=PIP, expect_exit=1,
        signals=[
            ("stderr", r"^ERROR: Cannot install ", "what could not be installed"),
            ("stdout", r"^The conflict is caused by:$", "the conflict heading"),
            ("stdout", r"^    (webapp|reportgen) \S+ depends on corelib", "the two conflicting requirements"),
            ("stderr", r"^ERROR: ResolutionImpossible", "the error kind"),
        ],
    ),
    Recipe(
        name="pip-install-local", tool="pip", category="package-manager",
        argv=["pip", "install", "--no-index", "--find-links", "wheels", "webapp==1.0.0"],
        setup=_wheels, prep=_venv_prep(), path_first=".venv/bin", version=PIP, expect_exit=0,
        signals=[("stdout", r"^Successfully installed ", "what was installed")],
    ),
    Recipe(
        name="pip-check-broken", tool="pip", category="package-manager", argv=["pip", "check"],
        setup=_pip_check_setup, path_first=".venv/bin", version=PIP, expect_exit=1,
        prep=_venv_prep() + [[".venv/bin/pip", "install", "-q", "--no-index", "--no-deps", "--find-links", "wheels",
                              "webapp==1.0.0", "reportgen==2.0.0", "corelib==1.5.0"]],
        signals=[("stdout", r" (has requirement|requires) ", "each broken requirement")],
    ),
    Recipe(
        name="pip-list", tool="pip", category="listing", argv=["pip", "list"], setup=lambda root: None,
        version=PIP, expect_exit=0,
        signals=[("stdout", r"^Package +Version *$", "the table heading")],
    ),
    Recipe(
        name="pip-show", tool="pip", category="listing", argv=["pip", "show", "sqlalchemy", "alembic"],
        setup=lambda root: None, version=PIP, expect_exit=0,
        signals=[
            ("stdout", r"^(Name|Version): ", "each package's name and version"),
            ("stdout", r"^Requires: ", "what each requires"),
        ],
    ),
    Recipe(
        name="uv-compile-conflict", tool="uv", category="package-manager",
        argv=["uv", "pip", "compile", "requirements.in", "--no-index", "--find-links", "wheels"],
        setup=_wheels, version=["uv", "--version"], needs=("uv",), expect_exit=1,
        signals=[
            ("stderr", r"No solution found when resolving dependencies", "the failure"),
            ("stderr", r"requirements are unsatisfiable", "the conclusion"),
        ],
    ),
    Recipe(
        name="tox-run-fail", tool="tox", category="test-runner", argv=["tox", "run", "-e", "lint,unit"],
        setup=_tox_setup, version=["tox", "--version"], needs=("tox",), expect_exit=1,
        signals=[
            ("stderr", r"^FAIL: test_half_up", "the failing test"),
            ("stderr", r"^AssertionError: ", "what differed"),
            ("stderr", r"^FAILED \(failures=1\)$", "unittest's verdict"),
            ("stdout", r"^  unit: FAIL code 1", "the failing environment"),
            ("stdout", r"^  evaluation failed", "tox's verdict"),
        ],
    ),
    Recipe(
        name="nox-list", tool="nox", category="listing", argv=["nox", "--list"], setup=_nox_setup,
        version=["nox", "--version"], needs=("nox",), expect_exit=0,
        signals=[("stdout", r"^[*-] ", "each session")],
    ),
    Recipe(
        name="coverage-report", tool="coverage", category="coverage",
        argv=["coverage", "report", "-m", "--fail-under=90"], setup=_coverage_setup,
        prep=[["coverage", "run", "--source=metrics", "-m", "pytest", "-q"]],
        version=["coverage", "--version"], needs=("coverage",), expect_exit=2,
        signals=[
            ("stdout", r"^metrics/export_legacy\.py +\d+ +\d+ +0%", "the file no test runs"),
            ("stdout", r"^TOTAL ", "total coverage"),
            ("stdout", r"^Coverage failure: ", "why the command failed"),
        ],
    ),
    Recipe(
        name="sphinx-build-warnings", tool="sphinx-build", category="docs",
        argv=["sphinx-build", "-b", "html", "docs", "docs/_build/html"], setup=_sphinx_setup,
        version=["sphinx-build", "--version"], needs=("sphinx-build",), expect_exit=0,
        signals=[
            ("stderr", r"ERROR: Unknown directive type", "the error"),
            ("stderr", r"WARNING: ", "each warning (few)"),
            ("stdout", r"^build succeeded", "the verdict and warning count"),
        ],
    ),
    Recipe(
        name="mkdocs-build-strict", tool="mkdocs", category="docs", argv=["mkdocs", "build", "--strict"],
        setup=_mkdocs_setup, version=["mkdocs", "--version"], needs=("mkdocs",), expect_exit=1,
        signals=[
            ("stderr", r"^WARNING ", "each broken link"),
            ("stdout", r"Aborted with \d+ warnings in strict mode", "the verdict"),
        ],
    ),
    Recipe(
        name="pytest-xdist-failures", tool="pytest", category="test-runner", argv=["pytest", "-n", "2", "-v", "-p", "no:randomly"],
        setup=_xdist_setup, version=["pytest", "--version"], needs=("pytest",), expect_exit=1,
        signals=[
            ("stdout", r"^_+ test_(comma_decimal|currency_suffix) _+$", "each failing test's section"),
            ("stdout", r"^E +ValueError: ", "the exceptions"),
            ("stdout", r"^money\.py:\d+: ValueError$", "where they were raised"),
            ("stdout", r"^FAILED tests/test_locale\.py::", "the failed tests in the summary"),
            ("stdout", r"^=+ 2 failed, \d+ passed", "final counts"),
        ],
    ),
    Recipe(
        name="pytest-collection-error", tool="pytest", category="test-runner", argv=["pytest"],
        setup=_collection_setup, version=["pytest", "--version"], needs=("pytest",), expect_exit=2,
        signals=[
            ("stdout", r"^_+ ERROR collecting tests/test_oauth\.py _+$", "the module that failed to import"),
            ("stdout", r"^E +ModuleNotFoundError: No module named 'requests_oauthlib'$", "why"),
            ("stdout", r"^ERROR tests/test_oauth\.py", "summary entry"),
            ("stdout", r"Interrupted: 1 error during collection", "the verdict"),
        ],
    ),
    Recipe(
        name="hypothesis-falsifying", tool="pytest", category="test-runner", argv=["pytest", "-q", "tests"],
        setup=_hypothesis_setup, version=["python", "-c", "import hypothesis; print('hypothesis', hypothesis.__version__)"],
        needs=("pytest",), expect_exit=1,
        signals=[
            ("stdout", r"^E +UnicodeEncodeError: ", "the exception"),
            ("stdout", r"^E +Failing test case: test_roundtrip\($", "the failing test"),
            ("stdout", r"^E +text='", "the minimal failing input"),
            ("stdout", r"^codec\.py:\d+: UnicodeEncodeError$", "where it was raised"),
            ("stdout", r"^FAILED tests/test_codec\.py::test_roundtrip", "the failed test"),
            ("stdout", r"1 failed, 1 passed", "final counts"),
        ],
    ),
    Recipe(
        name="unittest-import-error", tool="unittest", category="test-runner",
        argv=["python", "-m", "unittest", "discover", "-s", "tests", "-t", ".", "-v"], setup=_unittest_setup,
        version=PY, expect_exit=1,
        signals=[
            ("stderr", r"^ERROR: tests\.test_reports ", "the failed module"),
            ("stderr", r"^ImportError: Failed to import test module: tests\.test_reports$", "what failed"),
            ("stderr", r"^ModuleNotFoundError: No module named 'reportlab'$", "why"),
            ("stderr", r"^Ran \d+ tests", "count"),
            ("stderr", r"^FAILED \(errors=1\)$", "the verdict"),
        ],
    ),
    Recipe(
        name="doctest-verbose", tool="doctest", category="test-runner", argv=["python", "-m", "doctest", "-v", "textutil.py"],
        setup=_doctest_setup, version=PY, expect_exit=1,
        signals=[
            ("stdout", r'^File ".*/textutil\.py", line \d+, in textutil\.slugify$', "the failing example's location"),
            ("stdout", r"^    slugify\(\"Crème brûlée\"\)$", "the failing example"),
            ("stdout", r"^    'cr", "expected and actual values"),
            ("stdout", r"^\d+ passed and 1 failed\.$", "counts"),
            ("stdout", r"^\*\*\*Test Failed\*\*\* 1 failure", "the verdict"),
        ],
    ),
    Recipe(
        name="django-check-errors", tool="django", category="framework", argv=["python", "manage.py", "check"],
        setup=_django_check_setup, version=["python", "-m", "django", "--version"], expect_exit=1,
        signals=[
            ("stderr", r"^SystemCheckError: System check identified some issues:$", "the failure"),
            ("stderr", r"^shop\.\w+\.\w+: \(fields\.E\d+\) ", "each model field error"),
            ("stderr", r"^System check identified \d+ issues", "count"),
        ],
    ),
    Recipe(
        name="django-migrate-traceback", tool="django", category="database", argv=["python", "manage.py", "migrate"],
        setup=_django_migrate_setup, version=["python", "-m", "django", "--version"], expect_exit=1,
        signals=[
            ("stdout", r"Applying shop\.0002_backfill_totals\.\.\.", "the migration that failed"),
            ("stderr", r'^  File ".*/shop/migrations/0002_backfill_totals\.py", line \d+, in backfill$', "the frame in the project's code"),
            ("stderr", r"^django\.core\.exceptions\.ValidationError: ", "the error"),
            ("stderr", r"^django\.db\.transaction\.TransactionManagementError: ", "the final exception"),
        ],
    ),
    Recipe(
        name="alembic-upgrade-error", tool="alembic", category="database", argv=["alembic", "upgrade", "head"],
        setup=_alembic_setup, version=["alembic", "--version"], needs=("alembic",), expect_exit=1,
        signals=[
            ("stderr", r"Running upgrade a1b2c3d4e5f6 -> b7c8d9e0f1a2", "the migration that failed"),
            ("stderr", r'^  File ".*/b7c8d9e0f1a2_index_invoices\.py", line \d+, in upgrade$', "the frame in the project's code"),
            ("stderr", r"^sqlalchemy\.exc\.OperationalError: \(sqlite3\.OperationalError\) no such table: ", "the error"),
            ("stderr", r"^\[SQL: ", "the statement that failed"),
        ],
    ),
    Recipe(
        name="compileall-syntax-error", tool="python", category="build", argv=["python", "-m", "compileall", "src"],
        setup=_compileall_setup, version=PY, expect_exit=1,
        signals=[
            ("stdout", r'^\*\*\*   File "src/pipeline/stage_07/step_19\.py", line \d+$', "the file and line that failed"),
            ("stdout", r"^SyntaxError: ", "the error"),
        ],
    ),
    Recipe(
        name="jinja-deep-traceback", tool="python", category="crash", argv=["python", "render.py"],
        setup=_jinja_setup, version=["python", "-c", "import jinja2; print('Jinja2', jinja2.__version__)"],
        expect_exit=1,
        signals=[
            ("stderr", r"^Traceback \(most recent call last\):$", "start of the trace"),
            ("stderr", r'^  File ".*/render\.py", line \d+, in main$', "the frame in the project's code"),
            ("stderr", r'^  File "templates/macros\.txt", line 1, in template$', "the template line that failed"),
            ("stderr", r"^jinja2\.exceptions\.UndefinedError: ", "the error"),
        ],
    ),
]


def _cprofile_setup(root: str) -> None:
    write(root, {"reconcile.py": '''
    import csv
    import io
    import random
    from decimal import Decimal


    def make_ledger(n):
        rng = random.Random(5)
        buf = io.StringIO()
        writer = csv.writer(buf)
        for i in range(n):
            writer.writerow([i, rng.choice("ABCDEFG"), f"{rng.uniform(1, 999):.2f}"])
        return buf.getvalue()


    def parse(text):
        return [(int(r[0]), r[1], Decimal(r[2])) for r in csv.reader(io.StringIO(text))]


    def totals(rows):
        out = {}
        for _, account, amount in rows:
            out[account] = out.get(account, Decimal(0)) + amount
        return out


    def reconcile(n):
        left = totals(parse(make_ledger(n)))
        right = totals(parse(make_ledger(n)))
        return sorted(k for k in left if left[k] != right[k])


    if __name__ == "__main__":
        print("mismatched accounts:", reconcile(60000))
    '''})


def _collect_setup(root: str) -> None:
    files = {"conftest.py": ""}
    for i in range(30):
        files[f"tests/unit/test_rules_{i:02d}.py"] = "".join(
            f"def test_rule_{i}_{j}():\n    assert {j} == {j}\n\n\n" for j in range(14))
    write(root, files)


RECIPES += [
    Recipe(
        name="cprofile-sorted", tool="python", category="profiler",
        argv=["python", "-m", "cProfile", "-s", "cumulative", "reconcile.py"], setup=_cprofile_setup,
        version=PY, expect_exit=0,
        signals=[
            ("stdout", r"^mismatched accounts: ", "the program's own result"),
            ("stdout", r"^ +\d+ function calls \(\d+ primitive calls\) in [\d.]+ seconds$", "total calls and time"),
            ("stdout", r"^ +ncalls +tottime +percall +cumtime +percall ", "the table heading"),
        ],
    ),
    Recipe(
        name="python-importtime", tool="python", category="profiler",
        argv=["python", "-X", "importtime", "-c", "import django.db.models"], setup=lambda root: None,
        version=PY, expect_exit=0,
        signals=[
            ("stderr", r"^import time: self \[us\] \| cumulative \| imported package$", "the table heading"),
            ("stderr", r"\| django\.db\.models$", "the module asked for, with its cumulative time"),
        ],
    ),
    Recipe(
        name="pytest-collect-only", tool="pytest", category="test-runner", argv=["pytest", "--collect-only", "-q"],
        setup=_collect_setup, version=["pytest", "--version"], needs=("pytest",), expect_exit=0,
        signals=[("stdout", r"^\d+ tests collected in ", "how many tests")],
    ),
]
