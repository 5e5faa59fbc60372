"""Draped recipes for npm tools: Playwright Test, Hexo, fastify-cli, broken-link-checker, TSTyche, XO, TypeORM,
check-dependency-version-consistency, Nunjucks (nunjucks-precompile), zx, lage.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from draped_common import Run, S, exits, link_node_modules, nbin, npmver, recipe, served, sh, wait_port, write

NPM_PINS = ["@playwright/test@1.49.1", "hexo@7.3.0", "hexo-cli@4.3.2", "fastify-cli@7.4.0", "fastify@5.2.1",
            "broken-link-checker@0.7.8", "tstyche@3.5.0", "typescript@5.6.3", "xo@0.59.3", "typeorm@0.3.25",
            "sql.js@1.12.0", "reflect-metadata@0.2.2", "check-dependency-version-consistency@5.0.0", "nunjucks@3.2.4",
            "hexo-renderer-marked@6.3.0", "hexo-renderer-ejs@2.0.0", "hexo-generator-index@4.0.0",
            "hexo-generator-archive@2.0.0", "hexo-generator-tag@2.0.0", "zx@8.4.2", "lage@2.17.0"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}
def _package(root: str, name: str, extra: dict | None = None, rel: str = "package.json") -> None:
    """Write a package.json called `name` (with `extra` keys) at `root/rel`."""
    write(root, rel, json.dumps({"name": name, "version": "1.0.0", **(extra or {})}, indent=2) + "\n")

def _pw_spec(part: int) -> str:
    """A Playwright test file of 80 currency-conversion tests for one market; one expects a stale rate."""
    tests = []
    for n in range(80):
        cents = 199 + n * 37
        want = f"Math.round({cents} * rate)"
        if (part, n) == (31, 58):
            want = f"Math.round({cents} * 1.0842)"
        tests.append(f"  test('converts {cents} cents', () => {{\n    expect(convert({cents}, rate)).toBe({want})\n  }})\n")
    return (f"const {{ test, expect }} = require('@playwright/test')\nconst {{ convert }} = require('../src/fx')\n\n"
            f"const rate = 1.0837 + {part} * 0.0001\n\n"
            f"test.describe('market {part}', () => {{\n" + "".join(tests) + "})\n")


@recipe("playwright-test-list-one-failure", "playwright", "test-runner", [nbin("playwright"), "--version"],
        needs=("node",))
def _playwright(root):
    """Write the `playwright-test-list-one-failure` project under `root`; return its command and signals."""
    _package(root, "fx-service", {"private": True})
    link_node_modules(root)
    write(root, "src/fx.js", "exports.convert = (cents, rate) => Math.round(cents * rate)\n")
    write(root, "playwright.config.js", "module.exports = { testDir: 'tests', workers: 2, reporter: 'list' }\n")
    for part in range(50):
        write(root, f"tests/market{part:02d}.spec.js", _pw_spec(part))
    return Run(["npx", "playwright", "test"], [
        S("stdout", r"^  ✘  \d+ market31\.spec\.js:181:3 › market 31 › converts 2345 cents \(\d+ms\)$",
          "the one failing test among 4,000"),
        S("stdout", r"^  1\) market31\.spec\.js:181:3 › market 31 › converts 2345 cents ─+$", "the failure's heading"),
        S("stdout", r"^    Error: .*toBe.*Object\.is equality", "the failed expectation"),
        S("stdout", r"^    (Expected: .*2542|Received: .*2549)", "what was expected and received"),
        S("stdout", r"^    > 182 \|     expect\(convert\(2345, rate\)\)", "the failing line"),
        S("stdout", r"^        at .*/tests/market31\.spec\.js:182:33$", "the test's own frame"),
        S("stdout", r"^  (1 failed|3999 passed \([\d.]+s\))$", "the counts"),
    ], env={"FORCE_COLOR": None}, expect_exit=exits(1), timeout=600)


_HEXO_LAYOUTS = {
    "layout.ejs": "<!doctype html><html><head><title><%= page.title || config.title %></title></head>"
                  "<body><%- body %></body></html>\n",
    "index.ejs": "<% page.posts.each(function(post){ %><h2><a href=\"<%- url_for(post.path) %>\"><%= post.title %></a></h2>"
                 "<% }) %>\n",
    "post.ejs": "<article><h1><%= page.title %></h1><%- page.content %></article>\n",
    "archive.ejs": "<% page.posts.each(function(post){ %><li><%= post.title %></li><% }) %>\n",
    "tag.ejs": "<h1><%= page.tag %></h1><% page.posts.each(function(post){ %><li><%= post.title %></li><% }) %>\n",
}


def _hexo_post(n: int) -> str:
    """One post of a product blog; post 917's title has an unquoted colon and a quote inside."""
    title = 'Release notes: 4.17 "the big one"' if n == 917 else f"Field notes {n}"
    day = f"2024-{n % 12 + 1:02d}-{n % 28 + 1:02d}"
    return (f"---\ntitle: {title}\ndate: {day} 09:{n % 60:02d}:00\ntags:\n  - {('ops', 'release', 'howto', 'team')[n % 4]}\n"
            f"---\n\nNotes from week {n}. We moved **{n * 3} tickets** and shipped the `export-{n}` job.\n\n"
            f"## Details\n\n- first item {n}\n- second item {n}\n")


