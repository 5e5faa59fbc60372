"""Masked recipes for npm tools: linkinator, jscodeshift, Bunyan, brittle, ember-template-lint, GraphQL Inspector,
npm-package-json-lint, Lerna, pug-cli, ReScript, VitePress, secretlint, solc-js, Are the Types Wrong.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from masked_common import NPM, Run, S, exits, link_node_modules, npmver, recipe, sh, vbin, write  # noqa: F401

NPM_PINS = ["linkinator@6.3.0", "jscodeshift@17.4.0", "bunyan@2.0.5", "brittle@4.1.0", "ember-template-lint@7.9.3",
            "pug-cli@1.0.0-alpha6", "rescript@12.3.1", "vitepress@1.6.4", "@graphql-inspector/cli@7.0.0",
            "graphql@16.11.0", "npm-package-json-lint@11.0.0", "secretlint@13.0.6",
            "@secretlint/secretlint-rule-preset-recommend@13.1.0", "solc@0.8.37", "@arethetypeswrong/cli@0.18.5",
            "lerna@9.0.7"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}

def _package(root: str, name: str, extra: dict | None = None, rel: str = "package.json") -> None:
    """Write a package.json called `name` (with `extra` keys) at `root/rel`."""
    write(root, rel, json.dumps({"name": name, "version": "1.0.0", **(extra or {})}, indent=2) + "\n")


def _page(n: int, links: list[str]) -> str:
    """A static documentation page linking to `links`."""
    items = "".join(f"<li><a href=\"{href}\">{href}</a></li>\n" for href in links)
    return f"<!doctype html>\n<html><head><title>Page {n}</title></head><body>\n<h1>Page {n}</h1>\n<ul>\n{items}</ul>\n</body></html>\n"


@recipe("linkinator-local-site-two-broken", "linkinator", "docs", npmver("linkinator"), needs=("linkinator",))
def _linkinator(root):
    """Write the `linkinator-local-site-two-broken` project under `root`; return its command and signals."""
    pages = 320
    write(root, "site/index.html", _page(0, [f"docs/page-{n:03d}.html" for n in range(pages)]))
    for n in range(pages):
        links = [f"page-{(n + k) % pages:03d}.html" for k in (1, 2, 5)] + [f"img/diagram-{n:03d}.svg"]
        if n == 117:
            links.append("page-117-appendix.html")
        if n == 263:
            links.append("img/diagram-263-old.svg")
        write(root, f"site/docs/page-{n:03d}.html", _page(n, links))
        write(root, f"site/docs/img/diagram-{n:03d}.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n")
    return Run(["linkinator", "site", "--recurse", "--verbosity", "info"], [
        S("stderr", r"\[404\] site/docs/(page-117-appendix\.html|img/diagram-263-old\.svg)$",
          "the two broken links among 643, listed and under their pages"),
        S("stderr", r"^site/docs/page-(117|263)\.html$", "the pages that hold them"),
        S("stderr", r"^ERROR: Detected 2 broken links\. Scanned 643 links ", "the verdict"),
    ], expect_exit=exits(1))


_TRANSFORM = """\
module.exports = function transform(file, api) {
  const j = api.jscodeshift
  const root = j(file.source)
  const calls = root.find(j.CallExpression, { callee: { name: 'fetchJson' } })
  if (calls.size() === 0) return undefined
  calls.replaceWith(path => j.callExpression(j.memberExpression(j.identifier('http'), j.identifier('getJson')),
                                             path.node.arguments))
  return root.toSource()
}
"""


@recipe("jscodeshift-codemod-one-parse-error", "jscodeshift", "build", npmver("jscodeshift"), needs=("jscodeshift",))
def _jscodeshift(root):
    """Write the `jscodeshift-codemod-one-parse-error` project under `root`; return its command and signals."""
    write(root, "transforms/get-json.js", _TRANSFORM)
    for n in range(420):
        uses = n % 3 != 0
        body = (f"const {{ fetchJson }} = require('../lib/http')\n\nasync function loadWidget{n}(id) {{\n"
                f"  const data = await {'fetchJson' if uses else 'Promise.resolve'}(`/api/widgets/${{id}}`)\n"
                f"  return {{ ...data, slot: {n} }}\n}}\n\nmodule.exports = {{ loadWidget{n} }}\n")
        write(root, f"src/widgets/widget{n:03d}.js", body)
    write(root, "src/widgets/widget288.js", "const { fetchJson } = require('../lib/http')\n\n"
          "async function loadWidget288(id) {\n  const data = await fetchJson(`/api/widgets/${id}`\n"
          "  return { ...data, slot: 288 }\n}\n\nmodule.exports = { loadWidget288 }\n")
    argv = ["jscodeshift", "-t", "transforms/get-json.js", "src", "--verbose=2", "--run-in-band", "--no-babel"]
    return Run(argv, [
        S("stdout", r" ERR src/widgets/widget288\.js ", "the one file that failed among 420"),
        S("stdout", r'^SyntaxError: Unexpected token, expected "," \(5:2\)$', "the exception"),
        S("stdout", r"^\d+ errors?$", "the count of errors"),
        S("stdout", r"^\d+ ok$", "the count changed"),
    ], expect_exit=exits(0, 1))


def _bunyan_record(n: int) -> dict:
    """One request log record of a checkout service, as Bunyan writes it."""
    sec = 1_700_000_000 + n // 4
    import datetime

    time = datetime.datetime.fromtimestamp(sec, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{n % 1000:03d}Z"
    record = {"name": "checkout", "hostname": "web-2", "pid": 4113, "req_id": f"r-{n:05d}", "level": 30,
              "route": ("/cart", "/checkout", "/products", "/search")[n % 4], "ms": n % 90 + 3, "status": 200,
              "msg": "request handled", "time": time, "v": 0}
    if n in (1873, 3398):
        record.update(level=50, status=500, msg="payment capture failed", err={
            "message": f"card processor timed out after 30000ms (order o-{n})", "name": "GatewayTimeoutError",
            "stack": f"GatewayTimeoutError: card processor timed out after 30000ms (order o-{n})\n"
                     "    at capture (/srv/checkout/lib/payments.js:88:11)\n"
                     "    at async placeOrder (/srv/checkout/routes/checkout.js:41:5)"})
    return record


@recipe("bunyan-request-log-two-errors", "bunyan", "log", npmver("bunyan"), needs=("bunyan",))
def _bunyan(root):
    """Write the `bunyan-request-log-two-errors` project under `root`; return its command and signals."""
    write(root, "logs/checkout.log", "".join(json.dumps(_bunyan_record(n)) + "\n" for n in range(4000)))
    return Run(["bunyan", "logs/checkout.log"], [
        S("stdout", r"ERROR: checkout/4113 on web-2: payment capture failed", "the two errors among 4,000 records"),
        S("stdout", r"^ +GatewayTimeoutError: card processor timed out after 30000ms \(order o-(1873|3398)\)$",
          "each error's exception"),
        S("stdout", r"at async placeOrder \(/srv/checkout/routes/checkout\.js:41:5\)$", "the service's own frame"),
    ], expect_exit=exits(0))


def _brittle_file(part: int, broken: tuple[int, int]) -> str:
    """A brittle test file of 40 tests of cart totals; `broken` (part, test) expects a wrong total."""
    tests = "".join(f"test('cart {part}-{n} totals {n + 1} items', (t) => {{\n"
                    f"  t.is(total(Array({n + 1}).fill({part + 2})), {(n + 1) * (part + 2) + (1 if (part, n) == broken else 0)})\n"
                    f"  t.ok(total([]) === 0)\n}})\n\n" for n in range(40))
    return "const test = require('brittle')\nconst { total } = require('../lib/cart')\n\n" + tests


@recipe("brittle-tap-one-failure-among-passes", "brittle", "test-runner", npmver("brittle"), needs=("brittle-node",))
def _brittle(root):
    """Write the `brittle-tap-one-failure-among-passes` project under `root`; return its command and signals."""
    _package(root, "shop-cart", {"private": True})
    link_node_modules(root)
    write(root, "lib/cart.js", "exports.total = (prices) => prices.reduce((sum, price) => sum + price, 0)\n")
    for part in range(10):
        write(root, f"test/cart-{part:02d}.test.js", _brittle_file(part, (6, 27)))
    return Run(["brittle-node", "test/*.test.js"], [
        S("stdout", r"^ *not ok \d+ - cart 6-27 totals 28 items", "the one failing test among 400"),
        S("stdout", r"^    not ok 1 - should be equal$", "its failed assertion"),
        S("stdout", r"^      (actual: 224|expected: 225)$", "what it got and wanted"),
        S("stdout", r"^      stack: \./test/cart-06\.test\.js:\d+:\d+$", "its place"),
        S("stdout", r"^# tests = 399/400 pass$", "the count"),
        S("stdout", r"^# not ok$", "the verdict"),
    ], command="brittle-node test/*.test.js", expect_exit=exits(1))


def _template(n: int, extra: str = "") -> str:
    """A Handlebars component template with bare strings, as many older templates have."""
    return (f"<section class=\"order-panel-{n}\">\n  <h2>Order summary</h2>\n  <p>Items in your basket</p>\n"
            f"  {{{{#each @items as |item|}}}}\n    <OrderLine @item={{{{item}}}} />\n  {{{{/each}}}}\n"
            f"  <button type=\"button\" {{{{on \"click\" @checkout}}}}>Checkout</button>\n{extra}</section>\n")


@recipe("ember-template-lint-warnings-two-errors", "ember-template-lint", "linter", npmver("ember-template-lint"),
        needs=("ember-template-lint",))
def _ember_template_lint(root):
    """Write the `ember-template-lint-warnings-two-errors` project under `root`; return its command and signals."""
    _package(root, "shop-ui", {"private": True})
    write(root, ".template-lintrc.js", "module.exports = {\n  extends: 'recommended',\n"
          "  rules: { 'no-bare-strings': 'warn' },\n}\n")
    for n in range(110):
        write(root, f"app/components/order-panel-{n:03d}.hbs", _template(n))
    write(root, "app/components/order-panel-038.hbs", _template(38, "  <div {{on \"click\" @toggle}}>Details</div>\n"))
    write(root, "app/components/order-panel-091.hbs", _template(91, "  {{{@item.promoHtml}}}\n"))
    return Run(["ember-template-lint", "app"], [
        S("stdout", r"^app/components/order-panel-0(38|91)\.hbs$", "the two files with an error"),
        S("stdout", r"^ +\d+:\d+ +error ", "the two errors among the warnings"),
        S("stdout", r"✖ \d+ problems \(2 errors, \d+ warnings\)", "the summary"),
    ], expect_exit=exits(1))


def _schema(fields: int, old: bool) -> str:
    """A shop's GraphQL schema; the new one adds fields, drops `Customer.phone`, makes `Order.total` nullable."""
    extra = "".join(f"  attribute{k}: String\n" for k in range(fields))
    phone = "  phone: String!\n" if old else ""
    total = "Float!" if old else "Float"
    status = "enum OrderStatus {\n  PLACED\n  PAID\n  SHIPPED\n" + ("" if old else "  RETURNED\n") + "}\n"
    types = "".join(f"type Product{t} {{\n  id: ID!\n  name: String!\n{extra if not old else ''}}}\n\n" for t in range(12))
    return (f"type Query {{\n  order(id: ID!): Order\n  customer(id: ID!): Customer\n}}\n\n"
            f"type Customer {{\n  id: ID!\n  email: String!\n{phone}}}\n\ntype Order {{\n  id: ID!\n  total: {total}\n"
            f"  status: OrderStatus!\n}}\n\n{status}\n{types}")


