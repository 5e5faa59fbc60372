"""Recipes for Python tools: linters, type checkers, formatters, test runners, packaging, docs, frameworks.

Each project is small but realistic, with errors seeded where a developer would make them;
the signals are the lines a reader of the output needs to act on, written from the output.
"""

from __future__ import annotations

import os

from scripting_common import Recipe, write

PY = ["python", "--version"]


def _inventory_module(index: int, with_error: str = "") -> str:
    """A plausible module with the style problems linters report on every file."""
    body = f'''
    import os
    import sys
    import json
    from collections import defaultdict


    class Item{index}:
        def __init__(self, sku, name, qty, price, warehouse, tags):
            self.sku = sku
            self.name = name
            self.qty = qty
            self.price = price
            self.warehouse = warehouse
            self.tags = tags

        def total(self):
            return self.qty * self.price

        def Describe(self):
            l = []
            for t in self.tags:
                l.append(t)
            return "%s (%s) x%d" % (self.name, ",".join(l), self.qty)


    def load_items_{index}(path, warehouse, default=[]):
        data = json.load(open(path))
        result = default
        for row in data:
            if row["qty"] == None:
                continue
            result.append(Item{index}(row["sku"], row["name"], row["qty"], row["price"], warehouse, row.get("tags", [])))
        return result


    def summarize_{index}(items):
        by_wh = defaultdict(int)
        for it in items:
            by_wh[it.warehouse] += it.total()
        return dict(by_wh)
    '''
    return body + with_error


def _pylint_setup(root: str) -> None:
    files = {"src/inventory/__init__.py": '"""Inventory tools."""\n'}
    for i in range(14):
        files[f"src/inventory/stock_{i:02d}.py"] = _inventory_module(i)
    files["src/inventory/orders.py"] = _inventory_module(20, '''

    def reorder(items):
        """Items that need reordering."""
        return [it for it in items if it.qty < REORDER_LEVEL]
    ''')
    files["src/inventory/pricing.py"] = _inventory_module(21, '''

    def price_list(path):
        """Prices by SKU from a JSON file."""
        with open(path, encoding="utf-8") as handle:
            return json.loadz(handle)
    ''')
    write(root, files)


def _flake8_setup(root: str) -> None:
    files = {"setup.cfg": "[flake8]\nmax-line-length = 100\n"}
    for i in range(12):
        files[f"src/billing/part_{i:02d}.py"] = _inventory_module(i)
    files["src/billing/invoice.py"] = '''
    """Invoices."""


    def render(invoice, lines=[]):
        """Render an invoice as text."""
        total = sum(l.amount for l in lines)
        return TEMPLATE.format(number=invoice.number, total=total)


    def due_date(invoice):
        """When the invoice is due."""
        return invoice.issued + timedelta(days=invoice.terms)
    '''
    write(root, files)


def _typed_project(root: str) -> None:
    write(root, {
        "app/__init__.py": "",
        "app/models.py": '''
        from dataclasses import dataclass


        @dataclass
        class User:
            id: int
            email: str
            display_name: str | None = None


        @dataclass
        class Order:
            id: int
            user: User
            total_cents: int
            note: str = ""
        ''',
        "app/service.py": '''
        from app.models import Order, User


        def find_user(users: list[User], email: str) -> User:
            for user in users:
                if user.email == email:
                    return user
            return None


        def order_total(orders: list[Order]) -> int:
            return sum(o.total for o in orders)


        def greeting(user: User) -> str:
            return "Hello, " + user.display_name


        def make_order(user: User, cents: str) -> Order:
            return Order(id=1, user=user, total_cents=cents)
        ''',
        "app/report.py": '''
        from app.models import Order
        from app.service import order_total


        def render(orders: list[Order]) -> str:
            lines = [f"{o.id}: {o.total_cents / 100:.2f}" for o in orders]
            lines.append("total " + order_total(orders))
            return "\\n".join(lines)


        def first_note(orders: list[Order]) -> str:
            return orders[0].notes
        ''',
        "pyrightconfig.json": '{"include": ["app"], "pythonVersion": "3.11"}\n',
    })


