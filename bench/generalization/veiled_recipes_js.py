"""Veiled recipes for npm tools.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from veiled_common import Run, S, exits, link_node_modules, nbin, recipe, write

NPM_PINS = ["c8@12.0.0", "@cucumber/cucumber@12.9.0", "@hapi/lab@26.0.1", "@hapi/code@9.0.3", "jscpd@5.4.2",
            "knip@6.48.0", "dependency-cruiser@17.3.9", "typedoc@0.28.20", "typescript@5.9.3", "ts-node@10.9.2",
            "browserify@17.0.1", "postcss-cli@12.0.0", "postcss@8.5.34", "stylus@0.64.0", "syncpack@13.0.4",
            "license-checker@25.0.1", "handlebars@4.7.10", "@stoplight/spectral-cli@6.16.3", "tsx@4.23.15"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}

def _package(root: str, name: str, extra: dict | None = None) -> None:
    """Write a private package.json called `name` (with `extra` keys) under `root`."""
    write(root, "package.json", json.dumps({"name": name, "version": "1.0.0", "private": True, **(extra or {})}, indent=2) + "\n")


@recipe("c8-per-file-threshold", "c8", "coverage", [nbin("c8"), "--version"], needs=("c8",))
def _c8(root):
    """Write the `c8-per-file-threshold` project under `root`; return its command and signals."""
    _package(root, "shop-lib")
    for group in ("cart", "catalog", "billing", "shipping", "users"):
        for n in range(24):
            write(root, f"src/{group}/step{n:02d}.js", f"exports.run = (x) => {{\n  if (x > {n}) {{\n    return x - {n};\n"
                  f"  }}\n  return x + {n};\n}};\n")
    write(root, "src/billing/legacyExport.js", "exports.toCsv = (rows) => {\n  const out = [];\n  for (const row of rows) {\n"
          "    out.push(Object.values(row).join(','));\n  }\n  return out.join('\\n');\n};\n")
    calls = "".join(f"require('../src/{g}/step{n:02d}.js').run({n + 1});\nrequire('../src/{g}/step{n:02d}.js').run(0);\n"
                    for g in ("cart", "catalog", "billing", "shipping", "users") for n in range(24))
    write(root, "test/run.js", "require('../src/billing/legacyExport.js');\n" + calls + "console.log('120 modules exercised');\n")
    return Run(["c8", "--all", "--src", "src", "--check-coverage", "--per-file", "--lines", "80", "node", "test/run.js"], [
        S("stdout", r"^All files +\| +99\.31 ", "the totals row"),
        S("stdout", r"^ billing +\| ", "the directory heading of the uncovered file"),
        S("stdout", r"^  legacyExport\.js +\| +28\.57 ", "the one file under the threshold among 121"),
        S("stderr", r"^ERROR: Coverage for lines \(28\.57%\) does not meet threshold \(80%\) for src/billing/legacyExport\.js$",
          "the failure"),
    ], expect_exit=exits(1))


def _feature(n: int) -> str:
    """A Gherkin feature with four checkout scenarios."""
    return (f"Feature: Checkout {n}\n\n" + "".join(
        f"  Scenario: Basket {n}-{k} totals\n    Given a basket with {k + 1} items at {n + 2} euros\n"
        f"    When the customer checks out\n    Then the total is {(k + 1) * (n + 2)} euros\n\n" for k in range(4)))


@recipe("cucumber-js-one-failing-scenario", "cucumber-js", "test-runner", [nbin("cucumber-js"), "--version"],
        needs=("cucumber-js",))
def _cucumber(root):
    """Write the `cucumber-js-one-failing-scenario` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-features")
    for n in range(30):
        write(root, f"features/checkout{n:02d}.feature", _feature(n))
    write(root, "features/checkout17.feature", _feature(17).replace("Then the total is 57 euros", "Then the total is 75 euros"))
    write(root, "features/steps/checkout.steps.js", "const assert = require('node:assert');\n"
          "const { Given, When, Then } = require('@cucumber/cucumber');\n\n"
          "Given('a basket with {int} items at {int} euros', function (count, price) {\n  this.items = Array(count).fill(price);\n});\n\n"
          "When('the customer checks out', function () {\n  this.total = this.items.reduce((a, b) => a + b, 0);\n});\n\n"
          "Then('the total is {int} euros', function (expected) {\n  assert.strictEqual(this.total, expected);\n});\n")
    return Run(["cucumber-js", "--require", "features/steps/*.js"], [
        S("stdout", r"^1\) Scenario: Basket 17-2 totals # features/checkout17\.feature:13$", "the failed scenario and its place"),
        S("stdout", r"^   ✖ Then the total is 75 euros # ", "the failed step"),
        S("stdout", r"^       AssertionError \[ERR_ASSERTION\]: ", "the assertion"),
        S("stdout", r"^ +at World\.<anonymous> \(.*/features/steps/checkout\.steps\.js:\d+:\d+\)$", "the step's own frame"),
        S("stdout", r"^120 scenarios \(1 failed, 119 passed\)$|^360 steps \(1 failed, 359 passed\)$", "the summary"),
    ], expect_exit=exits(1))