@recipe("hexo-generate-one-bad-front-matter", "hexo", "build", npmver("hexo"), needs=("node",))
def _hexo(root):
    """Write the `hexo-generate-one-bad-front-matter` project under `root`; return its command and signals."""
    plugins = ["hexo-renderer-marked", "hexo-renderer-ejs", "hexo-generator-index", "hexo-generator-archive",
               "hexo-generator-tag"]
    _package(root, "product-blog", {"private": True, "hexo": {"version": "7.3.0"},
                                    "dependencies": {p: "*" for p in ["hexo", *plugins]}})
    link_node_modules(root)
    write(root, "_config.yml", "title: Product blog\nurl: https://blog.example.com\npermalink: :year/:month/:title/\n"
                               "theme: plain\nper_page: 10\nsource_dir: source\npublic_dir: public\n")
    for name, text in _HEXO_LAYOUTS.items():
        write(root, f"themes/plain/layout/{name}", text)
    for n in range(3600):
        write(root, f"source/_posts/field-notes-{n:04d}.md", _hexo_post(n))
    return Run(["hexo", "generate"], [
        S("stderr", r"^ERROR Process failed: _posts/field-notes-0917\.md$", "the one post that failed among 3,600"),
        S("stderr", r"^YAMLException: bad indentation of a mapping entry \(1:21\)$", "why"),
        S("stderr", r'^ 1 \| title: Release notes: 4\.17 "the big one"$', "the offending front-matter line"),
        S("stdout", r"^INFO  \d+ files generated in [\d.]+ m?s$", "the summary"),
    ], expect_exit=exits(0, 2), timeout=600)


_FASTIFY_APP = """\
'use strict'

const rooms = new Map()
for (let id = 0; id < 1500; id++) {
  if (id !== 1187) rooms.set(id, { id, floor: id % 12, beds: 1 + (id % 3), rate: { amount: 80 + (id % 40), currency: 'EUR' } })
}

module.exports = async function (fastify, opts) {
  fastify.get('/rooms/:id/quote', async (request) => {
    const room = rooms.get(Number(request.params.id))
    const nights = Number(request.query.nights || 1)
    return { room: room.id, total: room.rate.amount * nights, currency: room.rate.currency }
  })
}
"""

_FASTIFY_CLIENT = """\
let failed = 0
async function main () {
  for (let id = 0; id < 1500; id++) {
    const res = await fetch(`http://127.0.0.1:18861/rooms/${id}/quote?nights=3`)
    await res.text()
    if (!res.ok) failed++
  }
  console.error(`quote check: 1500 requests, ${failed} failed`)
}
main()
"""


