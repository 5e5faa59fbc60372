"""Cloaked recipes for npm tools: node-tap, turbo, csslint, markdown-link-check, AssemblyScript's asc, Parcel,
pino-pretty, Eleventy, JSDoc, svelte-check, nyc, grunt.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from cloaked_common import Run, S, exits, link_node_modules, nbin, recipe, sh, write

NPM_PINS = ["tap@21.8.0", "turbo@2.11.13", "csslint@1.0.5", "markdown-link-check@3.15.0", "assemblyscript@0.28.20",
            "parcel@2.16.4", "pino-pretty@13.2.0", "@11ty/eleventy@3.1.8", "jsdoc@4.0.5", "svelte-check@4.7.9",
            "svelte@5.60.1", "typescript@5.9.3", "nyc@18.0.0", "grunt@1.6.3", "grunt-cli@1.5.0"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}


def _package(root: str, name: str, extra: dict | None = None) -> None:
    """Write a private package.json called `name` (with `extra` keys) under `root`."""
    write(root, "package.json", json.dumps({"name": name, "version": "1.0.0", "private": True, **(extra or {})}, indent=2) + "\n")


def _tap_file(n: int, broken: tuple[int, int]) -> str:
    """A node-tap test file of 25 subtests of eight assertions on shipping weights; `broken` expects a wrong one."""
    tests = []
    for k in range(25):
        checks = "".join(f"  t.equal(volumetric({n * 10 + k}, {c + 1}), {(n * 10 + k) * (c + 1) // 5 + (1 if (n, k, c) == (*broken, 4) else 0)}, "
                         f"'parcel {k} box {c}')\n" for c in range(8))
        tests.append(f"t.test('route {n} parcel {k}', async t => {{\n{checks}}})\n\n")
    return "const t = require('tap')\nconst { volumetric } = require('../lib/weights.js')\n\n" + "".join(tests)


@recipe("tap-reporter-tap-one-failure", "tap", "test-runner", [nbin("tap"), "--version"], needs=("tap",))
def _tap(root):
    """Write the `tap-reporter-tap-one-failure` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "parcel-weights")
    write(root, "lib/weights.js", "exports.volumetric = (size, boxes) => Math.floor(size * boxes / 5)\n")
    for n in range(24):
        write(root, f"test/route{n:02d}.test.js", _tap_file(n, (17, 12)))
    return Run(["tap", "--reporter=tap", "--disable-coverage", "--jobs=1"], [
        S("stdout", r"^ *not ok \d+ - (parcel 12 box 4|route 17 parcel 12|test/route17\.test\.js)( |$)",
          "the failed assertion, its subtest and its file among 4,800 passes"),
        S("stdout", r"^ +Test\.<anonymous> \(test/route17\.test\.js:\d+:\d+\)$", "the test's own frame"),
        S("stdout", r"^ +-183$|^ +\+182$", "expected against actual"),
        S("stdout", r"^# \{ total: 4800, pass: 4799, fail: 1 \}$", "the summary"),
    ], expect_exit=exits(1))