def _lab_tests(n: int, broken: int) -> str:
    """A lab experiment of five tests on invoice `n`; the `broken` one expects a wrong tax."""
    tax = n * 2 + (1 if n == broken else 0)
    return (f"experiment('invoice {n}', () => {{\n"
            + "".join(f"    it('keeps line {k}', () => {{\n        expect([{n}, {k}]).to.include({k});\n    }});\n" for k in range(4))
            + f"    it('computes the tax', () => {{\n        expect(tax({n * 10})).to.equal({tax});\n    }});\n}});\n\n")


@recipe("lab-verbose-one-failure", "lab", "test-runner", [nbin("lab"), "--version"], needs=("lab",))
def _lab(root):
    """Write the `lab-verbose-one-failure` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-invoices")
    write(root, "lib/tax.js", "exports.tax = (amount) => Math.round(amount * 0.2);\n")
    write(root, "test/invoice.js", "'use strict';\n\nconst Code = require('@hapi/code');\nconst Lab = require('@hapi/lab');\n"
          "const { tax } = require('../lib/tax');\n\nconst { expect } = Code;\nconst { experiment, it } = exports.lab = Lab.script();\n\n"
          + "".join(_lab_tests(n, 412) for n in range(700)))
    return Run(["lab", "-v", "test/invoice.js"], [
        S("stdout", r"^  ✖ 2065\) computes the tax$", "the one failing test among 3,500"),
        S("stdout", r"^  2065\) invoice 412 computes the tax:$", "the failure's heading"),
        S("stdout", r"^      Expected 824 to equal specified value: 825$", "the assertion"),
        S("stdout", r"^      at .*/test/invoice\.js:\d+:\d+$", "its place"),
        S("stdout", r"^1 of 3500 tests failed$", "the summary"),
    ], expect_exit=exits(1))


def _handler(n: int) -> str:
    """An order handler whose validation block is the same in every copy."""
    return (f"export function handle{n}(order) {{\n  if (!order) {{\n    throw new Error('missing order');\n  }}\n"
            "  if (!Array.isArray(order.lines) || order.lines.length === 0) {\n    throw new Error('order has no lines');\n  }\n"
            "  const total = order.lines.reduce((sum, line) => sum + line.price * line.qty, 0);\n"
            "  if (total < 0) {\n    throw new Error('negative total');\n  }\n"
            "  const tax = Math.round(total * 0.2);\n  const shipping = total > 50 ? 0 : 5;\n"
            f"  return {{ id: order.id, total, tax, shipping, kind: {n} }};\n}}\n")


@recipe("jscpd-duplication-threshold", "jscpd", "linter", [nbin("jscpd"), "--version"], needs=("jscpd",))
def _jscpd(root):
    """Write the `jscpd-duplication-threshold` project under `root`; return its command and signals."""
    for n in range(40):
        write(root, f"src/handlers/h{n:02d}.js", _handler(n) if n % 3 == 0 else
              f"export function handle{n}(order) {{\n  return {{ id: order.id, kind: {n} }};\n}}\n")
    return Run(["jscpd", "--threshold", "5", "--reporters", "console", "src"], [
        S("stdout", r"Found 13 clones\.", "the count"),
        S("stderr", r"^ERROR: jscpd found too many duplicates \(86\.7%\) over threshold \(5\.0%\)$", "the failure"),
    ], expect_exit=exits(1))


@recipe("knip-unused-files-exports", "knip", "linter", [nbin("knip"), "--version"], needs=("knip",))
def _knip(root):
    """Write the `knip-unused-files-exports` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-web", {"main": "src/index.js", "type": "module",
                                "dependencies": {"lodash": "^4.17.21", "left-pad": "^1.3.0"}})
    write(root, "src/index.js", "import { total } from './cart.js';\nimport { fmt } from './format.js';\n\n"
          "console.log(fmt(total([1, 2])));\n")
    write(root, "src/cart.js", "export const total = (xs) => xs.reduce((a, b) => a + b, 0);\n"
          "export const average = (xs) => total(xs) / xs.length;\n")
    write(root, "src/format.js", "export function fmt(x) {\n  return `${x} EUR`;\n}\n\nexport function fmtPercent(x) {\n"
          "  return `${x} %`;\n}\n")
    write(root, "src/legacy/oldCart.js", "export const oldTotal = () => 0;\n")
    return Run(["knip", "--no-progress"], [
        S("stdout", r"^Unused (files|dependencies|exports) \(\d\)$", "each kind of finding's heading"),
        S("stdout", r"^src/legacy/oldCart\.js$", "the unused file"),
        S("stdout", r"^(lodash|left-pad) +package\.json:\d+:\d+$", "each unused dependency"),
        S("stdout", r"^(average|fmtPercent) .*src/\w+\.js:\d+:\d+", "each unused export"),
    ], expect_exit=exits(1))