@recipe("fastify-start-log-one-500", "fastify", "log", npmver("fastify-cli"), needs=("node",))
def _fastify(root):
    """Write the `fastify-start-log-one-500` project under `root`; return its command and signals."""
    _package(root, "hotel-quotes", {"private": True})
    link_node_modules(root)
    write(root, "app.js", _FASTIFY_APP)
    write(root, "check.js", _FASTIFY_CLIENT)
    command = served("fastify start -l info -a 127.0.0.1 -p 18861 app.js", 18861, "node check.js")
    return Run(["fastify", "start", "-l", "info", "-a", "127.0.0.1", "-p", "18861", "app.js"], [
        S("stdout", r'^\{"level":50,.*"url":"/rooms/1187/quote\?nights=3"', "the one request that raised among 1,500"),
        S("stdout", r'"res":\{"statusCode":500\},"responseTime"', "its completion with a 500"),
        S("stderr", r"^quote check: 1500 requests, 1 failed$", "the client's summary"),
    ], command=command, expect_exit=exits(0), timeout=300)


def _docs_page(n: int, pages: int) -> str:
    """One page of a product manual: a navigation bar, links to its neighbours and sections; two pages link to
    pages that were renamed."""
    nav = "".join(f'<a href="/guide/page-{k:03d}.html">Chapter {k}</a> ' for k in range(0, pages, 20))
    near = "".join(f'<li><a href="/guide/page-{(n + d) % pages:03d}.html">See page {(n + d) % pages}</a></li>'
                   for d in (1, 2, 3, 5, 8))
    extra = {57: '<li><a href="/guide/installing-on-windows.html">Windows</a></li>',
             143: '<li><a href="/assets/diagram-v2.svg">Architecture diagram</a></li>'}.get(n, "")
    return (f"<!doctype html><html><head><title>Manual page {n}</title><link rel=\"stylesheet\" href=\"/assets/site.css\">"
            f"</head><body><nav>{nav}</nav><h1>Page {n}</h1><ul>{near}{extra}</ul>"
            f'<p><a href="/index.html">Home</a></p></body></html>\n')


@recipe("blc-manual-site-two-broken", "blc", "linter", npmver("broken-link-checker"), needs=("node", "python3"))
def _blc(root):
    """Write the `blc-manual-site-two-broken` project under `root`; return its command and signals."""
    pages = 240
    write(root, "site/index.html", "<!doctype html><html><body>" + "".join(
        f'<a href="/guide/page-{k:03d}.html">Page {k}</a>' for k in range(0, pages, 10)) + "</body></html>\n")
    write(root, "site/assets/site.css", "body { font-family: sans-serif; }\n")
    for n in range(pages):
        write(root, f"site/guide/page-{n:03d}.html", _docs_page(n, pages))
    command = ("python3 -m http.server 18862 --bind 127.0.0.1 --directory site >/dev/null 2>&1 & server=$!; " +
               wait_port(18862) + "blc http://127.0.0.1:18862/ -ro; status=$?; kill $server; exit $status")
    return Run(["blc", "http://127.0.0.1:18862/", "-ro"], [
        S("stdout", r"BROKEN.*http://127\.0\.0\.1:18862/(assets/diagram-v2\.svg|guide/installing-on-windows\.html)"
          r".* \(HTTP_404\)", "the two broken links among 4,610"),
        S("stdout", r"Getting links from: .*http://127\.0\.0\.1:18862/guide/page-(143|057)\.html", "the pages holding them"),
        S("stdout", r"Finished! \d+ links found\..*\D2 broken", "the summary"),
    ], command=command, expect_exit=exits(0, 1), timeout=600)


_TSTYCHE_SRC = """\
export type Currency = "EUR" | "USD" | "GBP";
export interface Money<C extends Currency = Currency> { amount: number; currency: C }
export declare function money<C extends Currency>(amount: number, currency: C): Money<C>;
export declare function add<C extends Currency>(a: Money<C>, b: Money<C>): Money<C>;
export declare function format(m: Money): string;
export declare function parse(text: string): Money | undefined;
"""


