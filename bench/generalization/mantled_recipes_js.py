"""Mantled recipes for npm tools: log4js, teenytest, lebab, Rspack, skott, Peggy, Tailwind CSS, Lightning CSS,
CoffeeScript, Changesets, LiquidJS, ts-prune.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from mantled_common import Run, S, exits, link_node_modules, nbin, npmver, recipe, sh, vbin, write  # noqa: F401

NPM_PINS = ["log4js@6.9.1", "@rspack/cli@1.7.6", "@rspack/core@1.7.6", "lebab@3.2.9", "peggy@5.1.0",
            "tailwindcss@3.4.19", "skott@0.35.12", "ts-prune@0.10.3", "liquidjs@10.31.0", "@changesets/cli@2.31.1",
            "lightningcss-cli@1.33.0", "teenytest@6.0.5", "coffeescript@2.7.1"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}


def _package(root: str, name: str, extra: dict | None = None, rel: str = "package.json") -> None:
    """Write a package.json called `name` (with `extra` keys) at `root/rel`."""
    write(root, rel, json.dumps({"name": name, "version": "1.0.0", **(extra or {})}, indent=2) + "\n")


_WEBHOOKS = """\
const log4js = require('log4js')
const { deliver } = require('./src/deliver')

log4js.configure({
  appenders: { out: { type: 'stdout', layout: { type: 'pattern', pattern: '%d{ISO8601_WITH_TZ_OFFSET} [%p] %c - %m' } } },
  categories: { default: { appenders: ['out'], level: 'info' } },
})
const log = log4js.getLogger('webhooks')

const subscribers = require('./subscribers.json')
let failed = 0
for (const sub of subscribers) {
  try {
    const receipt = deliver(sub, { event: 'invoice.paid', attempt: 1 })
    log.info(`delivered invoice.paid to ${sub.url} (${receipt.bytes} bytes, signature ${receipt.signature})`)
  } catch (err) {
    failed += 1
    log.error(`delivery to subscriber ${sub.id} failed:`, err)
  }
}
log.info(`webhook run finished: ${subscribers.length} subscribers, ${failed} failed`)
log4js.shutdown()
"""

_DELIVER = """\
const crypto = require('crypto')

function sign(secret, body) {
  return crypto.createHmac('sha256', secret.key).update(body).digest('hex').slice(0, 16)
}

function deliver(sub, payload) {
  const body = JSON.stringify({ ...payload, subscriber: sub.id })
  return { bytes: body.length, signature: sign(sub.secret, body) }
}