@recipe("depcruise-forbidden-dependencies", "depcruise", "linter", [nbin("depcruise"), "--version"],
        needs=("depcruise",))
def _depcruise(root):
    """Write the `depcruise-forbidden-dependencies` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-app")
    for layer, uses in (("ui", "services"), ("services", "data"), ("data", None)):
        for n in range(30):
            dep = f"require('../{uses}/{uses}{n:02d}.js');\n" if uses else ""
            write(root, f"src/{layer}/{layer}{n:02d}.js", dep + f"module.exports = {{ id: '{layer}{n}' }};\n")
    write(root, "src/data/data07.js", "require('../ui/ui03.js');\nmodule.exports = { id: 'data7' };\n")
    write(root, "src/ui/ui11.js", "require('../data/data11.js');\nmodule.exports = { id: 'ui11' };\n")
    write(root, ".dependency-cruiser.js", "module.exports = {\n  forbidden: [\n"
          "    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },\n"
          "    { name: 'ui-not-to-data', severity: 'error', from: { path: '^src/ui' }, to: { path: '^src/data' } },\n"
          "    { name: 'no-orphans', severity: 'warn', from: { orphan: true }, to: {} },\n  ],\n};\n")
    return Run(["depcruise", "src", "--config", ".dependency-cruiser.js"], [
        S("stdout", r"^  error ui-not-to-data: src/ui/ui11\.js → src/data/data11\.js$", "the violation"),
        S("stdout", r"^x 1 dependency violations \(1 errors, 0 warnings\)\. ", "the summary"),
    ], expect_exit=exits(1))


@recipe("typedoc-warnings-only", "typedoc", "docs", [nbin("typedoc"), "--version"], needs=("typedoc",))
def _typedoc(root):
    """Write the `typedoc-warnings-only` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-sdk")
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": True},
                                             "include": ["src"]}, indent=2) + "\n")
    for n in range(30):
        write(root, f"src/models/model{n:02d}.ts", f"/** Model {n} of the catalogue. */\nexport interface Model{n} {{\n"
              f"  /** Its id. */\n  id: string;\n}}\n")
    exports = "".join(f"export * from './models/model{n:02d}';\n" for n in range(30))
    write(root, "src/index.ts", exports + "interface PriceRule {\n  pct: number;\n}\n\n"
          "/**\n * Apply a discount.\n * @param price The price.\n * @param rate The rate.\n */\n"
          "export function discount(price: number, rule: PriceRule): number {\n  return price * (1 - rule.pct);\n}\n")
    return Run(["typedoc", "--out", "docs", "src/index.ts"], [
        S("stderr", r"^\[warning\] The signature discount has an @param with name \"rate\", which was not used$", "a warning, one of two"),
        S("stderr", r"^\[warning\] PriceRule, defined in .*, is referenced by discount\.rule but not included", "the other"),
        S("stderr", r"^\[warning\] Found 0 errors and 2 warnings$", "the summary"),
    ], expect_exit=exits(0))