def _tstyche_file(n: int) -> str:
    """Type tests of the money helpers for one ledger; one expects `parse` never to return undefined."""
    cur = ("EUR", "USD", "GBP")[n % 3]
    tests = []
    for k in range(12):
        tests.append(f'  test("ledger {n} entry {k} keeps its currency", () => {{\n'
                     f'    expect(add(money({k}, "{cur}"), money({k + 1}, "{cur}"))).type.toBe<Money<"{cur}">>();\n'
                     f'    expect(format(money({k}, "{cur}"))).type.toBe<string>();\n  }});\n')
    parsed = "Money" if n == 41 else "Money | undefined"
    tests.append(f'  test("ledger {n} parses amounts", () => {{\n'
                 f'    expect(parse("{n}.00 {cur}")).type.toBe<{parsed}>();\n  }});\n')
    tests.append(f'  test("ledger {n} rejects unknown currencies", () => {{\n'
                 f'    expect(money({n}, "BTC")).type.toRaiseError();\n  }});\n')
    return (f'import {{ describe, expect, test }} from "tstyche";\nimport {{ add, format, money, parse, type Money }} '
            f'from "../src/money.js";\n\ndescribe("ledger {n}", () => {{\n' + "".join(tests) + "});\n")


@recipe("tstyche-money-types-one-failure", "tstyche", "type-checker", [nbin("tstyche"), "--version"],
        needs=("node",))
def _tstyche(root):
    """Write the `tstyche-money-types-one-failure` project under `root`; return its command and signals."""
    _package(root, "ledger-types", {"private": True, "type": "module"})
    link_node_modules(root)
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "module": "nodenext",
                                                                 "target": "es2022", "noEmit": True}}) + "\n")
    write(root, "src/money.ts", _TSTYCHE_SRC)
    for n in range(60):
        write(root, f"typetests/ledger{n:02d}.tst.ts", _tstyche_file(n))
    return Run(["tstyche"], [
        S("stdout", r"^fail \./typetests/ledger41\.tst\.ts$", "the one failing file among 60"),
        S("stdout", r"^(Targets|Test files|Tests|Assertions): +1 failed", "the counts"),
        S("stderr", r"^Error: Type 'Money<Currency> \| undefined' is not identical to type 'Money<Currency>'\.$",
          "the failed type assertion"),
        S("stderr", r'^  54 \|     expect\(parse\("41\.00 GBP"\)\)\.type\.toBe<Money>\(\);$', "the failing line"),
        S("stderr", r"^       at \./typetests/ledger41\.tst\.ts:54:42 ❭ ledger 41 ❭ ledger 41 parses amounts$", "where it is"),
    ], expect_exit=exits(1), timeout=600)


def _xo_module(n: int) -> str:
    """A shipping-service module written in the team's old style (two spaces, double quotes, var); two modules use
    a name that does not exist."""
    funcs = []
    for k in range(5):
        total = "totl" if (n, k) in ((19, 3), (71, 0)) else "total"
        funcs.append(f"export function rate{n}_{k}(parcels, zone) {{\n  var total = 0;\n  for (var i = 0; i < parcels.length; i++) {{\n"
                     f"    if (parcels[i].weight > 0 && parcels[i].zone == zone) {{\n      total = total + parcels[i].weight * {k + 1.5};\n"
                     f"    }}\n  }}\n  return {{label: \"zone \" + zone, total: {total}}};\n}}\n")
    return "\n".join(funcs)


@recipe("xo-shipping-style-two-undefined", "xo", "linter", [nbin("xo"), "--version"], needs=("node",))
def _xo(root):
    """Write the `xo-shipping-style-two-undefined` project under `root`; return its command and signals."""
    _package(root, "shipping-rates", {"private": True, "type": "module"})
    link_node_modules(root)
    for n in range(90):
        write(root, f"src/rates{n:02d}.js", _xo_module(n))
    return Run(["xo", "src"], [
        S("stdout", r"^  ✖ +\d+:\d+ +totl is not defined\. +no-undef$", "the two real bugs among 8,100 style errors"),
        S("stdout", r"^  src/rates(19|71)\.js:\d+:\d+$", "the files they are in"),
        S("stdout", r"^  8100 errors$", "the total"),
    ], expect_exit=exits(1), timeout=600)