@recipe("graphql-inspector-diff-two-breaking", "graphql-inspector", "api", npmver("@graphql-inspector/cli"),
        needs=("graphql-inspector",))
def _graphql_inspector(root):
    """Write the `graphql-inspector-diff-two-breaking` project under `root`; return its command and signals."""
    write(root, "schema.old.graphql", _schema(20, True))
    write(root, "schema.graphql", _schema(20, False))
    link_node_modules(root)
    return Run(["graphql-inspector", "diff", "schema.old.graphql", "schema.graphql"], [
        S("stdout", r"^\[log\] ✖  Field (phone was removed from object type Customer|Order\.total changed type from "
          r"Float! to Float)$", "the two breaking changes among 243"),
        S("stdout", r"^\[error\] Detected 2 breaking changes$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("npm-package-json-lint-monorepo-two-errors", "npmPkgJsonLint", "linter", npmver("npm-package-json-lint"),
        needs=("npmPkgJsonLint",))
def _npm_package_json_lint(root):
    """Write the `npm-package-json-lint-monorepo-two-errors` project under `root`; return its command and signals."""
    write(root, ".npmpackagejsonlintrc.json", json.dumps({"rules": {
        "require-license": "error", "require-description": "warning", "require-repository": "warning",
        "require-author": "warning", "prefer-caret-version-dependencies": "warning",
        "valid-values-license": ["error", ["MIT", "Apache-2.0"]]}}, indent=2) + "\n")
    for n in range(90):
        extra = {"license": "MIT", "main": "index.js", "dependencies": {"lodash": "4.17.21", "debug": "~4.3.4"}}
        if n == 33:
            extra.pop("license")
        if n == 71:
            extra["license"] = "GPL-3.0"
        _package(root, f"@shop/pkg-{n:02d}", extra, rel=f"packages/pkg-{n:02d}/package.json")
    return Run(["npmPkgJsonLint", "packages"], [
        S("stdout", r"^\./packages/pkg-(33|71)/package\.json$", "the two packages with an error"),
        S("stdout", r"^ERROR (require-license|valid-values-license) - ", "the two errors among 360 warnings"),
        S("stdout", r"^2 errors$", "the totals' count of errors"),
    ], expect_exit=exits(2))


@recipe("lerna-run-build-one-package-fails", "lerna", "build", npmver("lerna"), needs=("lerna",))
def _lerna(root):
    """Write the `lerna-run-build-one-package-fails` project under `root`; return its command and signals."""
    parts = ["api", "auth", "billing", "cart", "catalog", "checkout", "emails", "inventory", "ledger", "orders",
             "payments", "pricing", "reports", "returns", "reviews", "search", "shipping", "tax", "users", "web"]
    _package(root, "shop", {"private": True, "workspaces": ["packages/*"]})
    write(root, "lerna.json", json.dumps({"$schema": "node_modules/lerna/schemas/lerna-schema.json",
                                          "version": "1.0.0", "npmClient": "npm"}, indent=2) + "\n")
    write(root, "nx.json", json.dumps({"targetDefaults": {"build": {"cache": False}}}, indent=2) + "\n")
    for part in parts:
        pkg = f"packages/{part}"
        _package(root, f"@shop/{part}", {"scripts": {"build": "node build.js"}}, rel=f"{pkg}/package.json")
        for k in range(25):
            write(root, f"{pkg}/src/page{k:02d}.js", f"module.exports = {{ page: '{part}-{k}', order: {k} }}\n")
        write(root, f"{pkg}/build.js", "const fs = require('fs')\nfs.mkdirSync('dist', { recursive: true })\n"
              "for (const file of fs.readdirSync('src').sort()) {\n  const mod = require('./src/' + file)\n"
              "  fs.writeFileSync('dist/' + file, 'module.exports = ' + JSON.stringify(mod) + '\\n')\n"
              "  console.log(`compiled src/${file} -> dist/${file}`)\n}\n")
    write(root, "packages/ledger/src/page14.js", "module.exports = { page: 'ledger-14', order: 14, total: sum(1, 2) }\n")
    link_node_modules(root)
    sh("git init -q . && git add -A && git -c user.name=dev -c user.email=dev@example.test commit -qm init", root)
    return Run(["lerna", "run", "build", "--concurrency", "1"], [
        S("stdout", r"^/.*/packages/ledger/src/page14\.js:1$", "the trace's start"),
        S("stdout", r"^ReferenceError: sum is not defined$", "the error"),
        S("stdout", r"\(/.*/packages/ledger/src/page14\.js:1:\d+\)$", "the package's own frame"),
        S("stdout", r"^npm error Lifecycle script `build` failed with error:$", "the script's failure"),
        S("stderr", r"Running target build for 20 projects failed$", "the verdict"),
        S("stderr", r"^- @shop/ledger:build$", "the failed task"),
    ], env={"NX_DAEMON": "false", "NX_NO_CLOUD": "true", "NX_TUI": "false", "CI": None},
               expect_exit=exits(1, 130))


@recipe("pug-render-views-one-syntax-error", "pug", "template", npmver("pug-cli"), needs=("pug",))
def _pug(root):
    """Write the `pug-render-views-one-syntax-error` project under `root`; return its command and signals."""
    for n in range(140):
        write(root, f"views/product-{n:03d}.pug", f"doctype html\nhtml\n  head\n    title Product {n}\n  body\n"
              f"    h1.title Product {n}\n    p.price= '{n * 3 + 9}.00 EUR'\n    ul.tags\n"
              f"      each tag in ['new', 'sale', 'bundle']\n        li= tag\n")
    write(root, "views/product-077.pug", "doctype html\nhtml\n  head\n    title Product 77\n  body\n"
          "    h1.title Product 77\n    p.price= '240.00 EUR'\n    ul.tags\n      each tag in ['new', 'sale'\n"
          "        li= tag\n")
    return Run(["pug", "views", "--out", "dist"], [
        S("stderr", r"^Error: views/product-077\.pug:9:33$", "the template that failed among 140, and where"),
        S("stderr", r"^  > 9\|       each tag in \['new', 'sale'$", "the line at fault"),
        S("stderr", r"^Syntax Error: Unexpected token$", "the error"),
    ], expect_exit=exits(1))


@recipe("rescript-build-type-error", "rescript", "compiler", npmver("rescript"), needs=("rescript",))
def _rescript(root):
    """Write the `rescript-build-type-error` project under `root`; return its command and signals."""
    _package(root, "shop-pricing", {"private": True})
    write(root, "rescript.json", json.dumps({"name": "shop-pricing", "sources": {"dir": "src", "subdirs": True},
                                             "package-specs": {"module": "commonjs", "in-source": True},
                                             "suffix": ".res.js"}, indent=2) + "\n")
    for n in range(12):
        write(root, f"src/Rate{n:02d}.res", f"let base = {n + 1}.5\nlet apply = (amount: float) => amount *. base\n"
              f"let label = (amount: float) => \"rate {n}: \" ++ Float.toString(apply(amount))\n")
    write(root, "src/Checkout.res", "type line = {sku: string, qty: int, price: float}\n\n"
          "let lineTotal = (line: line) => line.price *. line.qty\n\n"
          "let total = (lines: array<line>) => lines->Array.reduce(0.0, (sum, line) => sum +. lineTotal(line))\n")
    link_node_modules(root)
    return Run(["rescript", "build"], [
        S("stderr", r"We've found a bug for you!", "the error's heading"),
        S("stderr", r"/src/Checkout\.res.*:.*3:47-54", "its place"),
        S("stderr", r"^  This has type: .*int", "what is wrong"),
        S("stderr", r"^Incremental build failed\. Error: .*Failed to Compile", "the verdict"),
    ], expect_exit=exits(1))


@recipe("vitepress-build-two-dead-links", "vitepress", "docs", npmver("vitepress"), needs=("vitepress",))
def _vitepress(root):
    """Write the `vitepress-build-two-dead-links` project under `root`; return its command and signals."""
    _package(root, "shop-docs", {"private": True, "type": "module"})
    write(root, "docs/.vitepress/config.mjs", "export default {\n  title: 'Shop handbook',\n"
          "  description: 'How the shop runs',\n}\n")
    write(root, "docs/index.md", "# Shop handbook\n\n" + "".join(f"- [Chapter {n}](./guide/chapter-{n:02d})\n" for n in range(48)))
    for n in range(48):
        nxt = f"./chapter-{(n + 1) % 48:02d}"
        if n == 19:
            nxt = "./chapter-19-appendix"
        if n == 40:
            nxt = "../reference/refunds"
        write(root, f"docs/guide/chapter-{n:02d}.md", f"# Chapter {n}\n\nThis chapter covers warehouse process {n}.\n\n"
              f"## Steps\n\n1. Open the console.\n2. Pick aisle {n}.\n3. Confirm.\n\nNext: [chapter]({nxt})\n")
    link_node_modules(root)
    return Run(["vitepress", "build", "docs"], [
        S("stderr", r"^\(!\) Found dead link .* in file guide/chapter-(19|40)\.md$", "the two dead links"),
        S("stderr", r"^x Build failed in ", "the verdict"),
        S("stderr", r"^\[vitepress\] 2 dead link\(s\) found\.$", "the error"),
    ], expect_exit=exits(1))


@recipe("secretlint-two-leaked-keys", "secretlint", "linter", npmver("secretlint"), needs=("secretlint",))
def _secretlint(root):
    """Write the `secretlint-two-leaked-keys` project under `root`; return its command and signals."""
    _package(root, "shop-config", {"private": True})
    write(root, ".secretlintrc.json", json.dumps({"rules": [{"id": "@secretlint/secretlint-rule-preset-recommend"}]},
                                                 indent=2) + "\n")
    for n in range(60):
        write(root, f"config/service-{n:02d}.env", f"SERVICE_NAME=svc-{n:02d}\nPORT={8000 + n}\nLOG_LEVEL=info\n")
    write(root, "config/service-12.env", "SERVICE_NAME=svc-12\nPORT=8012\nAWS_ACCESS_KEY_ID=AKIAQX3NAQ7PZ2LFJ5WB\n"
          "AWS_SECRET_ACCESS_KEY=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\n")
    write(root, "scripts/deploy.js", "const token = 'xoxb-2048213468-1048576024803-Q9dWxNvZbJc4fTgHkLmPsRa7'\n"
          "module.exports = { token }\n")
    link_node_modules(root)
    return Run(["secretlint", "**/*"], [
        S("stdout", r"^/.*/(scripts/deploy\.js|config/service-12\.env)$", "the files with a secret"),
        S("stdout", r"^ +\d+:\d+ +error +\[", "each finding"),
        S("stdout", r"✖ \d+ problems? \(\d+ errors?, 0 warnings, 0 infos\)", "the summary"),
    ], command="secretlint '**/*'", expect_exit=exits(1))


@recipe("solcjs-compile-type-error", "solcjs", "compiler", [f"{NPM}/node_modules/.bin/solcjs", "--version"], needs=("solcjs",))
def _solcjs(root):
    """Write the `solcjs-compile-type-error` project under `root`; return its command and signals."""
    write(root, "contracts/Escrow.sol", """\
        // SPDX-License-Identifier: MIT
        pragma solidity ^0.8.20;

        contract Escrow {
            address public buyer;
            address public seller;
            uint256 public amount;
            bool public released;

            constructor(address _seller) payable {
                buyer = msg.sender;
                seller = _seller;
                amount = msg.value;
            }

            function release() external {
                require(msg.sender == buyer, "only buyer");
                released = true;
                payable(seller).transfer(amount);
            }

            function refund() external returns (bool) {
                require(!released, "already released");
                uint256 fee = amount / 100;
                payable(buyer).transfer(amount - fee);
                return fee;
            }
        }
        """)
    return Run(["solcjs", "--bin", "--abi", "-o", "build", "contracts/Escrow.sol"], [
        S("stderr", r"^TypeError: Return argument type uint256 is not implicitly convertible ", "the error"),
        S("stderr", r"^  --> contracts/Escrow\.sol:26:16:$", "its place"),
    ], expect_exit=exits(1))


@recipe("attw-pack-types-problems", "attw", "packaging", npmver("@arethetypeswrong/cli"), needs=("attw",))
def _attw(root):
    """Write the `attw-pack-types-problems` project under `root`; return its command and signals."""
    _package(root, "shop-money", {"type": "module", "main": "./dist/index.cjs", "types": "./dist/index.d.ts",
                                  "exports": {".": {"import": "./dist/index.js", "require": "./dist/index.cjs",
                                                    "types": "./dist/index.d.ts"}}, "files": ["dist"]})
    write(root, "dist/index.js", "export function cents(amount) {\n  return Math.round(amount * 100)\n}\n")
    write(root, "dist/index.cjs", "exports.cents = function cents(amount) {\n  return Math.round(amount * 100)\n}\n")
    write(root, "dist/index.d.ts", "export declare function cents(amount: number): number;\n")
    return Run(["attw", "--pack", ".", "--format", "ascii"], [
        S("stdout", r"^(🐛|👺) Import resolved to ", "the two problems found"),
        S("stdout", r"^(node16 \(from CJS\): 🐛 Used fallback condition|👺 Masquerading as ESM)$", "the resolutions they hit"),
    ], expect_exit=exits(1))