@recipe("turbo-run-build-continue-one-fails", "turbo", "build", [nbin("turbo"), "--version"], needs=("turbo",))
def _turbo(root):
    """Write the `turbo-run-build-continue-one-fails` project under `root`; return its command and signals."""
    names = [f"shop-{part}" for part in ("cart", "catalog", "pricing", "search", "users", "orders", "billing", "tax",
                                         "shipping", "returns", "reviews", "coupons", "stock", "mail", "reports", "auth")]
    _package(root, "shop-monorepo", {"workspaces": ["packages/*"], "packageManager": "npm@11.19.1"})
    write(root, "turbo.json", json.dumps({"$schema": "https://turbo.build/schema.json",
                                          "tasks": {"build": {"outputs": ["dist/**"]}}}, indent=2) + "\n")
    for name in names:
        pkg = f"packages/{name}"
        write(root, f"{pkg}/package.json", json.dumps({"name": f"@shop/{name[5:]}", "version": "1.0.0", "private": True,
                                                       "scripts": {"build": "node build.js"}}, indent=2) + "\n")
        for k in range(12):
            write(root, f"{pkg}/src/mod{k:02d}.js", f"module.exports = {{ id: '{name}-{k}', weight: {k} }}\n")
        write(root, f"{pkg}/build.js", "const fs = require('fs')\nfs.mkdirSync('dist', { recursive: true })\n"
              "for (const file of fs.readdirSync('src').sort()) {\n  const mod = require('./src/' + file)\n"
              "  fs.writeFileSync('dist/' + file, 'module.exports = ' + JSON.stringify(mod) + '\\n')\n"
              "  console.log(`compiled src/${file} -> dist/${file} (${mod.id})`)\n}\nconsole.log('build finished')\n")
    write(root, "packages/shop-tax/src/mod07.js", "const rates = require('./rates.json')\nmodule.exports = { id: 'shop-tax-7', rates }\n")
    write(root, ".npmrc", "update-notifier=false\nfund=false\n")
    sh("npm install --package-lock-only --no-audit --offline", root)
    sh("git init -q . && git add -A && git -c user.name=dev -c user.email=dev@example.test commit -qm init", root)
    return Run(["turbo", "run", "build", "--continue", "--concurrency=1"], [
        S("stdout", r"^@shop/tax:build: node:internal/modules/cjs/loader:\d+$", "the trace's start"),
        S("stdout", r"^@shop/tax:build: Error: Cannot find module '\./rates\.json'$", "the error in the one failed package"),
        S("stdout", r"^@shop/tax:build:     at Object\.<anonymous> \(.*/packages/shop-tax/src/mod07\.js:1:15\)$",
          "the project's own frame"),
        S("stdout", r"^@shop/tax:build: npm error Lifecycle script `build` failed with error:$", "the script's failure"),
        S("stderr", r"^@shop/tax#build:  ERROR  command .* exited \(1\)$|^ ERROR  run failed: command  exited \(1\)$",
          "turbo's errors"),
        S("stdout", r"^ Tasks:    15 successful, 16 total$|^Failed:    @shop/tax#build$", "the summary"),
    ], env={"TURBO_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1", "TURBO_NO_UPDATE_NOTIFIER": "1"}, expect_exit=exits(1))


def _css(n: int) -> str:
    """A stylesheet in an old house style: ids, !important, zero units, qualified headings."""
    return "".join(f"#panel-{n}-{k} .title {{\n  margin: 0px;\n  color: #333 !important;\n  float: left;\n}}\n\n"
                   f"ul.list-{k} li {{\n  padding: 0px 4px;\n  font-size: 12px;\n}}\n\n" for k in range(4))


@recipe("csslint-warnings-and-two-errors", "csslint", "linter", [nbin("csslint"), "--version"], needs=("csslint",))
def _csslint(root):
    """Write the `csslint-warnings-and-two-errors` project under `root`; return its command and signals."""
    for n in range(30):
        write(root, f"styles/page{n:02d}.css", _css(n))
    write(root, "styles/page11.css", _css(11) + ".checkout .total {\n  color: red;\n  font-weight: bold;\n\n"
          ".checkout .note {\n  colr: #999;\n}\n")
    write(root, "styles/page19.css", _css(19) + ".price {\n  font-size: 14px;\n  color: ;\n}\n")
    write(root, "styles/page24.css", _css(24) + ".banner {\n  background: url(hero.png) no-repeat;\n  width: 100px;\n"
          "  padding: 10px;\n  border: 1px solid #ccc;\n}\n")
    return Run(["csslint", "styles"], [
        S("stdout", r"^csslint: There are \d+ problems in .*/styles/page(11|19)\.css\.$", "the headings of the files with errors"),
        S("stdout", r"^\d+: error at line \d+, col \d+$", "the two errors among hundreds of warnings"),
        S("stdout", r"^Expected RBRACE at line 49, col 1\.$|^Unexpected token ';' at line \d+, col \d+\.$", "the errors' messages"),
    ], expect_exit=exits(0, 1))


