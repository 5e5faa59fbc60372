"""Shrouded recipes for npm tools: Nx, gulp, Newman, http-server, the Nu HTML Checker (vnu-jar), doiuse,
type-coverage, Redocly CLI, StrykerJS, PM2, tsd, es-check, markuplint, poku.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from shrouded_common import Run, S, exits, link_node_modules, nbin, npmver, recipe, sh, wait_port, write

NPM_PINS = ["nx@24.0.7", "gulp@5.0.1", "newman@6.2.2", "pm2@7.0.4", "http-server@14.1.1", "vnu-jar@26.9.27",
            "doiuse@6.0.6", "type-coverage@2.30.3", "typescript@5.9.3", "@redocly/cli@2.77.0", "tsd@0.33.0",
            "markuplint@4.18.3", "npm-run-all2@9.0.4", "es-check@9.9.1", "@stryker-mutator/core@9.6.1",
            "poku@4.5.0"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}

def _package(root: str, name: str, extra: dict | None = None, rel: str = "package.json") -> None:
    """Write a private package.json called `name` (with `extra` keys) at `root/rel`."""
    write(root, rel, json.dumps({"name": name, "version": "1.0.0", "private": True, **(extra or {})}, indent=2) + "\n")

_NX_PARTS = ("cart", "catalog", "pricing", "search", "users", "orders", "billing", "tax", "shipping", "returns", "reviews",
             "coupons", "stock", "mail", "reports", "auth", "media", "ledger")


@recipe("nx-run-many-build-one-fails", "nx", "build", npmver("nx"), needs=("nx",))
def _nx(root):
    """Write the `nx-run-many-build-one-fails` project under `root`; return its command and signals."""
    _package(root, "shop-workspace", {"workspaces": ["packages/*"]})
    write(root, "nx.json", json.dumps({"$schema": "./node_modules/nx/schemas/nx-schema.json",
                                       "targetDefaults": {"build": {"cache": False}}}, indent=2) + "\n")
    for part in _NX_PARTS:
        pkg = f"packages/{part}"
        _package(root, f"@shop/{part}", {"scripts": {"build": "node build.js"}}, rel=f"{pkg}/package.json")
        for k in range(30):
            write(root, f"{pkg}/src/mod{k:02d}.js", f"module.exports = {{ id: '{part}-{k}', weight: {k} }}\n")
        write(root, f"{pkg}/build.js", "const fs = require('fs')\nfs.mkdirSync('dist', { recursive: true })\n"
              "for (const file of fs.readdirSync('src').sort()) {\n  const mod = require('./src/' + file)\n"
              "  fs.writeFileSync('dist/' + file, 'module.exports = ' + JSON.stringify(mod) + '\\n')\n"
              "  console.log(`bundled src/${file} -> dist/${file} (${mod.id})`)\n}\nconsole.log('build finished')\n")
    write(root, "packages/shipping/src/mod09.js", "const zones = require('./zones.json')\n"
          "module.exports = { id: 'shipping-9', zones }\n")
    link_node_modules(root)
    sh("git init -q . && git add -A && git -c user.name=dev -c user.email=dev@example.test commit -qm init", root)
    return Run(["nx", "run-many", "-t", "build", "--parallel=1", "--output-style=stream"], [
        S("stderr", r"^@shop/shipping: node:internal/modules/cjs/loader:\d+$", "the trace's start"),
        S("stderr", r"^@shop/shipping: Error: Cannot find module '\./zones\.json'$", "the error in the one failed project"),
        S("stderr", r"at Object\.<anonymous> \(.*/packages/shipping/src/mod09\.js:1:15\)$", "the project's own frame"),
        S("stderr", r"npm error Lifecycle script `build` failed with error:$", "the script's failure"),
    ], env={"NX_DAEMON": "false", "NX_NO_CLOUD": "true", "NX_TUI": "false"},
               expect_exit=exits(1))


def _gulp_task(name: str, files: int) -> str:
    """A gulp task that 'processes' `files` files, logging each."""
    return (f"function {name}(done) {{\n  for (let i = 0; i < {files}; i++) {{\n"
            f"    console.log(`{name}: wrote dist/{name}/part-${{String(i).padStart(3, '0')}}.out`)\n  }}\n  done()\n}}\n\n")


@recipe("gulp-series-one-task-errors", "gulp", "build", npmver("gulp"), needs=("gulp",))
def _gulp(root):
    """Write the `gulp-series-one-task-errors` project under `root`; return its command and signals."""
    _package(root, "shop-assets")
    link_node_modules(root)
    names = ["clean", "fonts", "icons", "sprites", "vendor", "styles", "scripts", "templates", "locales", "manifest",
             "images", "sitemap", "feeds", "robots", "favicons", "serviceWorker"]
    tasks = "".join(_gulp_task(n, 45) for n in names if n != "manifest")
    tasks += ("function manifest(done) {\n  const fs = require('fs')\n  const assets = JSON.parse(fs.readFileSync('assets.json', 'utf8'))\n"
              "  console.log(`manifest: ${Object.keys(assets).length} assets`)\n  done()\n}\n\n")
    write(root, "assets.json", '{\n  "app.css": "app.3f2a.css",\n  "app.js": "app.9b1c.js",\n}\n')
    write(root, "gulpfile.js", "const { series, parallel } = require('gulp')\n\n" + tasks
          + f"exports.build = series({', '.join(names)})\n")
    return Run(["gulp", "build"], [
        S("stderr", r"'manifest' errored after", "the failed task"),
        S("stderr", r"\] SyntaxError: Expected double-quoted property name in JSON at position \d+$", "the error"),
        S("stderr", r"at manifest \(.*/gulpfile\.js:\d+:\d+\)$", "the project's own frame"),
        S("stderr", r"'build' errored after", "the build's failure"),
    ], expect_exit=exits(1))


_ORDERS_SERVER = """\
const http = require('http')
const missing = new Set([212])
http.createServer((req, res) => {
  const id = Number(req.url.split('/').pop())
  if (req.url.startsWith('/orders/') && missing.has(id)) {
    res.writeHead(404, { 'Content-Type': 'application/json' })
    return res.end(JSON.stringify({ error: 'not found' }))
  }
  const total = id === 377 ? String(id * 3) : id * 3
  res.writeHead(200, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify({ id, status: 'paid', total }))
}).listen(PORT, '127.0.0.1')
"""


def _newman_item(n: int) -> dict:
    """One request of the collection, with its test script."""
    tests = ["pm.test('status is 200', () => pm.response.to.have.status(200))",
             "pm.test('total is a number', () => pm.expect(pm.response.json().total).to.be.a('number'))"]
    return {"name": f"get order {n}", "request": {"method": "GET", "url": f"http://127.0.0.1:18973/orders/{n}"},
            "event": [{"listen": "test", "script": {"type": "text/javascript", "exec": tests}}]}


@recipe("newman-collection-three-assertions-fail", "newman", "test-runner", [nbin("newman"), "--version"], needs=("newman",))
def _newman(root):
    """Write the `newman-collection-three-assertions-fail` project under `root`; return its command and signals."""
    write(root, "server.js", _ORDERS_SERVER.replace("PORT", "18973"))
    collection = {"info": {"name": "Orders API", "schema": "https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
                  "item": [{"name": "Orders", "item": [_newman_item(n) for n in range(100, 400)]}]}
    write(root, "orders.postman_collection.json", json.dumps(collection, indent=1) + "\n")
    argv = ["newman", "run", "orders.postman_collection.json", "--disable-unicode"]
    command = (f"node server.js & server=$!; {wait_port(18973)}" + " ".join(argv)
               + "; status=$?; kill $server; wait $server 2>/dev/null; exit $status")
    return Run(argv, [
        S("stdout", r"^  GET http://127\.0\.0\.1:18973/orders/212 \[404 Not Found, ", "the one request that failed"),
        S("stdout", r"^\|\s+assertions \|\s+600 \|\s+3 \|$", "the count of failed assertions"),
        S("stdout", r"^  #  failure +detail", "the failures' heading"),
        S("stdout", r"^ \d\.  AssertionError  (status is 200|total is a number) *$", "the three failed assertions among 600"),
        S("stdout", r"^ +expected (response to have status code 200 but got 404|undefined to be a number|'1131' to be a number) *$",
          "why each failed"),
        S("stdout", r'^ +inside "Orders / get order (212|377)" *$', "where each failed"),
    ], command=command, expect_exit=exits(1))


@recipe("http-server-access-log-404s", "http-server", "log", [nbin("http-server"), "--version"], needs=("http-server",))
def _http_server(root):
    """Write the `http-server-access-log-404s` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"site/products/p{n:03d}.html", f"<!doctype html><title>Product {n}</title><link rel=stylesheet href=/css/site.css>\n")
    write(root, "site/css/site.css", "body { margin: 0 }\n")
    for n in range(60):
        write(root, f"site/img/p{n:03d}.png", "png\n")
    write(root, "crawl.js", "const http = require('http')\nconst paths = []\nfor (let round = 0; round < 6; round++) {\n"
          "  for (let n = 0; n < 120; n++) paths.push(`/products/p${String(n).padStart(3, '0')}.html`, '/css/site.css',\n"
          "    `/img/p${String(n % 60).padStart(3, '0')}.png`)\n}\n"
          "paths.splice(1311, 0, '/img/p060.png')\npaths.splice(1702, 0, '/products/p120.html')\n"
          "paths.splice(2007, 0, '/css/print.css')\n"
          "const get = path => new Promise(resolve => http.get({ host: '127.0.0.1', port: 18979, path }, res => {\n"
          "  res.resume(); res.on('end', () => resolve(res.statusCode)) }))\n"
          ";(async () => {\n  let missing = 0\n  for (const p of paths) if ((await get(p)) === 404) missing++\n"
          "  console.log(`crawl: ${paths.length} requests, ${missing} not found`)\n})()\n")
    argv = ["http-server", "site", "-a", "127.0.0.1", "-p", "18979", "-c-1"]
    command = (" ".join(argv) + f" & server=$!; {wait_port(18979)}node crawl.js; kill $server; wait $server 2>/dev/null; exit 0")
    return Run(argv, [
        S("stdout", r'"GET /(img/p060\.png|products/p120\.html|css/print\.css)" Error \(404\): "Not found"$',
          "the three missing files among 2,163 requests"),
        S("stdout", r"^crawl: 2163 requests, 3 not found$", "the crawl's summary"),
    ], command=command, expect_exit=exits(0))