def _black_setup(root: str) -> None:
    files = {}
    for i in range(30):
        files[f"src/etl/step_{i:02d}.py"] = (
            f'"""Step {i}."""\n\n\ndef run_{i}(rows):\n    """Run step {i}."""\n    return [r for r in rows if r]\n')
    messy = '''
    import os,sys
    def transform(rows,mapping = {},*,strict=False):
        out=[]
        for r in rows :
            key=mapping.get(r['kind'],r['kind'])
            if strict and key not in mapping: raise KeyError( key )
            out.append({ 'kind':key,'value':r['value']*2,'source':os.path.basename(r["path"]) })
        return out
    class Loader :
        def __init__(self,path) :
            self.path=path
        def read(self):
            with open(self.path) as f: return [ l.strip() for l in f if l.strip()!='' ]
    '''
    for i in (3, 7, 11, 18, 22, 27):
        files[f"src/etl/step_{i:02d}.py"] = messy.replace("transform", f"transform_{i}")
    write(root, files)


def _isort_setup(root: str) -> None:
    files = {}
    for i in range(20):
        files[f"src/api/view_{i:02d}.py"] = "import json\nimport os\n\nfrom api import models\n\nVALUE = 1\n"
    for i in (4, 9, 15):
        files[f"src/api/view_{i:02d}.py"] = "import os\nfrom api import models\nimport json\nimport sys, re\n\nVALUE = 1\n"
    files["src/api/__init__.py"] = ""
    files["src/api/models.py"] = "VALUE = 1\n"
    write(root, files)


def _bandit_setup(root: str) -> None:
    files = {"src/deploy/__init__.py": ""}
    for i in range(10):
        files[f"src/deploy/task_{i:02d}.py"] = f'''
        import subprocess


        def check_{i}(host, port):
            assert host, "host required"
            assert port > 0
            result = subprocess.run(["ping", "-c", "1", host], capture_output=True)
            assert result.returncode == 0
            return result.stdout
        '''
    files["src/deploy/remote.py"] = '''
    import subprocess


    def run_remote(host, command):
        return subprocess.call("ssh %s %s" % (host, command), shell=True)
    '''
    files["src/deploy/tokens.py"] = '''
    import hashlib
    import random


    def session_token(user):
        return hashlib.md5((user + str(random.random())).encode()).hexdigest()
    '''
    write(root, files)


def _vulture_setup(root: str) -> None:
    files = {}
    for i in range(8):
        files[f"src/shop/util_{i}.py"] = f'''
        import os
        import re


        def used_{i}(x):
            return x + 1


        def legacy_format_{i}(value, width):
            return str(value).rjust(width)


        class Cache{i}:
            def __init__(self):
                self.hits = 0
                self.misses = 0

            def clear(self):
                self.hits = 0
        '''
    files["src/shop/checkout.py"] = '''
    from shop.util_0 import used_0


    def checkout(cart):
        total = used_0(len(cart))
        return total
        print("checked out", total)
    '''
    write(root, files)


def _pydocstyle_setup(root: str) -> None:
    files = {}
    for i in range(16):
        files[f"src/geo/shape_{i:02d}.py"] = _inventory_module(i)
    files["src/geo/projection.py"] = """
    '''Map projections.'''


    def mercator(lat, lon):
        '''Project a latitude and longitude.'''
        return lon, lat
    """
    write(root, files)


def _ruff_format_setup(root: str) -> None:
    files = {}
    for i in range(40):
        files[f"pkg/mod_{i:02d}.py"] = f"def f_{i}(x):\n    return x * {i}\n"
    for i in (5, 21, 33):
        files[f"pkg/mod_{i:02d}.py"] = f"def f_{i}( x ):\n  return x*{i}\n"
    write(root, files)