module.exports = { deliver }
"""


@recipe("log4js-webhooks-one-delivery-threw", "log4js", "log", npmver("log4js"), needs=("node",))
def _log4js(root):
    """Write the `log4js-webhooks-one-delivery-threw` project under `root`; return its command and signals."""
    _package(root, "webhooks", {"private": True})
    link_node_modules(root)
    write(root, "run.js", _WEBHOOKS)
    write(root, "src/deliver.js", _DELIVER)
    subs = [{"id": n, "url": f"https://hooks.example.com/tenant-{n:04d}/billing", "secret": {"key": f"k{n * 7919}"}}
            for n in range(4800)]
    subs[3527]["secret"] = None
    write(root, "subscribers.json", json.dumps(subs) + "\n")
    return Run(["node", "run.js"], [
        S("stdout", r"\[ERROR\] webhooks - delivery to subscriber 3527 failed: TypeError: Cannot read properties of null "
          r"\(reading 'key'\)$", "the one delivery that threw among 4,800"),
        S("stdout", r"^    at sign \(.*/src/deliver\.js:4:45\)$", "the project's frame that raised"),
        S("stdout", r"\[INFO\] webhooks - webhook run finished: 4800 subscribers, 1 failed$", "the summary"),
    ], expect_exit=exits(0))


def _teeny_module(part: int) -> str:
    """A teenytest module of 50 VAT tests for one country group; one expects the old reduced rate."""
    tests = []
    for n in range(50):
        net = 100 + part * 13 + n * 7
        rate = (19, 7, 21, 10)[n % 4]
        want = round(net * (100 + rate)) / 100
        if (part, n) == (23, 31):
            want = round(net * 105) / 100
        tests.append(f"  vat{part:02d}_{n:02d}: function () {{\n"
                     f"    assert.strictEqual(gross({net}, {rate}), {want})\n  }}")
    return ("const assert = require('assert')\nconst { gross } = require('../lib/vat')\n\n"
            "module.exports = {\n" + ",\n".join(tests) + "\n}\n")


@recipe("teenytest-one-failure-among-passes", "teenytest", "test-runner", npmver("teenytest"), needs=("teenytest",))
def _teenytest(root):
    """Write the `teenytest-one-failure-among-passes` project under `root`; return its command and signals."""
    _package(root, "vat", {"private": True})
    link_node_modules(root)
    write(root, "lib/vat.js", "function gross(net, rate) {\n  return Math.round(net * (100 + rate)) / 100\n}\n\n"
          "module.exports = { gross }\n")
    for part in range(100):
        write(root, f"test/vat{part:02d}.test.js", _teeny_module(part))
    return Run(["teenytest", "test/*.test.js"], [
        S("stdout", r'^not ok 1182 - "vat23_31" - test #32 in `test/vat23\.test\.js`$', "the one failing test among 5,000"),
        S("stdout", r"^  AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal:$", "its assertion"),
        S("stdout", r"^677\.6 !== 646\.8$", "the values"),
        S("stdout", r"^    at Object\.vat23_31 \(.*/test/vat23\.test\.js:99:12\)$", "the test's own frame"),
        S("stdout", r"^# Test run failed!$", "the verdict"),
        S("stdout", r"^#   (Passed: 4999|Failed: 1)$", "the counts"),
    ], expect_exit=exits(1))


def _legacy_js(n: int) -> str:
    """A browser module from before ES2015: var everywhere, prototype classes, callbacks, CommonJS."""
    return (f"var util = require('./util');\nvar config = require('../config');\n\n"
            f"function Widget{n}(el, opts) {{\n  var self = this;\n  this.el = el;\n  this.opts = opts || {{}};\n"
            f"  this.items = [];\n  el.addEventListener('click', function (e) {{\n    self.toggle(e);\n  }});\n}}\n\n"
            f"Widget{n}.prototype.toggle = function (e) {{\n  for (var i = 0; i < this.items.length; i++) {{\n"
            f"    var item = this.items[i];\n    item.open = !item.open;\n  }}\n"
            f"  for (var i = 0; i < this.items.length; i++) {{\n    var item = this.items[i];\n    item.seen = true;\n  }}\n"
            f"  var total = this.items.length;\n"
            f"  total = total + 1;\n  return util.format('widget {n}: %d items', total);\n}};\n\n"
            f"Widget{n}.prototype.load = function (cb) {{\n  var url = config.base + '/widgets/{n}';\n"
            f"  util.get(url, function (err, data) {{\n    if (err) return cb(err);\n    cb(null, data.items);\n  }});\n}};\n\n"
            f"module.exports = Widget{n};\n")


@recipe("lebab-modernize-legacy-one-unparsable", "lebab", "linter", [nbin("lebab"), "--version"], needs=("lebab",))
def _lebab(root):
    """Write the `lebab-modernize-legacy-one-unparsable` project under `root`; return its command and signals."""
    for n in range(220):
        write(root, f"public/js/widget{n:03d}.js", _legacy_js(n))
    write(root, "public/js/widget131.js", _legacy_js(131).replace("  var total = this.items.length;\n",
                                                                 "  var total = this.items.length;;\n  }\n"))
    return Run(["lebab", "--replace", "public/js", "--transform", "let,arrow,class,commonjs"], [
        S("stderr", r"^Error transforming: public/js/widget131\.js$", "the file that stopped the run, after 88 files' warnings"),
        S("stderr", r"^SyntaxError: 'return' outside of function$", "the exception"),
        S("stderr", r"^  lineNumber: 26,$", "where in the file"),
    ], expect_exit=exits(1))


def _shop_page(n: int) -> str:
    """One lazily loaded page module of a shop front end, using the shared formatting helpers."""
    helper = "./formaters/currency" if n == 143 else "./formatters/currency"
    return (f"import {{ formatPrice }} from '{helper}'\nimport {{ el }} from './dom'\n\n"
            f"const PRODUCTS = Array.from({{ length: 24 }}, (_, k) => ({{ id: {n} * 100 + k, price: (k + {n}) * 1.25 }}))\n\n"
            f"export default function render(root) {{\n  const list = el('ul', {{ class: 'page-{n}' }})\n"
            f"  for (const p of PRODUCTS) list.append(el('li', {{}}, `#${{p.id}} ${{formatPrice(p.price)}}`))\n"
            f"  root.replaceChildren(list)\n}}\n")


_RSPACK_CONFIG = """\
module.exports = {
  mode: 'production',
  entry: './src/index.js',
  output: { path: __dirname + '/dist', filename: '[name].[contenthash:8].js', clean: true },
  resolve: { extensions: ['.js'] },
}
"""


@recipe("rspack-build-pages-one-unresolved", "rspack", "build", [nbin("rspack"), "--version"], needs=("rspack",))
def _rspack(root):
    """Write the `rspack-build-pages-one-unresolved` project under `root`; return its command and signals."""
    _package(root, "shop-front", {"private": True})
    link_node_modules(root)
    write(root, "rspack.config.js", _RSPACK_CONFIG)
    write(root, "src/dom.js", "export function el(tag, attrs, text) {\n  const node = document.createElement(tag)\n"
          "  Object.assign(node, attrs)\n  if (text) node.textContent = text\n  return node\n}\n")
    write(root, "src/formatters/currency.js", "export function formatPrice(value) {\n"
          "  return new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'EUR' }).format(value)\n}\n")
    for n in range(260):
        write(root, f"src/page{n:03d}.js", _shop_page(n))
    routes = "".join(f"  '/p/{n}': () => import('./page{n:03d}'),\n" for n in range(260))
    write(root, "src/index.js", f"const routes = {{\n{routes}}}\n\nconst load = routes[location.pathname]\n"
          "if (load) load().then((m) => m.default(document.getElementById('app')))\n")
    return Run(["rspack", "build"], [
        S("stdout", r"^ERROR in \./src/page143\.js 1:1-50$", "the module in error, among 262"),
        S("stdout", r"^  × Module not found: Can't resolve '\./formaters/currency' in ", "the error"),
        S("stdout", r"^Rspack compiled with 1 error in \d+ ms$", "the verdict"),
    ], expect_exit=exits(1), timeout=300)


def _module_ts(n: int, count: int) -> str:
    """A TypeScript service module importing the next two (the import graph of a growing back end)."""
    imports = "".join(f"import {{ step{m} }} from './service{m:03d}'\n" for m in (n + 1, n + 2) if m < count)
    if n == 187:
        imports += "import { step41 } from './service041'\n"
    calls = " + ".join([f"step{m}(x)" for m in (n + 1, n + 2) if m < count] or ["x"])
    return f"{imports}\nexport function step{n}(x: number): number {{\n  return x > 1000 ? x : {calls}\n}}\n"


@recipe("skott-circular-one-cycle", "skott", "linter", npmver("skott"), needs=("skott",))
def _skott(root):
    """Write the `skott-circular-one-cycle` project under `root`; return its command and signals."""
    _package(root, "ledger-api", {"private": True})
    write(root, "tsconfig.json", '{ "compilerOptions": { "strict": true, "module": "esnext" } }\n')
    for n in range(240):
        write(root, f"src/service{n:03d}.ts", _module_ts(n, 240))
    return Run(["skott", "src/service000.ts", "--displayMode=file-tree", "--showCircularDependencies",
                "--exitCodeOnCircularDependencies=1"], [
        S("stdout", r"^ ✖ \(146\) circular dependencies found$", "the verdict and count (one import back closes them all)"),
    ], expect_exit=exits(1), timeout=300)


_GRAMMAR = """\
{{
  function num(text) {{ return Number(text) }}
}}