def _page(n: int, body: str = "") -> str:
    """A product page in the shop's old templates: self-closed void elements, an untitled section."""
    items = "".join(f"<li><img src=\"/img/p{n}-{k}.png\" alt=\"Photo {k}\" /></li>\n" for k in range(6))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>Product {n}</title>\n"
            f"<link rel=\"stylesheet\" href=\"/css/site.css\" type=\"text/css\" />\n</head>\n<body>\n<section>\n"
            f"<ul>\n{items}</ul>\n</section>\n{body}</body>\n</html>\n")


@recipe("vnu-html-checker-two-errors", "vnu", "linter", [nbin("vnu"), "--version"], needs=("vnu", "java"))
def _vnu(root):
    """Write the `vnu-html-checker-two-errors` project under `root`; return its command and signals."""
    for n in range(60):
        write(root, f"site/p{n:02d}.html", _page(n))
    write(root, "site/p23.html", _page(23, "<p>Sizes<table><tr><td>S<td>M</table>\n<div id=\"buy\"><a href=\"/cart\"><button>Add</button></a></div>\n"))
    write(root, "site/p47.html", _page(47, "<form action=\"/cart\"><input type=\"number\" name=\"qty\" min=\"1\" id=\"buy\">\n"
                                           "<label for=\"qty-47\">Qty</label></form>\n"))
    return Run(["vnu", "site/*.html"], [
        S("stderr", r'p(23|47)\.html":\d+\.\d+-\d+\.\d+: error: ', "the errors among the warnings and info messages"),
    ], command="vnu site/*.html", expect_exit=exits(1))