@recipe("ts-node-type-error", "ts-node", "compiler", [nbin("ts-node"), "--version"], needs=("ts-node",))
def _ts_node(root):
    """Write the `ts-node-type-error` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-scripts")
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": True}},
                                            indent=2) + "\n")
    write(root, "scripts/reprice.ts", "interface Product {\n  sku: string;\n  price: number;\n}\n\n"
          "const products: Product[] = [{ sku: 'a1', price: 10 }, { sku: 'b2', price: 12 }];\n\n"
          "function reprice(p: Product, pct: number): Product {\n  return { ...p, price: p.price * (1 + pct) };\n}\n\n"
          "const updated = products.map((p) => reprice(p, '0.1'));\nconst first: string = updated[0].price;\n"
          "console.log(first);\n")
    return Run(["ts-node", "scripts/reprice.ts"], [
        S("stderr", r"^TSError: ⨯ Unable to compile TypeScript:$", "the error"),
        S("stderr", r"^scripts/reprice\.ts\(1[23],\d+\): error TS23\d\d: ", "each type error with its place"),
    ], expect_exit=exits(1))


@recipe("browserify-cannot-find-module", "browserify", "build", [nbin("browserify"), "--version"], needs=("browserify",))
def _browserify(root):
    """Write the `browserify-cannot-find-module` project under `root`; return its command and signals."""
    _package(root, "shop-widget")
    write(root, "src/main.js", "const cart = require('./cart');\nconst view = require('./view');\n\nview.render(cart.create());\n")
    write(root, "src/cart.js", "const { money } = require('./utils/formatt');\n\nexports.create = () => ({ total: money(0) });\n")
    write(root, "src/view.js", "exports.render = (cart) => { document.body.textContent = cart.total; };\n")
    write(root, "src/utils/format.js", "exports.money = (x) => `${x.toFixed(2)} EUR`;\n")
    return Run(["browserify", "src/main.js", "-o", "dist/bundle.js"], [
        S("stderr", r"^Error: Can't walk dependency graph: Cannot find module '\./utils/formatt' from ", "the error"),
        S("stderr", r"^    required by .*/src/cart\.js$", "the file that requires it"),
    ], expect_exit=exits(1))


@recipe("postcss-unclosed-block", "postcss", "build", [nbin("postcss"), "--version"], needs=("postcss",))
def _postcss(root):
    """Write the `postcss-unclosed-block` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-styles")
    write(root, "postcss.config.js", "const rem = () => ({\n  postcssPlugin: 'px-to-rem',\n  Declaration(decl) {\n"
          "    decl.value = decl.value.replace(/(\\d+)px/g, (_, n) => `${n / 16}rem`);\n  },\n});\nrem.postcss = true;\n\n"
          "module.exports = { plugins: [rem] };\n")
    for n in range(12):
        write(root, f"src/c{n:02d}.css", f".card-{n} {{\n  padding: {n}px;\n  color: #333;\n}}\n")
    write(root, "src/checkout.css", ".checkout {\n  display: grid;\n}\n\n.checkout .total {\n  font-weight: bold;\n\n"
          ".checkout .pay {\n  color: white;\n  background: green;\n}\n")
    return Run(["postcss", "src/*.css", "--dir", "dist"], [
        S("stderr", r"^CssSyntaxError: .*/src/checkout\.css:5:1: Unclosed block$", "the error and its place"),
        S("stderr", r"^> 5 \| \.checkout \.total \{$", "the line it points at"),
    ], command="postcss src/*.css --dir dist", expect_exit=exits(1))