_TYPEORM_SOURCE = """\
const { DataSource } = require('typeorm')

module.exports = new DataSource({
  type: 'sqljs',
  location: 'warehouse.sqlite',
  autoSave: true,
  logging: true,
  migrations: [__dirname + '/migrations/*.js'],
})
"""


def _typeorm_migration(n: int) -> str:
    """Migration `n` of a warehouse schema: a table per step, then indexes; step 27 adds a column step 14 already made."""
    stamp = 1714000000000 + n * 86400000
    if n == 27:
        name, up = "AddParcelBin", ['ALTER TABLE "parcel" ADD COLUMN "bin_id" integer',
                                    'CREATE INDEX "IDX_parcel_bin" ON "parcel" ("bin_id")']
    elif n == 14:
        name, up = "CreateParcel", [('CREATE TABLE "parcel" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, '
                                     '"sku_code" varchar NOT NULL, "weight" real NOT NULL, "bin_id" integer)')]
    else:
        name = f"CreateBinLevel{n:02d}"
        up = [(f'CREATE TABLE "bin_level_{n:02d}" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, '
               f'"aisle" varchar NOT NULL, "capacity" integer NOT NULL DEFAULT ({n * 10}))'),
              f'CREATE INDEX "IDX_bin_level_{n:02d}_aisle" ON "bin_level_{n:02d}" ("aisle")']
    body = "".join(f"    await queryRunner.query(`{sql}`)\n" for sql in up)
    return (f"module.exports = class {name}{stamp} {{\n  name = '{name}{stamp}'\n\n  async up (queryRunner) {{\n{body}  }}\n\n"
            f"  async down (queryRunner) {{\n  }}\n}}\n")


@recipe("typeorm-migration-run-one-failed", "typeorm", "migration", npmver("typeorm"), needs=("node",))
def _typeorm(root):
    """Write the `typeorm-migration-run-one-failed` project under `root`; return its command and signals."""
    _package(root, "warehouse", {"private": True})
    link_node_modules(root)
    write(root, "data-source.js", _TYPEORM_SOURCE)
    for n in range(1, 37):
        write(root, f"migrations/{1714000000000 + n * 86400000}-step{n:02d}.js", _typeorm_migration(n))
    return Run(["typeorm", "migration:run", "-d", "data-source.js"], [
        S("stdout", r'^query failed: ALTER TABLE "parcel" ADD COLUMN "bin_id" integer$', "the query that failed"),
        S("stdout", r"^error: Error: duplicate column name: bin_id$", "the database's error"),
        S("stdout", r'^Migration "AddParcelBin1716332800000" failed, error: duplicate column name: bin_id$',
          "the one migration that failed among 36"),
        S("stdout", r"^query: ROLLBACK$", "the rollback"),
        S("stderr", r"^(Error during migration run:|QueryFailedError: duplicate column name: bin_id)$", "the error"),
        S("stderr", r"^    at async AddParcelBin1716332800000\.up \(.*/migrations/1716332800000-step27\.js:5:5\)$",
          "the migration's own frame"),
    ], expect_exit=exits(1), timeout=300)


@recipe("cdvc-monorepo-three-mismatches", "check-dependency-version-consistency", "linter",
        [nbin("check-dependency-version-consistency"), "--version"], needs=("node",))