@recipe("markdown-link-check-dead-relative-link", "markdown-link-check", "docs", [nbin("markdown-link-check"), "--version"],
        needs=("markdown-link-check",))
def _markdown_link_check(root):
    """Write the `markdown-link-check-dead-relative-link` project under `root`; return its command and signals."""
    pages = [f"guide-{n:02d}" for n in range(60)]
    for n, page in enumerate(pages):
        links = "".join(f"- [{other}](./{other}.md)\n" for other in (pages[(n + j) % 60] for j in range(1, 13)))
        write(root, f"docs/{page}.md", f"# Guide {n}\n\nSee also:\n\n{links}\n[Back to the index](./index.md)\n")
    write(root, "docs/index.md", "# Docs\n\n" + "".join(f"- [{p}](./{p}.md)\n" for p in pages))
    write(root, "docs/guide-21.md", "# Guide 21\n\nSee also:\n\n- [guide-22](./guide-22.md)\n"
          "- [Returns policy](./returns-policy.md)\n- [guide-23](./guide-23.md)\n\n[Back to the index](./index.md)\n")
    return Run(["markdown-link-check", "docs/*.md"], [
        S("stdout", r"^FILE: docs/guide-21\.md$", "the heading of the file with the dead link"),
        S("stdout", r"^  \[✖\] \./returns-policy\.md", "the dead link and its status"),
        S("stderr", r"^  ERROR: 1 dead link found!$", "the verdict"),
    ], command="markdown-link-check docs/*.md", expect_exit=exits(1))


@recipe("asc-assemblyscript-type-errors", "asc", "compiler", [nbin("asc"), "--version"], needs=("asc",))
def _asc(root):
    """Write the `asc-assemblyscript-type-errors` project under `root`; return its command and signals."""
    write(root, "assembly/index.ts", "export function checksum(data: Uint8Array): i32 {\n  let sum: i32 = 0;\n"
          "  for (let i = 0; i < data.length; i++) {\n    sum = (sum + data[i] * 31) & 0xffff;\n  }\n  return sum;\n}\n\n"
          "export function average(values: Float64Array): i32 {\n  let total = 0.0;\n"
          "  for (let i = 0; i < values.length; i++) {\n    total += values[i];\n  }\n  return total / values.length;\n}\n\n"
          "export function label(code: i32): string {\n  return 'code ' + code.toStrin();\n}\n")
    return Run(["asc", "assembly/index.ts", "--outFile", "build/release.wasm"], [
        S("stderr", r"^ERROR (AS200|TS2339): ", "the two compile errors"),
        S("stderr", r"in assembly/index\.ts\((14,10|18,25)\)$", "their places"),
        S("stderr", r"^FAILURE 2 compile error\(s\)$", "the summary"),
    ], expect_exit=exits(1))