RECIPES = [
    Recipe(
        name="pylint-project", tool="pylint", category="linter", argv=["pylint", "src/inventory"],
        setup=_pylint_setup, version=["pylint", "--version"], needs=("pylint",),
        signals=[
            ("stdout", r"^\*+ Module inventory\.(orders|pricing)$", "module heading of each error"),
            ("stdout", r": E\d{4}: ", "each error (undefined name, no member)"),
            ("stdout", r"^Your code has been rated at ", "final rating"),
        ],
    ),
    Recipe(
        name="flake8-plugins", tool="flake8", category="linter", argv=["flake8", "--count", "src"],
        setup=_flake8_setup, version=["flake8", "--version"], needs=("flake8",),
        signals=[
            ("stdout", r": F821 undefined name ", "undefined names: the real bugs among style findings"),
            ("stdout", r"^\d+$", "the total count"),
        ],
    ),
    Recipe(
        name="pyright-errors", tool="pyright", category="type-checker", argv=["pyright"],
        setup=_typed_project, version=["pyright", "--version"], needs=("pyright",),
        signals=[
            ("stdout", r"^/tmp/yarp-gen/work/scripting/pyright-errors/app/\w+\.py$", "file heading of the errors"),
            ("stdout", r" - error: ", "each type error with file:line"),
            ("stdout", r"^\d+ errors?, \d+ warnings?, \d+ informations? ?$", "summary"),
        ],
    ),
    Recipe(
        name="mypy-errors", tool="mypy", category="type-checker", argv=["mypy", "app"],
        setup=_typed_project, version=["mypy", "--version"], needs=("mypy",),
        signals=[
            ("stdout", r"^app/\w+\.py:\d+: error: ", "each type error with file:line"),
            ("stdout", r"^Found \d+ errors? in \d+ files?", "summary"),
        ],
    ),
    Recipe(
        name="black-check-diff", tool="black", category="formatter", argv=["black", "--check", "--diff", "src"],
        setup=_black_setup, version=["black", "--version"], needs=("black",),
        signals=[
            ("stderr", r"^would reformat ", "each file that needs formatting"),
            ("stderr", r"files? would be reformatted", "summary"),
        ],
    ),
    Recipe(
        name="isort-check", tool="isort", category="formatter", argv=["isort", "--check-only", "src"],
        setup=_isort_setup, version=["isort", "--version-number"], needs=("isort",),
        signals=[("stderr", r"^ERROR: .* Imports are incorrectly sorted", "each unsorted file")],
    ),
    Recipe(
        name="bandit-scan", tool="bandit", category="linter", argv=["bandit", "-r", "src"],
        setup=_bandit_setup, version=["bandit", "--version"], needs=("bandit",),
        signals=[
            ("stdout", r">> Issue: \[B(602|324):", "the high-severity issues"),
            ("stdout", r"Location: src/deploy/(remote\.py:5:11|tokens\.py:6:11)$", "where the high-severity issues are"),
            ("stdout", r"^\t\tHigh: [1-9]", "count of high-severity issues"),
        ],
    ),
    Recipe(
        name="vulture-dead-code", tool="vulture", category="linter", argv=["vulture", "src"],
        setup=_vulture_setup, version=["vulture", "--version"], needs=("vulture",),
        signals=[("stdout", r"unreachable code after 'return' \(100% confidence\)", "the certain finding")],
    ),
    Recipe(
        name="pydocstyle-src", tool="pydocstyle", category="linter", argv=["pydocstyle", "src"],
        setup=_pydocstyle_setup, version=["pydocstyle", "--version"], needs=("pydocstyle",),
        signals=[
            ("stdout", r"^src/geo/projection\.py:\d+ ", "the file of the rare finding"),
            ("stdout", r"D300: Use \"\"\"triple double quotes\"\"\"", "the one finding of a different kind"),
        ],
    ),
    Recipe(
        name="ruff-format-check", tool="ruff", category="formatter", argv=["ruff", "format", "--check", "pkg"],
        setup=_ruff_format_setup, version=["ruff", "--version"], needs=("ruff",),
        signals=[
            ("stdout", r"^ --> pkg/mod_\d+\.py:\d+:\d+$", "each file that needs formatting"),
            ("stdout", r"files? would be reformatted", "summary"),
        ],
    ),
]

from scripting_recipes_py2 import RECIPES as _MORE  # noqa: E402

RECIPES = RECIPES + _MORE