def _cdvc(root):
    """Write the `cdvc-monorepo-three-mismatches` project under `root`; return its command and signals."""
    _package(root, "storefront", {"private": True, "workspaces": ["packages/*"]})
    deps = {"react": "^18.3.1", "zod": "^3.23.8", "date-fns": "^3.6.0", "lodash": "^4.17.21", "axios": "^1.7.7"}
    for n in range(40):
        own = dict(list(deps.items())[: 2 + n % 4])
        if n in (7, 22):
            own["zod"] = "^3.21.4"
        if n == 31:
            own["date-fns"] = "^2.30.0"
        if n == 35:
            own["react"] = "18.2.0"
        _package(root, f"@storefront/pkg-{n:02d}", {"dependencies": own}, rel=f"packages/pkg-{n:02d}/package.json")
    return Run(["check-dependency-version-consistency", "."], [
        S("stdout", r"^Found 3 dependencies with mismatching versions across the workspace\.", "the verdict"),
        S("stdout", r"^║ (date-fns|react|zod) +│ Usages ", "each mismatched dependency"),
        S("stdout", r"^║ (\^2\.30\.0|18\.2\.0|\^3\.21\.4) +│", "the stray versions and the packages using them"),
    ], expect_exit=exits(1))


def _email_template(n: int) -> str:
    """An order-email template; template 33 closes its loop with the wrong tag."""
    end = "{% endif %}" if n == 33 else "{% endfor %}"
    return (f"{{% extends \"base.html\" %}}\n{{% block body %}}\n<h1>{{{{ order.customer.name }}}}, order {n} update</h1>\n"
            f"<table>\n{{% for line in order.lines %}}\n  <tr><td>{{{{ line.sku }}}}</td><td>{{{{ line.qty }}}}</td>"
            f"<td>{{{{ line.price | round(2) }}}}</td></tr>\n{end}\n</table>\n"
            f"{{% if order.notes %}}<p>{{{{ order.notes | escape }}}}</p>{{% endif %}}\n{{% endblock %}}\n")


@recipe("nunjucks-precompile-wrong-end-tag", "nunjucks-precompile", "build", npmver("nunjucks"), needs=("node",))
def _nunjucks(root):
    """Write the `nunjucks-precompile-wrong-end-tag` project under `root`; return its command and signals."""
    _package(root, "order-emails", {"private": True})
    link_node_modules(root)
    write(root, "templates/base.html", "<html><body>{% block body %}{% endblock %}</body></html>\n")
    for n in range(60):
        write(root, f"templates/order-{n:02d}.html", _email_template(n))
    return Run(["nunjucks-precompile", "templates"], [
        S("stderr", r"^Template render error: \(order-33\.html\) \[Line 7, Column 4\]$", "the template and where"),
        S("stderr", r"^  unknown block tag: endif$", "the error"),
    ], expect_exit=exits(0, 1))


_ZX_SCRIPT = """\
#!/usr/bin/env zx
$.verbose = true

const files = (await fs.readdir('locales')).filter((f) => f.endsWith('.json')).sort()
echo(`checking ${files.length} locale files`)
for (const file of files) {
  await $`node scripts/check-locale.js locales/${file}`
}
echo('all locales complete')
"""

_ZX_CHECK = """\
const fs = require('fs')
const base = JSON.parse(fs.readFileSync('locales/en-GB.json', 'utf8'))
const file = process.argv[2]
const data = JSON.parse(fs.readFileSync(file, 'utf8'))
const missing = Object.keys(base).filter((key) => !(key in data))
if (missing.length) {
  console.error(`${file}: missing ${missing.length} key(s): ${missing.join(', ')}`)
  process.exit(1)
}
console.log(`${file}: ${Object.keys(data).length} keys ok`)
"""