@recipe("parcel-build-unresolved-import", "parcel", "build", [nbin("parcel"), "--version"], needs=("parcel",))
def _parcel(root):
    """Write the `parcel-build-unresolved-import` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-front", {"source": "src/index.html"})
    write(root, "src/index.html", "<!doctype html>\n<html><body><div id=\"app\"></div>"
          "<script type=\"module\" src=\"./main.js\"></script></body></html>\n")
    write(root, "src/main.js", "import { renderCart } from './cart.js'\n\nrenderCart(document.getElementById('app'))\n")
    write(root, "src/cart.js", "import { formatPrice } from './money/format.js'\n\n"
          "export function renderCart(el) {\n  el.textContent = formatPrice(1999)\n}\n")
    write(root, "src/money/formatting.js", "export const formatPrice = (cents) => (cents / 100).toFixed(2) + ' EUR'\n")
    return Run(["parcel", "build", "--no-cache", "src/index.html"], [
        S("stdout", r"Build failed\.$", "the verdict"),
        S("stderr", r"^@parcel/core: Failed to resolve '\./money/format\.js' from '\./src/cart\.js'$", "the error"),
        S("stderr", r"^  /.*/src/cart\.js:1:29$", "its place"),
        S("stderr", r"^@parcel/resolver-default: Cannot load file ", "the resolver's error"),
    ], expect_exit=exits(1))


def _pino_lines() -> list[str]:
    """A day of a checkout service's pino log: requests, cache notes, one failed payment with its error."""
    lines, t0 = [], 1796342400000
    for n in range(2600):
        base = {"time": t0 + n * 997, "pid": 4121, "hostname": "shop-api-7"}
        if n == 1913:
            stack = ("TypeError: Cannot read properties of undefined (reading 'currency')\n"
                     "    at toMinorUnits (/srv/shop/src/payments/amount.js:14:23)\n"
                     "    at capturePayment (/srv/shop/src/payments/capture.js:41:18)\n"
                     "    at async /srv/shop/src/routes/checkout.js:88:5")
            lines.append({**base, "level": 50, "reqId": f"req-{n}", "orderId": 77120,
                          "err": {"type": "TypeError", "message": "Cannot read properties of undefined (reading 'currency')",
                                  "stack": stack}, "msg": "payment capture failed"})
        elif n % 10 == 9:
            lines.append({**base, "level": 20, "cache": "prices", "hit": n % 3 != 0, "msg": "price cache lookup"})
        else:
            lines.append({**base, "level": 30, "reqId": f"req-{n}", "req": {"method": "GET" if n % 4 else "POST",
                          "url": f"/api/cart/{n % 300}", "remoteAddress": f"10.0.{n % 7}.{n % 200}"},
                          "res": {"statusCode": 200}, "responseTime": n % 37 + 3, "msg": "request completed"})
    return [json.dumps(line) for line in lines]


PINO_VERSION = ["node", "-p", "'pino-pretty ' + require('/tmp/yarp-gen/cloaked/npm/node_modules/pino-pretty/package.json').version"]


@recipe("pino-pretty-service-log-one-error", "pino-pretty", "log", PINO_VERSION, needs=("pino-pretty",))
def _pino_pretty(root):
    """Write the `pino-pretty-service-log-one-error` project under `root`; return its command and signals."""
    write(root, "logs/checkout.log", "\n".join(_pino_lines()) + "\n")
    return Run(["pino-pretty", "--colorize=false", "--translateTime", "UTC:yyyy-mm-dd HH:MM:ss.l"], [
        S("stdout", r"^\[2026-12-04 00:31:47\.261\] ERROR \(4121\): payment capture failed$", "the one error among 2,600 entries"),
        S("stdout", r"^ +TypeError: Cannot read properties of undefined \(reading 'currency'\)$", "the exception"),
        S("stdout", r"^ +at toMinorUnits \(/srv/shop/src/payments/amount\.js:14:23\)$", "the service's own top frame"),
    ], command="pino-pretty --colorize=false --translateTime 'UTC:yyyy-mm-dd HH:MM:ss.l' < logs/checkout.log",
        expect_exit=exits(0))