@recipe("stylus-parse-error", "stylus", "build", [nbin("stylus"), "--version"], needs=("stylus",))
def _stylus(root):
    """Write the `stylus-parse-error` project under `root`; return its command and signals."""
    write(root, "styles/vars.styl", "brand = #0a7\nspacing = 8px\n")
    write(root, "styles/main.styl", "@import 'vars'\n\n.header\n  color brand\n  padding spacing * 2\n\n.cart\n"
          "  margin spacing\n  .line\n    border-bottom 1px solid lighten(brand, 40%\n\n.footer\n  color #999\n")
    return Run(["stylus", "styles/main.styl", "--out", "dist"], [
        S("stderr", r"^ParseError: styles/main\.styl:12:1$", "the error and its place"),
        S("stderr", r"^   10\|     border-bottom 1px solid lighten\(brand, 40%$", "the line with the unclosed call"),
        S("stderr", r'^expected "\)", got "outdent"$', "the parser's message"),
    ], expect_exit=exits(1))


@recipe("syncpack-version-mismatches", "syncpack", "package-manager", [nbin("syncpack"), "--version"], needs=("syncpack",))
def _syncpack(root):
    """Write the `syncpack-version-mismatches` project under `root`; return its command and signals."""
    _package(root, "shop-monorepo", {"workspaces": ["packages/*"]})
    for n in range(24):
        deps = {"lodash": "^4.17.21", "zod": "^3.23.8", "date-fns": "^3.6.0"}
        if n == 9:
            deps["zod"] = "^3.22.0"
        if n == 17:
            deps["date-fns"] = "^2.30.0"
        write(root, f"packages/pkg{n:02d}/package.json", json.dumps(
            {"name": f"@shop/pkg{n:02d}", "version": "1.0.0", "dependencies": deps}, indent=2) + "\n")
    return Run(["syncpack", "list-mismatches"], [
        S("stdout", r"^✘ (date-fns|zod) \^\d+\.\d+\.\d+ → .* packages/pkg(17|09)/package\.json > dependencies", "each mismatch"),
    ], expect_exit=exits(1))


@recipe("license-checker-one-gpl-package", "license-checker", "package-manager", [nbin("license-checker"), "--version"],
        needs=("license-checker",))
def _license_checker(root):
    """Write the `license-checker-one-gpl-package` project under `root`; return its command and signals."""
    names = [f"shop-dep-{n:04d}" for n in range(1400)]
    _package(root, "shop-app", {"license": "MIT", "dependencies": {name: "1.0.0" for name in names}})
    licences = ("MIT", "ISC", "Apache-2.0", "BSD-3-Clause", "BSD-2-Clause")
    for n, name in enumerate(names):
        licence = "GPL-3.0-only" if n == 1063 else licences[n % 5]
        write(root, f"node_modules/{name}/package.json", json.dumps(
            {"name": name, "version": f"1.{n % 7}.{n % 11}", "license": licence,
             "repository": f"https://git.example.test/shop/{name}"}) + "\n")
    return Run(["license-checker", "--production"], [
        S("stdout", r"^├─ shop-dep-1063@1\.6\.7$", "the package with the one copyleft licence among 1,400"),
        S("stdout", r"^│  ├─ licenses: GPL-3\.0-only$", "its licence"),
    ], expect_exit=exits(0))


@recipe("handlebars-precompile-parse-error", "handlebars", "build", [nbin("handlebars"), "--version"],
        needs=("handlebars",))