def _styles(n: int) -> str:
    """A component stylesheet laid out with flexbox gaps and logical properties."""
    return "".join(f".card-{n}-{k} {{\n  display: flex;\n  gap: 8px;\n  margin-inline: auto;\n  padding-block: 4px;\n}}\n\n"
                   for k in range(5))


@recipe("doiuse-browser-support-one-has-selector", "doiuse", "linter", npmver("doiuse"), needs=("doiuse",))
def _doiuse(root):
    """Write the `doiuse-browser-support-one-has-selector` project under `root`; return its command and signals."""
    for n in range(40):
        write(root, f"styles/card{n:02d}.css", _styles(n))
    write(root, "styles/card31.css", _styles(31) + ".card-31-list:has(> .card-31-sold) {\n  opacity: 0.5;\n}\n")
    return Run(["doiuse", "--browsers", "safari >= 13, ios_saf >= 13", "styles/*.css"], [
        S("stdout", r"card31\.css:\d+:\d+: .*(:has|css-has)", "the one finding of another kind among hundreds"),
    ], command="doiuse --browsers 'safari >= 13, ios_saf >= 13' styles/*.css", expect_exit=exits(0, 1))


@recipe("type-coverage-detail-below-target", "type-coverage", "type-checker", [nbin("type-coverage"), "--version"],
        needs=("type-coverage",))