@recipe("eleventy-build-site-success", "eleventy", "build", [nbin("eleventy"), "--version"], needs=("eleventy",))
def _eleventy(root):
    """Write the `eleventy-build-site-success` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-docs")
    write(root, "_includes/page.njk", "<!doctype html>\n<title>{{ title }}</title>\n<main>{{ content | safe }}</main>\n")
    for n in range(260):
        write(root, f"docs/article-{n:03d}.md", f"---\nlayout: page.njk\ntitle: Article {n}\ntags: docs\n---\n\n"
              f"# Article {n}\n\nHow to configure shipping rule {n}.\n")
    write(root, "index.njk", "---\nlayout: page.njk\ntitle: Docs\n---\n<ul>{% for p in collections.docs %}"
          "<li><a href=\"{{ p.url }}\">{{ p.data.title }}</a></li>{% endfor %}</ul>\n")
    return Run(["eleventy"], [
        S("stdout", r"^\[11ty\] Wrote 261 files in [\d.]+ seconds ", "the summary of a build that succeeds"),
    ], expect_exit=exits(0))


@recipe("jsdoc-bad-type-expression", "jsdoc", "docs", [nbin("jsdoc"), "--version"], needs=("jsdoc",))
def _jsdoc(root):
    """Write the `jsdoc-bad-type-expression` project under `root`; return its command and signals."""
    for n in range(60):
        write(root, f"src/handlers/h{n:02d}.js", f"/**\n * Handle order event {n}.\n * @param {{Object}} event - The event.\n"
              f" * @param {{number}} [retries=0] - Retries left.\n * @returns {{Promise<boolean>}} Whether it was handled.\n */\n"
              f"export async function handle{n}(event, retries = 0) {{\n  return Boolean(event) && retries >= 0;\n}}\n")
    write(root, "src/handlers/h38.js", "/**\n * Group order lines by warehouse.\n"
          " * @param {Array<{sku: string, qty: number}} lines - The order lines.\n"
          " * @returns {Map<string, number>} Quantities by warehouse.\n */\n"
          "export function groupLines(lines) {\n  return new Map(lines.map((l) => [l.sku, l.qty]));\n}\n")
    return Run(["jsdoc", "-r", "src", "-d", "out"], [
        S("stderr", r"^ERROR: Unable to parse a tag's type expression for source file .*/src/handlers/h38\.js in line \d+ ",
          "the errors and the file they are in"),
    ], expect_exit=exits(0, 1))


def _svelte(n: int) -> str:
    """A product card component with an image lacking alt text and a click handler on a div."""
    return (f"<script lang=\"ts\">\n  let {{ name, price }}: {{ name: string; price: number }} = $props();\n"
            "  let count = $state(0);\n</script>\n\n"
            f"<div class=\"card-{n}\" onclick={{() => count++}}>\n  <img src=\"/img/{n}.png\">\n"
            "  <h2>{name}</h2>\n  <p>{price.toFixed(2)} EUR ({count})</p>\n</div>\n")


@recipe("svelte-check-errors-among-warnings", "svelte-check", "type-checker", [nbin("svelte-check"), "--version"],
        needs=("svelte-check",))
def _svelte_check(root):
    """Write the `svelte-check-errors-among-warnings` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-ui", {"type": "module"})
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "module": "esnext", "target": "es2022",
                                                                 "moduleResolution": "bundler", "verbatimModuleSyntax": True,
                                                                 "noEmit": True}, "include": ["src/**/*"]}, indent=2) + "\n")
    for n in range(40):
        write(root, f"src/lib/Card{n:02d}.svelte", _svelte(n))
    write(root, "src/lib/Total.svelte", "<script lang=\"ts\">\n  let { lines }: { lines: { qty: number; price: number }[] } = $props();\n"
          "  const total: string = lines.reduce((sum, l) => sum + l.qty * l.price, 0);\n</script>\n\n<p>{total}</p>\n")
    write(root, "src/lib/Basket.svelte", "<script lang=\"ts\">\n  import Card07 from './Card07.svelte';\n</script>\n\n"
          "<Card07 name=\"Lamp\" price=\"12.50\" />\n")
    return Run(["svelte-check", "--tsconfig", "./tsconfig.json", "--output", "human"], [
        S("stdout", r"/src/lib/(Basket\.svelte:5:21|Total\.svelte:3:9)$", "the errors' places"),
        S("stdout", r"^Error: Type '(string|number)' is not assignable to type '(number|string)'\. \(ts\)$",
          "the two errors among 121 warnings"),
        S("stdout", r"^svelte-check found 2 errors and 121 warnings in 42 files$", "the summary"),
    ], expect_exit=exits(1))