@recipe("zx-locale-check-script-fails", "zx", "script", [nbin("zx"), "--version"], needs=("node",))
def _zx(root):
    """Write the `zx-locale-check-script-fails` project under `root`; return its command and signals."""
    _package(root, "webshop-i18n", {"private": True})
    link_node_modules(root)
    write(root, "scripts/check-locales.mjs", _ZX_SCRIPT)
    write(root, "scripts/check-locale.js", _ZX_CHECK)
    keys = [f"{area}.{item}" for area in ("cart", "checkout", "account", "search", "orders", "help")
            for item in ("title", "empty", "total", "submit", "cancel", "back", "next", "error", "retry", "done")]
    languages = ["en", "de", "fr", "es", "it", "pt", "nl", "pl", "sv", "da", "fi", "cs", "sk", "hu", "ro", "el"]
    regions = ["GB", "DE", "FR", "ES", "IT", "PT", "NL", "PL", "SE", "DK", "FI", "CZ", "AT", "BE", "CH", "IE", "LU",
               "GR", "RO", "HU"]
    for lang in languages:
        for region in regions:
            tag = f"{lang}-{region}"
            own = [k for k in keys if not (tag == "pt-CH" and k in ("checkout.total", "checkout.retry"))]
            write(root, f"locales/{tag}.json", json.dumps({k: f"{tag} {k}" for k in own}, indent=1) + "\n")
    return Run(["zx", "scripts/check-locales.mjs"], [
        S("stderr", r"^\$ node scripts/check-locale\.js locales/pt-CH\.json$", "the command that failed among 320"),
        S("stderr", r"^(Error: )?locales/pt-CH\.json: missing 2 key\(s\): checkout\.total, checkout\.retry$",
          "its report and the error it raised"),
        S("stderr", r"^    exit code: 1$", "its exit status"),
    ], expect_exit=exits(1), timeout=600)


def _lage_package(n: int) -> dict[str, str]:
    """The files of one workspace package: a TypeScript module built with tsc; package 17 returns a string where
    its declared return type is a number."""
    ret = "String(cents / 100)" if n == 17 else "cents / 100"
    deps = {f"@shop/pkg-{n - 1:02d}": "*"} if n % 5 else {}
    return {
        "package.json": json.dumps({"name": f"@shop/pkg-{n:02d}", "version": "1.0.0", "private": True,
                                    "scripts": {"build": "tsc -p ."}, "dependencies": deps}, indent=2) + "\n",
        "tsconfig.json": json.dumps({"compilerOptions": {"strict": True, "outDir": "dist", "declaration": True,
                                                         "target": "es2022", "module": "commonjs"},
                                     "include": ["src"]}) + "\n",
        "src/index.ts": (f"export function toEuros{n}(cents: number): number {{\n  return {ret};\n}}\n\n"
                         f"export const CURRENCY_{n} = 'EUR';\n"),
    }


@recipe("lage-build-one-package-fails", "lage", "build", npmver("lage"), needs=("node", "git"))
def _lage(root):
    """Write the `lage-build-one-package-fails` project under `root`; return its command and signals."""
    _package(root, "shop-monorepo", {"private": True, "workspaces": ["packages/*"]})
    link_node_modules(root)
    write(root, "lage.config.js", "module.exports = { pipeline: { build: ['^build'] }, npmClient: 'npm' }\n")
    for n in range(30):
        for rel, text in _lage_package(n).items():
            write(root, f"packages/pkg-{n:02d}/{rel}", text)
    write(root, "package-lock.json", json.dumps({"name": "shop-monorepo", "version": "1.0.0", "lockfileVersion": 3,
                                                 "requires": True, "packages": {}}, indent=2) + "\n")
    sh("git init -q && git add -A && git -c user.name=dev -c user.email=dev@example.com commit -qm init", root)
    return Run(["lage", "build", "--concurrency", "2", "--no-cache"], [
        S("stdout", r"^@shop/pkg-17 build (✖ fail|failed, took [\d.]+s, queued for [\d.]+s)$", "the one package that failed"),
        S("stdout", r"^\[@shop/pkg-17 build\] ERROR DETECTED$", "its log's heading"),
        S("stdout", r"^src/index\.ts\(2,3\): error TS2322: Type 'string' is not assignable to type 'number'\.$",
          "the compiler error"),
        S("stdout", r"^npm error Lifecycle script `build` failed with error:$", "the script's failure"),
        S("stdout", r"^success: \d+, skipped: \d+, pending: \d+, aborted: \d+, failed: 1$", "the counts"),
    ], expect_exit=exits(1), timeout=900)