def _handlebars(root):
    """Write the `handlebars-precompile-parse-error` project under `root`; return its command and signals."""
    for n in range(8):
        write(root, f"templates/card{n}.hbs", f"<div class=\"card-{n}\">{{{{title}}}}</div>\n")
    write(root, "templates/cart.hbs", "<ul class=\"cart\">\n  {{#each lines}}\n    <li>{{name}}: {{price}}</li>\n"
          "    {{#if discount}}\n      <li class=\"discount\">-{{discount}}</li>\n  {{/each}}\n</ul>\n")
    return Run(["handlebars", "templates/*.hbs", "-f", "templates.js"], [
        S("stderr", r"^Error: if doesn't match each - 4:7$", "the error and its place"),
    ], command="handlebars templates/*.hbs -f templates.js", expect_exit=exits(1))


def _operation(n: int) -> str:
    """A path with one GET operation lacking a description, tags and an operationId."""
    return (f"  /catalog/items/{n}:\n    get:\n      summary: Item {n}\n      responses:\n        '200':\n"
            "          description: The item.\n          content:\n            application/json:\n"
            "              schema:\n                type: object\n")


@recipe("spectral-lint-openapi", "spectral", "linter", [nbin("spectral"), "--version"], needs=("spectral",))
def _spectral(root):
    """Write the `spectral-lint-openapi` project under `root`; return its command and signals."""
    write(root, ".spectral.yaml", "extends: ['spectral:oas']\n")
    write(root, "openapi.yaml", "openapi: 3.0.3\ninfo:\n  title: Shop catalogue\n  version: '1.0'\n"
          "servers:\n  - url: https://api.example.test\npaths:\n" + "".join(_operation(n) for n in range(70))
          + "  /catalog/orders/{orderId}:\n    get:\n      summary: An order\n      responses:\n        '200':\n"
          "          description: The order.\n          content:\n            application/json:\n              schema:\n"
          "                $ref: '#/components/schemas/Order'\ncomponents:\n  schemas:\n    Item:\n      type: object\n")
    return Run(["spectral", "lint", "openapi.yaml"], [
        S("stdout", r"^/.*/openapi\.yaml$", "the file's heading"),
        S("stdout", r"^ *\d+:\d+ +error +(path-params|invalid-ref) ", "the two errors among 216 warnings"),
        S("stdout", r"^✖ 218 problems \(2 errors, 216 warnings, 0 infos, 0 hints\)$", "the summary"),
    ], expect_exit=exits(1))


@recipe("tsx-unhandled-rejection", "tsx", "crash", [nbin("tsx"), "--version"], needs=("tsx",))
def _tsx(root):
    """Write the `tsx-unhandled-rejection` project under `root`; return its command and signals."""
    _package(root, "shop-worker", {"type": "module"})
    write(root, "src/queue.ts", "export interface Job {\n  id: number;\n  payload: { sku?: string };\n}\n\n"
          "export async function* jobs(): AsyncGenerator<Job> {\n  for (let id = 1; id <= 40; id++) {\n"
          "    yield { id, payload: id === 27 ? {} : { sku: `sku-${id}` } };\n  }\n}\n")
    write(root, "src/worker.ts", "import { jobs, type Job } from './queue.js';\n\n"
          "async function reserve(job: Job): Promise<string> {\n  const sku = job.payload.sku!;\n"
          "  return sku.toUpperCase();\n}\n\nfor await (const job of jobs()) {\n  const reserved = await reserve(job);\n"
          "  console.log(`job ${job.id}: reserved ${reserved}`);\n}\n")
    return Run(["tsx", "src/worker.ts"], [
        S("stderr", r"^/.*/src/worker\.ts:5$", "the crash's place"),
        S("stderr", r"^TypeError: Cannot read properties of undefined \(reading 'toUpperCase'\)$", "the exception"),
        S("stderr", r"^    at reserve \(.*/src/worker\.ts:5:14\)$", "the top frame, in the project's code"),
    ], expect_exit=exits(1))