Rules
  = head:Rule tail:(_ ";" _ Rule)* _ {{ return [head, ...tail.map((t) => t[3])] }}

Rule
  = "allow" __ subject:Subject __ "to" __ verb:Verb __ object:Object cond:Condition?
    {{ return {{ effect: "allow", subject, verb, object, cond }} }}
  / "deny" __ subject:Subject __ "to" __ verb:Verb __ object:Object cond:Condition?
    {{ return {{ effect: "deny", subject, verb, object, cond }} }}

Subject = "role:" name:Name {{ return {{ role: name }} }} / "user:" name:Name {{ return {{ user: name }} }}
Verb = "read" / "write" / "delete" / "approve"
Object = "resource:" name:Path {{ return name }}
Condition = __ "when" __ left:Name _ op:Operator _ right:Value {{ return {{ left, op, right }} }}
Operator = "==" / "!=" / "<=" / ">=" / "<" / ">"
Value = digits:$[0-9]+ {{ return num(digits) }} / "'" text:$[^']* "'" {{ return text }}
Name = $[a-z][a-z0-9_-]*
Path = $Segment|1.., "/"|
Segement = [a-z0-9_*-]+
_ = [ \\t\\n]*
__ = [ \\t\\n]+
"""


@recipe("peggy-policy-grammar-undefined-rule", "peggy", "compiler", [nbin("peggy"), "--version"], needs=("peggy",))
def _peggy(root):
    """Write the `peggy-policy-grammar-undefined-rule` project under `root`; return its command and signals."""
    write(root, "src/policy.peggy", _GRAMMAR.format())
    return Run(["peggy", "-o", "src/policy-parser.js", "src/policy.peggy"], [
        S("stderr", r"^Error parsing grammar$", "the verdict"),
        S("stderr", r'^error: Rule "Segment" is not defined$', "the error"),
        S("stderr", r"^ --> src/policy\.peggy:21:9$", "where it is"),
    ], expect_exit=exits(1))


_TAILWIND_CONFIG = """\
module.exports = {
  content: ['./src/**/*.html'],
  theme: { extend: { colors: { brand: { 50: '#eef6ff', 500: '#2563eb', 700: '#1d4ed8' } } } },
}
"""

_TAILWIND_CSS = """\
@tailwind base;
@tailwind components;
@tailwind utilities;

@layer components {
  .btn { @apply rounded-md px-4 py-2 font-semibold; }
  .btn-primary { @apply btn bg-brand-500 text-white hover:bg-brand-700; }
  .btn-ghost { @apply btn bg-transparent text-brand-500 hover:bg-brand-50; }
  .card { @apply rounded-lg border border-gray-200 p-6 shadow-sm; }
  .badge-new { @apply rounded-full bg-brand-100 px-2 text-xs text-brand-700; }
}
"""


@recipe("tailwindcss-build-apply-unknown-class", "tailwindcss", "build", [nbin("tailwindcss"), "--help"],
        needs=("tailwindcss",))
def _tailwindcss(root):
    """Write the `tailwindcss-build-apply-unknown-class` project under `root`; return its command and signals."""
    _package(root, "marketing-site", {"private": True})
    link_node_modules(root)
    write(root, "tailwind.config.js", _TAILWIND_CONFIG)
    write(root, "src/styles.css", _TAILWIND_CSS)
    for n in range(40):
        write(root, f"src/pages/landing{n:02d}.html", f'<main class="card"><h1 class="text-2xl">Offer {n}</h1>'
              f'<a class="btn-primary" href="/buy/{n}">Buy</a><span class="badge-new">new</span></main>\n')
    return Run(["tailwindcss", "-i", "src/styles.css", "-o", "dist/styles.css", "--minify"], [
        S("stderr", r"^CssSyntaxError: tailwindcss: .*/src/styles\.css:10:16: The `bg-brand-100` class does not exist\. ",
          "the error"),
    ], expect_exit=exits(1), timeout=300)


def _stylesheet(n: int) -> str:
    """One component stylesheet of a design system, with nesting and custom properties."""
    return (f".card-{n} {{\n  --card-pad: {4 + n % 5}px;\n  padding: var(--card-pad);\n  border-radius: 6px;\n"
            f"  color: rgb(20 30 {n % 255});\n  & .title {{ font-weight: 600; font-size: {1 + n % 3}rem; }}\n"
            f"  &:hover {{ box-shadow: 0 1px 3px rgba(0, 0, 0, .2); }}\n}}\n\n"
            f"@media (width >= {600 + n}px) {{\n  .card-{n} {{ display: grid; grid-template-columns: 1fr 2fr; }}\n}}\n")


@recipe("lightningcss-bundle-missing-import-panic", "lightningcss", "build", [nbin("lightningcss"), "--version"],
        needs=("lightningcss",))
def _lightningcss(root):
    """Write the `lightningcss-bundle-missing-import-panic` project under `root`; return its command and signals."""
    for n in range(300):
        write(root, f"styles/components/card{n:03d}.css", _stylesheet(n))
    imports = "".join(f'@import "components/card{n:03d}.css";\n' for n in range(300))
    imports = imports.replace("card217.css", "card-217.css")
    write(root, "styles/main.css", imports)
    return Run(["lightningcss", "--bundle", "--minify", "--targets", ">= 0.5%", "styles/main.css", "-o",
                "dist/main.css"], [
        S("stderr", r"^thread 'main' \(\d+\) panicked at src/main\.rs:189:46:$", "the crash"),
        S("stderr", r"^called `Result::unwrap\(\)` on an `Err` value: Error \{ kind: ResolverError\(Os \{ code: 2, kind: NotFound, "
          r'.*filename: "styles/main\.css", line: 217, ', "why: an import of a file that is not there, and where"),
    ], expect_exit=exits(-6))


def _coffee_module(n: int) -> str:
    """A CoffeeScript controller of an old Rails-era front end."""
    return (f"class Orders{n}Controller\n  constructor: (@el, @api) ->\n    @orders = []\n\n"
            f"  load: ->\n    @api.get \"/orders?page={n}\", (data) =>\n      @orders = (o for o in data when o.status isnt 'void')\n"
            f"      @render()\n\n  render: ->\n    html = (\"<li>#{{o.id}}: #{{o.total}}</li>\" for o in @orders).join ''\n"
            f"    @el.innerHTML = \"<ul>#{{html}}</ul>\"\n\nmodule.exports = Orders{n}Controller\n")


@recipe("coffee-compile-one-syntax-error", "coffee", "compiler", [nbin("coffee"), "--version"], needs=("coffee",))
def _coffee(root):
    """Write the `coffee-compile-one-syntax-error` project under `root`; return its command and signals."""
    for n in range(120):
        write(root, f"app/controllers/orders{n:03d}.coffee", _coffee_module(n))
    write(root, "app/controllers/orders064.coffee", _coffee_module(64).replace("(data) =>", "(data) =>)"))
    return Run(["coffee", "--compile", "--output", "build", "app"], [
        S("stderr", r"/app/controllers/orders064\.coffee:6:42: error: unmatched \)$", "the error, in one file of 120"),
        S("stderr", r'^    @api\.get "/orders\?page=64", \(data\) =>\)$', "the line in error"),
    ], expect_exit=exits(1))


def _workspace(root: str, name: str, deps: dict) -> None:
    """One package of the monorepo."""
    _package(root, f"@acme/{name}", {"dependencies": deps}, f"packages/{name}/package.json")
    write(root, f"packages/{name}/index.js", f"module.exports = '{name}'\n")


@recipe("changeset-status-missing-changeset", "changeset", "vcs", npmver("@changesets/cli"), needs=("changeset", "git"))
def _changeset(root):
    """Write the `changeset-status-missing-changeset` project under `root`; return its command and signals."""
    _package(root, "acme-monorepo", {"private": True, "workspaces": ["packages/*"]})
    write(root, ".changeset/config.json", json.dumps({"changelog": False, "commit": False, "access": "restricted",
                                                     "baseBranch": "main", "updateInternalDependencies": "patch"}) + "\n")
    names = [f"pkg-{n:02d}" for n in range(30)]
    for n, name in enumerate(names):
        _workspace(root, name, {f"@acme/{names[n - 1]}": "^1.0.0"} if n else {})
    git = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
           "GIT_COMMITTER_EMAIL": "dev@example.com", "GIT_AUTHOR_DATE": "2024-05-01T10:00:00Z",
           "GIT_COMMITTER_DATE": "2024-05-01T10:00:00Z"}
    sh("git init -q -b main && git add -A && git commit -qm 'initial packages' && git checkout -qb feature/retry", root, env=git)
    for name in ("pkg-07", "pkg-21"):
        write(root, f"packages/{name}/index.js", f"module.exports = {{ name: '{name}', retries: 3 }}\n")
    sh("git commit -qam 'add retries to two clients'", root, env=git)
    link_node_modules(root)
    return Run(["changeset", "status"], [
        S("stderr", r"error Some packages have been changed but no changesets were found\. ", "the error"),
        S("stderr", r"error If this change doesn't need a release, run `changeset add --empty`\.$", "its second error line"),
    ], expect_exit=exits(1))


@recipe("liquidjs-render-strict-undefined", "liquidjs", "crash", npmver("liquidjs"), needs=("liquidjs",))
def _liquidjs(root):
    """Write the `liquidjs-render-strict-undefined` project under `root`; return its command and signals."""
    write(root, "emails/order-shipped.liquid", "Hello {{ customer.first_name }},\n\n"
          "{% for line in order.lines %}- {{ line.qty }} x {{ line.title }} ({{ line.price | money }})\n{% endfor %}\n"
          "Tracking: {{ shipment.tracking_url }}\n")
    order = {"customer": {"first_name": "Ana"}, "order": {"lines": [{"qty": n % 3 + 1, "title": f"Item {n}",
             "price": 4.5 + n} for n in range(12)]}, "shipment": {"carrier": "DHL", "tracking": "JD014600"}}
    write(root, "fixtures/order-1042.json", json.dumps(order, indent=2) + "\n")
    return Run(["liquidjs", "--template", "@emails/order-shipped.liquid", "--context", "@fixtures/order-1042.json",
                "--strict-variables", "--strict-filters"], [
        S("stderr", r"^undefined filter: money, line:3, col:67$", "the error"),
    ], expect_exit=exits(1))


def _ts_module(n: int) -> str:
    """A TypeScript module of the billing service: a function and a type used by the next module."""
    uses = f"import {{ amount{n - 1}, Line{n - 1} }} from './mod{n - 1:03d}'\n\n" if n else ""
    body = f"  return amount{n - 1}([line]) + line.cents\n" if n else "  return line.cents\n"
    extra = f"\nexport function legacyAmount{n}(cents: number): number {{\n  return cents / 100\n}}\n" if n in (88, 203, 317) else ""
    return (f"{uses}export interface Line{n} {{\n  sku: string\n  cents: number\n}}\n\n"
            f"export function amount{n}(lines: Line{n}[]): number {{\n  const line = lines[0]\n{body}}}\n{extra}")


@recipe("ts-prune-three-unused-exports", "ts-prune", "linter", npmver("ts-prune"), needs=("ts-prune",))
def _ts_prune(root):
    """Write the `ts-prune-three-unused-exports` project under `root`; return its command and signals."""
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "module": "commonjs", "target": "es2020"},
                                            "include": ["src"]}) + "\n")
    for n in range(400):
        write(root, f"src/mod{n:03d}.ts", _ts_module(n))
    write(root, "src/index.ts", "import { amount399 } from './mod399'\n\nconsole.log(amount399([{ sku: 'a', cents: 100 }]))\n")
    return Run(["ts-prune", "--error"], [
        S("stdout", r"^src/mod(088|203|317)\.ts:13 - legacyAmount\d+$", "the three unused exports among 400 modules"),
    ], expect_exit=exits(1), timeout=300)