def _type_coverage(root):
    """Write the `type-coverage-detail-below-target` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": False, "target": "ES2020", "module": "commonjs",
                                                                 "noEmit": True}, "include": ["src"]}, indent=2) + "\n")
    for n in range(40):
        write(root, f"src/orders{n:02d}.ts", "".join(
            f"export function total{n}_{k}(items: {{ price: number; qty: number }}[]): number {{\n"
            f"  return items.reduce((sum, item) => sum + item.price * item.qty, 0)\n}}\n\n" for k in range(8)))
    write(root, "src/legacy.ts", "".join(f"export function parse{k}(raw) {{\n  const data = JSON.parse(raw)\n"
                                         f"  return data.items.map(item => item.price * data.rate)\n}}\n\n" for k in range(30)))
    return Run(["type-coverage", "--detail", "--at-least", "99"], [
        S("stdout", r"^\(4280 / 4580\) 93\.44%$", "the coverage count"),
        S("stdout", r"^The type coverage rate\([\d.]+%\) is lower than the target\(99%\)", "the verdict"),
    ], expect_exit=exits(1))


def _openapi(paths: str) -> str:
    """An OpenAPI document around `paths`."""
    return ("openapi: 3.1.0\ninfo:\n  title: Shop API\n  version: 2.3.0\n  license:\n    name: MIT\n"
            "    url: https://opensource.org/licenses/MIT\nservers:\n  - url: https://api.shop.example/v2\nsecurity: []\n"
            "paths:\n" + paths)


def _operation(resource: str, n: int, op_id: str = "") -> str:
    """A path with one GET operation that has a summary but no 4XX response."""
    return (f"  /{resource}/{n}:\n    get:\n      operationId: {op_id or f'get{resource.title()}{n}'}\n"
            f"      summary: Read {resource} {n}\n      responses:\n        '200':\n          description: The {resource}\n")


@recipe("redocly-lint-warnings-two-errors", "redocly", "linter", [nbin("redocly"), "--version"], needs=("redocly",))
def _redocly(root):
    """Write the `redocly-lint-warnings-two-errors` project under `root`; return its command and signals."""
    paths = "".join(_operation(r, n) for r in ("orders", "carts", "products") for n in range(30))
    paths += _operation("refunds", 1, op_id="getOrders7")
    paths += ("  /refunds/{refundId}/lines:\n    get:\n      operationId: listRefundLines\n      summary: Refund lines\n"
              "      responses:\n        '200':\n          description: The lines\n")
    write(root, "openapi.yaml", _openapi(paths))
    return Run(["redocly", "lint", "openapi.yaml"], [
        S("stdout", r"^\[[12]\] openapi\.yaml:\d+:\d+ at #/paths/~1refunds~1", "the two errors' places"),
        S("stdout", r"^Every operation must have a unique `operationId`\.$|^The operation does not define the path parameter ",
          "the two errors' messages"),
        S("stdout", r"^Error was generated by the [\w-]+ rule\.$", "the two errors among 92 warnings"),
        S("stderr", r"Validation failed with 2 errors and 92 warnings\.$", "the summary"),
    ], env={"REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"}, expect_exit=exits(1))


def _fees_module(n: int) -> str:
    """A CommonJS module of fee rules with branches and arithmetic to mutate."""
    funcs = "".join(f"function fee{k}(amount, member) {{\n  if (amount > {100 + k * 10}) {{\n    return member ? amount * 0.0{k + 1} : "
                    f"amount * 0.0{k + 2}\n  }}\n  return amount < {k + 5} ? 0 : {k + 1}\n}}\n\n" for k in range(6))
    return funcs + f"module.exports = {{ {', '.join(f'fee{k}' for k in range(6))} }}\n"


@recipe("stryker-mutation-score-below-break", "stryker", "test-runner", npmver("@stryker-mutator/core"), needs=("stryker",))
def _stryker(root):
    """Write the `stryker-mutation-score-below-break` project under `root`; return its command and signals."""
    _package(root, "shop-fees", {"scripts": {"test": "node --test"}})
    link_node_modules(root)
    for n in range(8):
        write(root, f"src/fees{n}.js", _fees_module(n))
        if n != 5:
            checks = "".join(f"  assert.equal(fees.fee{k}({200 + k * 10}, true) > 0, true)\n  assert.equal(fees.fee{k}(1, false), 0)\n"
                             for k in range(6))
            write(root, f"test/fees{n}.test.js", "const test = require('node:test')\nconst assert = require('node:assert')\n"
                  f"const fees = require('../src/fees{n}.js')\n\ntest('fees{n}', () => {{\n{checks}}})\n")
    write(root, "stryker.config.json", json.dumps({
        "testRunner": "command", "commandRunner": {"command": "node --test"}, "mutate": ["src/**/*.js"],
        "reporters": ["clear-text", "progress-append-only"], "concurrency": 2, "coverageAnalysis": "off",
        "thresholds": {"high": 90, "low": 80, "break": 75}}, indent=2) + "\n")
    return Run(["stryker", "run"], [
        S("stdout", r"^All files \| +[\d.]+ \|", "the total score"),
        S("stdout", r"^ fees5\.js \| +0\.00 \|", "the one file no test covers"),
        S("stdout", r"ERROR MutationTestReportHelper.* Final mutation score [\d.]+ under breaking threshold 75, ", "the verdict"),
    ], expect_exit=exits(1))


@recipe("tsd-type-assertion-errors", "tsd", "type-checker", npmver("tsd"), needs=("tsd",))
def _tsd(root):
    """Write the `tsd-type-assertion-errors` project under `root`; return its command and signals."""
    _package(root, "shop-money", {"types": "index.d.ts"})
    link_node_modules(root)
    write(root, "index.d.ts", "export interface Money {\n  amount: number;\n  currency: 'EUR' | 'USD';\n}\n\n"
          "export function add(a: Money, b: Money): Money;\nexport function format(m: Money, locale?: string): string;\n"
          "export function parse(text: string): Money | undefined;\n")
    write(root, "index.test-d.ts", "import { expectType, expectError } from 'tsd'\nimport { add, format, parse, Money } from '.'\n\n"
          "const eur: Money = { amount: 5, currency: 'EUR' }\nexpectType<Money>(add(eur, eur))\nexpectType<string>(format(eur))\n"
          "expectType<Money>(parse('5 EUR'))\nexpectError(format(eur, 'de-DE'))\nexpectType<string>(format(eur, 'en'))\n")
    return Run(["tsd"], [
        S("stderr", r"^  index\.test-d\.ts:7:18$", "the file heading"),
        S("stderr", r"^  ✖  \d+:\d+ +(Argument of type Money \| undefined is not assignable|Expected an error, but found none)",
          "each failed assertion with its place"),
        S("stderr", r"^  2 errors$", "the count"),
    ], expect_exit=exits(1))


@recipe("es-check-one-file-too-new", "es-check", "linter", npmver("es-check"), needs=("es-check",))
def _es_check(root):
    """Write the `es-check-one-file-too-new` project under `root`; return its command and signals."""
    for n in range(150):
        write(root, f"dist/chunk-{n:03d}.js", f"var chunk{n} = function (items) {{\n  return items.map(function (i) "
              f"{{ return i * {n}; }});\n}};\n")
    write(root, "dist/chunk-097.js", "var chunk97 = function (order) {\n  return order?.lines ?? [];\n};\n")
    return Run(["es-check", "es2017", "dist/**/*.js"], [
        S("stderr", r"^error: ES-Check: there were 1 ES version matching errors\.$", "the verdict"),
        S("stdout", r"· erroring file: dist/chunk-097\.js at dist/chunk-097\.js:2:15$", "the one file with newer syntax among 150"),
        S("stdout", r"· error: SyntaxError: Unexpected token \(2:15\)$", "the error"),
    ], command="es-check es2017 'dist/**/*.js'", expect_exit=exits(1))


@recipe("markuplint-recommended-findings", "markuplint", "linter", [nbin("markuplint"), "--version"], needs=("markuplint",))
def _markuplint(root):
    """Write the `markuplint-recommended-findings` project under `root`; return its command and signals."""
    write(root, ".markuplintrc", json.dumps({"extends": ["markuplint:recommended"]}, indent=2) + "\n")
    for n in range(12):
        write(root, f"site/p{n:02d}.html", _page(n))
    write(root, "site/p07.html", _page(7, "<div id=\"buy\"><a href=\"/cart\"><button>Add</button></a></div>\n"
                                         "<img src=\"/img/banner.png\">\n"))
    return Run(["markuplint", "site/**/*.html"], [
        S("stderr", r"\((permitted-contents|require-accessible-name)\) .*/site/p07\.html:\d+:\d+$",
          "the two findings of other kinds among 158 missing-attribute and missing-heading errors"),
    ], command="markuplint 'site/**/*.html'", expect_exit=exits(1))


@recipe("pm2-logs-crash-loop", "pm2", "log", npmver("pm2"), needs=("pm2",))
def _pm2(root):
    """Write the `pm2-logs-crash-loop` project under `root`; return its command and signals."""
    write(root, "config/default.json", '{\n  "port": 18983,\n  "queue": { "batch": 25 }\n}\n')
    write(root, "worker.js", "const config = require('./config/default.json')\nconsole.log(`worker: batch size ${config.queue.batch}`)\n"
          "for (let n = 0; n < 80; n++) console.log(`worker: shipped order ${1000 + n}`)\n"
          "console.log(`worker: connecting to ${config.mailer.host}`)\n")
    env = {"PM2_HOME": f"{root}/.pm2"}
    sh(f"{nbin('pm2')} start worker.js --name mailer --max-restarts 3 --restart-delay 200 >/dev/null "
       "&& sleep 5", root, env=env)
    argv = ["pm2", "logs", "mailer", "--nostream", "--lines", "400"]
    return Run(argv, [
        S("stdout", r"^0\|mailer +\| TypeError: Cannot read properties of undefined \(reading 'host'\)$", "the crash, each restart"),
        S("stdout", r"^0\|mailer +\|     at Object\.<anonymous> \(.*/pm2-logs-crash-loop/worker\.js:\d+:\d+\)$",
          "the app's own frame"),
    ], command=" ".join(argv) + "; status=$?; pm2 kill >/dev/null; exit $status", env=env, expect_exit=exits(0))


@recipe("poku-suite-all-pass", "poku", "test-runner", npmver("poku"), needs=("poku",))
def _poku(root):
    """Write the `poku-suite-all-pass` project under `root`; return its command and signals."""
    _package(root, "shop-units", {"scripts": {"test": "poku test"}})
    link_node_modules(root)
    write(root, "src/units.js", "exports.toGrams = (kg) => Math.round(kg * 1000)\nexports.toKg = (g) => g / 1000\n")
    for n in range(90):
        checks = "".join(f"  assert.strictEqual(toGrams({n}.{k}), {n * 1000 + k * 100}, 'parcel {n}.{k}')\n" for k in range(10))
        write(root, f"test/units{n:02d}.test.js", "const { test, assert } = require('poku')\n"
              f"const {{ toGrams }} = require('../src/units.js')\n\ntest('parcel weights {n}', () => {{\n{checks}}})\n")
    return Run(["poku", "test"], [
        S("stdout", r"PASS › 90 .*FAIL › 0 ", "the summary of a passing suite"),
    ], expect_exit=exits(0))