@recipe("nyc-global-threshold-unloaded-file", "nyc", "coverage", [nbin("nyc"), "--version"], needs=("nyc",))
def _nyc(root):
    """Write the `nyc-global-threshold-unloaded-file` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-rules")
    groups = ("cart", "fees", "promo", "stock", "users", "vat")
    for group in groups:
        for n in range(25):
            write(root, f"lib/{group}/rule{n:02d}.js", f"exports.apply = (x) => {{\n  if (x > {n}) {{\n    return x - {n};\n"
                  f"  }}\n  return x + {n};\n}};\n")
    write(root, "lib/fees/importLegacy.js", "".join(f"exports.step{k} = (row) => {{\n  if (!row) {{\n    return null;\n  }}\n"
                                                     f"  return row.value * {k};\n}};\n" for k in range(60)))
    calls = "".join(f"require('../lib/{g}/rule{n:02d}.js').apply({n + 1});\nrequire('../lib/{g}/rule{n:02d}.js').apply(0);\n"
                    for g in groups for n in range(25))
    write(root, "test/run.js", calls + "console.log('150 rules exercised');\n")
    return Run(["nyc", "--all", "--include", "lib/**", "--check-coverage", "--lines", "90", "node", "test/run.js"], [
        S("stderr", r"^ERROR: Coverage for lines \([\d.]+%\) does not meet global threshold \(90%\)$", "the failure"),
        S("stdout", r"^All files +\| ", "the totals row"),
        S("stdout", r"^ fees +\| ", "the directory heading of the unloaded file"),
        S("stdout", r"^  importLegacy\.js +\| +0 \| ", "the one file at 0 % among 151"),
    ], expect_exit=exits(1))


@recipe("grunt-build-aborted-on-warning", "grunt", "build", [nbin("grunt"), "--version"], needs=("grunt",))
def _grunt(root):
    """Write the `grunt-build-aborted-on-warning` project under `root`; return its command and signals."""
    link_node_modules(root)
    _package(root, "shop-theme")
    pages = ["home", "cart", "catalog", "search", "account", "orders", "wishlist", "help", "returns", "stores", "blog",
             "faq", "contact", "legal", "checkout", "careers"]
    for page in pages:
        for k in range(30):
            write(root, f"src/tpl/{page}/part{k:02d}.hbs", f"<section class=\"{page}-{k}\">{{{{#if items}}}}{{{{items.length}}}}"
                  "{{/if}}</section>\n")
    write(root, "src/tpl/checkout/part06.hbs", "<section class=\"checkout-6\">{{#if items}}{{items.length}}</section>\n")
    write(root, "Gruntfile.js", "module.exports = function (grunt) {\n  const fs = require('fs');\n"
          f"  const pages = {json.dumps(pages)};\n"
          "  for (const page of pages) {\n    grunt.registerTask('templates:' + page, 'Check the ' + page + ' templates', function () {\n"
          "      for (const file of fs.readdirSync('src/tpl/' + page).sort()) {\n"
          "        const text = fs.readFileSync('src/tpl/' + page + '/' + file, 'utf8');\n"
          "        const opened = (text.match(/{{#/g) || []).length;\n        const closed = (text.match(/{{\\//g) || []).length;\n"
          "        if (opened !== closed) {\n          grunt.fail.warn('src/tpl/' + page + '/' + file + ': ' + opened + "
          "' block(s) opened, ' + closed + ' closed');\n        }\n"
          "        grunt.log.writeln('>> src/tpl/' + page + '/' + file + ' ok (' + text.length + ' bytes)');\n      }\n"
          "      grunt.log.ok(page + ': templates checked');\n    });\n  }\n"
          "  grunt.registerTask('default', pages.map((p) => 'templates:' + p));\n};\n")
    return Run(["grunt"], [
        S("stdout", r'^Running "templates:checkout" task$', "the heading of the task that failed"),
        S("stdout", r"^Warning: src/tpl/checkout/part06\.hbs: 1 block\(s\) opened, 0 closed\x07? Use --force to continue\.$",
          "the failure"),
        S("stdout", r"^Aborted due to warnings\.$", "the verdict"),
    ], expect_exit=exits(6))
