"""Cowled recipes for npm tools: Astro, Express with morgan, wsrun, ospec, pta, LintHTML, swagger-cli, ncc,
API Extractor, EJS, patch-package, lockfile-lint.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from cowled_common import Run, S, exits, link_node_modules, nbin, npmver, recipe, served, sh, write  # noqa: F401

NPM_PINS = ["astro@5.18.2", "express@4.22.3", "morgan@1.12.1", "wsrun@5.2.4", "ospec@4.2.1", "pta@1.2.0", "zora@5.2.0",
            "@linthtml/linthtml@0.10.2", "@apidevtools/swagger-cli@4.0.4", "@vercel/ncc@0.38.4",
            "@microsoft/api-extractor@7.60.2", "ejs@3.1.10", "patch-package@8.0.1", "lockfile-lint@4.14.1"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}

_ASTRO_PAGE = """\
---
import { products } from "../../data/products.js";

export function getStaticPaths() {
  return products.map((product) => ({ params: { slug: product.slug }, props: { product } }));
}

const { product } = Astro.props;
const price = product.price.amount.toFixed(2);
---
<html lang="en">
  <head><title>{product.name}</title></head>
  <body>
    <h1>{product.name}</h1>
    <p class="price">{price} {product.price.currency}</p>
    <p>{product.description}</p>
  </body>
</html>
"""

_ASTRO_DATA = """\
const colours = ["red", "blue", "green", "black", "white", "grey", "navy", "olive"];
const kinds = ["jacket", "scarf", "boot", "glove", "hat", "sock", "shirt", "belt"];

export const products = Array.from({ length: 5200 }, (_, n) => ({
  slug: `${colours[n % 8]}-${kinds[(n >> 3) % 8]}-${n}`,
  name: `${colours[n % 8]} ${kinds[(n >> 3) % 8]} no. ${n}`,
  description: `Catalogue item ${n}, woven in batch ${n % 37}.`,
  price: n === 4711 ? null : { amount: 9.5 + (n % 90) * 1.25, currency: "EUR" },
}));
"""


@recipe("astro-build-catalogue-one-page-throws", "astro", "build", npmver("astro"), needs=("astro",))
def _astro(root):
    """Write the `astro-build-catalogue-one-page-throws` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "package.json", json.dumps({"name": "catalogue", "private": True, "type": "module",
                                            "scripts": {"build": "astro build"}}, indent=2) + "\n")
    write(root, "astro.config.mjs", 'import { defineConfig } from "astro/config";\n\nexport default defineConfig({});\n')
    write(root, "src/data/products.js", _ASTRO_DATA)
    write(root, "src/pages/products/[slug].astro", _ASTRO_PAGE)
    write(root, "src/pages/index.astro", "---\n---\n<html><body><h1>Catalogue</h1></body></html>\n")
    return Run(["astro", "build"], [
        S("stdout", r"^[\d:]+   ├─ /products/olive-hat-4711/index\.html$", "the page being generated when the build failed"),
        S("stderr", r"^Cannot read properties of null \(reading 'amount'\)$", "the error"),
        S("stderr", r"^  Stack trace:$", "the trace's start"),
        S("stderr", r"^    at file:///.*/pages/products/_slug_\.astro\.mjs\?time=\d+:\d+:\d+$", "the page's own frame"),
    ], env={"ASTRO_TELEMETRY_DISABLED": "1"}, expect_exit=exits(1), timeout=600)


_EXPRESS_APP = """\
const express = require("express");
const morgan = require("morgan");
const { lookupRate } = require("./rates");

const app = express();
app.use(morgan("combined"));
app.get("/rates/:route", (req, res) => res.json(lookupRate(Number(req.params.route))));
app.use((err, req, res, next) => {
  console.error(err.stack);
  res.status(500).json({ error: "internal" });
});
const server = app.listen(19131, "127.0.0.1");
process.on("SIGTERM", () => server.close());
"""

_EXPRESS_RATES = """\
const ZONES = new Map();
for (let route = 0; route < 3600; route++) {
  if (route !== 2290) ZONES.set(route, { zone: route % 9, base: 4 + (route % 13) });
}

function surcharge(zone) {
  return zone.base * 0.12;
}

function lookupRate(route) {
  const zone = ZONES.get(route);
  return { route, zone: zone.zone, price: zone.base + surcharge(zone) };
}

module.exports = { lookupRate };
"""

_EXPRESS_CLIENT = """\
const http = require("http");

function get(route) {
  return new Promise((resolve) => {
    http.get({ host: "127.0.0.1", port: 19131, path: `/rates/${route}`, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
  });
}

(async () => {
  let failed = 0;
  for (let route = 0; route < 3600; route++) if ((await get(route)) !== 200) failed++;
  console.log(`rate sync: 3600 requests, ${failed} failed`);
})();
"""


@recipe("express-morgan-log-one-500", "express", "log", npmver("express"), needs=("node",))
def _express(root):
    """Write the `express-morgan-log-one-500` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "server.js", _EXPRESS_APP)
    write(root, "rates.js", _EXPRESS_RATES)
    write(root, "sync.js", _EXPRESS_CLIENT)
    command = served("node server.js", 19131, "node sync.js")
    return Run(["node", "server.js"], [
        S("stderr", r"^TypeError: Cannot read properties of undefined \(reading 'zone'\)$", "the one request that threw"),
        S("stderr", r"^    at lookupRate \(/.*/rates\.js:\d+:\d+\)$", "the project's frame that threw"),
        S("stderr", r"^    at /.*/express-morgan-log-one-500/server\.js:\d+:\d+$", "the route's frame"),
        S("stdout", r'"GET /rates/2290 HTTP/1\.1" 500 ', "its line among 3,600 in the access log"),
        S("stdout", r"^rate sync: 3600 requests, 1 failed$", "the client's summary"),
    ], command=command, expect_exit=exits(0), timeout=300)


_WS_BUILD = """\
const fs = require("fs");
const path = require("path");

const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
const sources = fs.readdirSync("src").sort();
fs.mkdirSync("dist", { recursive: true });
for (const file of sources) {
  const text = fs.readFileSync(path.join("src", file), "utf8");
  for (const dep of text.matchAll(/require\\("(@shop\\/[a-z-]+)"\\)/g)) {
    const target = path.join("..", dep[1].slice(6), "dist", "index.js");
    if (!fs.existsSync(target)) {
      console.error(`error: ${pkg.name}: src/${file}: cannot resolve ${dep[1]} (no ${target}; was it built?)`);
      process.exit(2);
    }
  }
  fs.writeFileSync(path.join("dist", file), text);
  console.log(`  compiled src/${file} -> dist/${file} (${text.length} bytes)`);
}
console.log(`built ${pkg.name}: ${sources.length} modules`);
"""


@recipe("wsrun-stages-build-one-package-fails", "wsrun", "build", npmver("wsrun"), needs=("wsrun",))
def _wsrun(root):
    """Write the `wsrun-stages-build-one-package-fails` project under `root`; return its command and signals."""
    link_node_modules(root)
    names = ["core", "money", "i18n", "catalog", "cart", "checkout", "payments", "shipping", "tax", "search",
             "reviews", "accounts", "orders", "invoices", "returns", "loyalty", "emails", "admin", "reports", "storefront"]
    deps = {n: names[max(0, i - 3):i][-2:] for i, n in enumerate(names)}
    deps["reports"] = ["orders", "analytics"]
    write(root, "package.json", json.dumps({"name": "shop", "private": True, "workspaces": ["packages/*"]}, indent=2))
    write(root, "scripts/build.js", _WS_BUILD)
    for name in names:
        manifest = {"name": f"@shop/{name}", "version": "1.0.0", "main": "dist/index.js",
                    "scripts": {"build": "node ../../scripts/build.js"},
                    "dependencies": {f"@shop/{d}": "1.0.0" for d in deps[name] if d in names}}
        write(root, f"packages/{name}/package.json", json.dumps(manifest, indent=2))
        for k in range(14):
            uses = "".join(f'const {d.replace("-", "_")} = require("@shop/{d}");\n' for d in deps[name][:1 + k % 2])
            write(root, f"packages/{name}/src/{'index' if k == 0 else f'part{k:02d}'}.js",
                  f"{uses}module.exports.part{k} = () => {k};\n")
    return Run(["wsrun", "--stages", "--report", "--bin=npm", "run", "build"], [
        S("stderr", r"^ \| error: @shop/reports: src/part01\.js: cannot resolve @shop/analytics ", "the build's error"),
        S("stderr", r"^ \| npm error Lifecycle script `build` failed with error:$", "npm's report of it"),
        S("stderr", r"^ \| `npm run build` failed with exit code 2$", "wsrun's report of it"),
        S("stdout", r"^  1 packages finished `run build` with error: @shop/reports$", "the report's failing package"),
        S("stdout", r"^  19 packages finished `run build` successfully: ", "the report's count of the rest"),
    ], expect_exit=exits(1), timeout=600)


def _zora_spec(n: int) -> str:
    """A zora spec of 50 unit-conversion tests for one family of units."""
    wrong = "1.6093" if n == 17 else "1.609344"
    return (f'import {{ test }} from "zora";\nimport {{ convert }} from "../src/convert.js";\n\n'
            f"for (let k = 0; k < 50; k++) {{\n"
            f"  test(`family {n}: ${{k}} units round-trip`, (t) => {{\n"
            f"    const value = k * {n + 1} + 0.5;\n"
            f"    t.eq(convert(convert(value, 'a', 'b'), 'b', 'a'), value, 'round trip is exact');\n"
            f"    t.ok(convert(value, 'a', 'b') >= 0, 'non-negative');\n"
            f"    if (k === 31) t.eq(convert(1, 'mi', 'km'), {wrong}, 'one mile in km');\n  }});\n}}\n")


@recipe("pta-log-reporter-one-failed-assertion", "pta", "test-runner", npmver("pta"), needs=("pta",))
def _pta(root):
    """Write the `pta-log-reporter-one-failed-assertion` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "package.json", json.dumps({"name": "units", "type": "module",
                                            "scripts": {"test": "pta -R log test/*.test.js"}}, indent=2) + "\n")
    write(root, "src/convert.js", "const FACTORS = { a: 1, b: 2, mi: 1.609344, km: 1 };\n\n"
          "export function convert(value, from, to) {\n  return (value * FACTORS[from]) / FACTORS[to];\n}\n")
    for n in range(30):
        write(root, f"test/family{n:02d}.test.js", _zora_spec(n))
    return Run(["pta", "-R", "log", *(f"test/family{n:02d}.test.js" for n in range(30))], [
        S("stdout", r'^\{"type":"ASSERTION","data":\{"pass":false,"actual":1\.609344,"expected":1\.6093,', "the one failed assertion among 3,000"),
        S("stdout", r'^\{"type":"TEST_START","data":\{"description":"family 17: 31 units round-trip"', "the test it belongs to"),
    ], expect_exit=exits(1), timeout=300)


_OSPEC_SPEC = """\
const o = require("ospec");
const { parseDuration } = require("../src/duration.js");

o.spec("parseDuration", () => {
  o("minutes", () => { o(parseDuration("15m")).equals(900) });
  o("hours", () => { o(parseDuration("2h")).equals(7200) });
  o("days", () => { o(parseDuration("3d")).equals(259200) });
  o("combined", () => { o(parseDuration("1h30m")).equals(5400) });
  o("weeks", () => { o(parseDuration("2w")).equals(1209600) });
  o("seconds", () => { o(parseDuration("45s")).equals(45) });
});
"""


@recipe("ospec-duration-spec-one-failure", "ospec", "test-runner", npmver("ospec"), needs=("ospec",))
def _ospec(root):
    """Write the `ospec-duration-spec-one-failure` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "src/duration.js", 'const UNITS = { s: 1, m: 60, h: 3600, d: 86400 };\n\n'
          'function parseDuration(text) {\n  let total = 0;\n  for (const [, n, unit] of text.matchAll(/(\\d+)([smhdw])/g)) {\n'
          '    total += Number(n) * UNITS[unit];\n  }\n  return total;\n}\n\nmodule.exports = { parseDuration };\n')
    write(root, "tests/duration.js", _OSPEC_SPEC)
    write(root, "tests/format.js", 'const o = require("ospec");\n\no.spec("formatDuration", () => {\n'
          + "".join(f'  o("case {k}", () => {{ o({k} * 60).equals({k * 60}) }});\n' for k in range(40)) + "});\n")
    return Run(["ospec"], [
        S("stderr", r"^parseDuration > weeks:$", "the failing test"),
        S("stderr", r"^NaN$", "what it got"),
        S("stderr", r"^  should equal$", "the comparison"),
        S("stderr", r"^1209600$", "what it expected"),
        S("stderr", r"^    at /.*/tests/duration\.js:9:\d+$", "where"),
        S("stdout", r"^1 out of 46 assertions failed", "the count"),
    ], expect_exit=exits(1))


def _legacy_page(n: int) -> str:
    """One page of an old product-documentation site: inline styles, single quotes, images without alt text."""
    sections = "".join(
        f"    <div class='section' style='margin-top:{k * 4}px'>\n"
        f"      <h2 id='s{k}'>Step {k + 1}: configure the widget's {('power', 'network', 'sensor', 'display')[k % 4]} module</h2>\n"
        f"      <img src='img/p{n}-{k}.png'>\n"
        f"      <p>Hold the reset button for {k + 2} seconds, then release it and wait until the status light "
        f"turns green; if it blinks amber instead, repeat the procedure from the beginning of step {k + 1}.</p>\n"
        f"    </div>\n" for k in range(3))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <title>Widget manual, page {n}</title>\n  </head>\n"
            f"  <body>\n    <h1 id=\"top\">Widget manual, page {n}</h1>\n{sections}  </body>\n</html>\n")


@recipe("linthtml-manual-warnings-two-errors", "linthtml", "linter", [nbin("linthtml"), "--version"], needs=("linthtml",))
def _linthtml(root):
    """Write the `linthtml-manual-warnings-two-errors` project under `root`; return its command and signals."""
    write(root, ".linthtmlrc.json", json.dumps({"rules": {
        "attr-quote-style": ["warning", "double"], "img-req-alt": "warning", "no-inline-style": "warning",
        "line-max-len": ["warning", 120], "tag-close": "error", "attr-no-dup": "error"}}, indent=2))
    for n in range(260):
        page = _legacy_page(n)
        if n == 143:
            page = page.replace("<img src='img/p143-2.png'>", "<img src='img/p143-2.png' src='img/p143-2@2x.png'>")
        if n == 211:
            page = page.replace("then release it and wait", "then <b>release it and wait", 1)
        write(root, f"manual/page{n:03d}.html", page)
    return Run(["linthtml", "manual/**/*.html"], [
        S("stdout", r"^File: manual/page143\.html$", "the first error's file"),
        S("stdout", r"^ +\d+:\d+ +error +The attribute src is duplicated +attr-no-dup", "an error among 5,400 warnings"),
        S("stdout", r"^File: manual/page211\.html$", "the second error's file"),
        S("stdout", r"^ +\d+:\d+ +error +Tag is not closed +tag-close", "the other error"),
        S("stdout", r"^✖ \d+ problems \(2 errors, \d+ warnings\)$", "the counts"),
    ], expect_exit=exits(1))


def _openapi_spec() -> str:
    """The fleet service's OpenAPI document, grown by hand: many paths sharing component schemas."""
    resources = ["vehicles", "drivers", "routes", "stops", "depots", "fuel-cards", "trips", "alerts", "shifts",
                 "inspections", "tyres", "invoices"]
    paths = "".join(
        f"  /{r}:\n    get:\n      operationId: list_{r.replace('-', '_')}\n      responses:\n        '200':\n"
        f"          description: the {r}\n          content:\n            application/json:\n              schema:\n"
        f"                type: array\n                items:\n                  $ref: '#/components/schemas/"
        f"{'Inspection' if r == 'inspections' else 'Resource'}'\n"
        f"  /{r}/{{id}}:\n    get:\n      operationId: get_{r.replace('-', '_')}\n      parameters:\n"
        f"        - name: id\n          in: path\n          required: true\n          schema:\n            type: string\n"
        f"      responses:\n        '200':\n          description: one of the {r}\n          content:\n"
        f"            application/json:\n              schema:\n                $ref: '#/components/schemas/Resource'\n"
        for r in resources)
    return ("openapi: 3.0.3\ninfo:\n  title: Fleet API\n  version: 2.4.0\npaths:\n" + paths +
            "components:\n  schemas:\n    Resource:\n      type: object\n      properties:\n        id:\n"
            "          type: string\n        updated:\n          type: string\n          format: date-time\n"
            "    Inspections:\n      type: object\n      properties:\n        passed:\n          type: boolean\n")


@recipe("swagger-cli-validate-missing-ref", "swagger-cli", "linter", [nbin("swagger-cli"), "--version"],
        needs=("swagger-cli",))
def _swagger_cli(root):
    """Write the `swagger-cli-validate-missing-ref` project under `root`; return its command and signals."""
    write(root, "api/openapi.yaml", _openapi_spec())
    return Run(["swagger-cli", "validate", "api/openapi.yaml"], [
        S("stderr", r'^Token "Inspection" does not exist\.$', "the error: a $ref to a schema that is not there"),
    ], expect_exit=exits(1))


@recipe("ncc-build-action-bundle", "ncc", "build", [nbin("ncc"), "--version"], needs=("ncc",))
def _ncc(root):
    """Write the `ncc-build-action-bundle` project under `root`; return its command and signals."""
    write(root, "package.json", json.dumps({"name": "deploy-action", "version": "1.3.0", "main": "src/index.js"}) + "\n")
    write(root, "src/index.js", 'const { deploy } = require("./deploy");\nconst { notify } = require("./notify");\n\n'
          "deploy(process.env.TARGET || 'staging').then(notify);\n")
    write(root, "src/deploy.js", 'const { withRetry } = require("./lib/retry");\nconst { upload } = require("./lib/upload");\n\n'
          "async function deploy(target) {\n  return withRetry(() => upload(target), 3);\n}\n\nmodule.exports = { deploy };\n")
    write(root, "src/notify.js", "async function notify(result) {\n  console.log('deployed', result);\n}\n\nmodule.exports = { notify };\n")
    write(root, "src/lib/upload.js", "async function upload(target) {\n  return { target, ok: true };\n}\n\nmodule.exports = { upload };\n")
    write(root, "src/lib/retry.js", "async function withRetry(fn, n) {\n  for (let i = 0; ; i++) {\n"
          "    try {\n      return await fn();\n    } catch (err) {\n      if (i + 1 >= n) throw err;\n    }\n  }\n}\n\n"
          "module.exports = { withRetry };\n")
    return Run(["ncc", "build", "src/index.js", "-o", "dist"], [
        S("stdout", r"^\d+kB +dist/index\.js$", "the bundle it wrote"),
        S("stdout", r"^\d+kB +\[\d+ms\] - ncc 0\.38\.4$", "the build's summary"),
    ], expect_exit=exits(0))


_INVOICE_EJS = """\
<!DOCTYPE html>
<html>
<body>
  <h1>Invoice <%= invoice.number %></h1>
  <p>Customer: <%= invoice.customer.name %></p>
  <table>
  <% invoice.lines.forEach(function (line) { %>
    <tr><td><%= line.sku %></td><td><%= line.qty %></td><td><%= formatMoney(line.price) %></td></tr>
  <% }) %>
  </table>
  <p>Total: <%= formatMoney(invoice.total) %></p>
</body>
</html>
"""


@recipe("ejs-render-invoice-undefined-helper", "ejs", "template", npmver("ejs"), needs=("ejs",))
def _ejs(root):
    """Write the `ejs-render-invoice-undefined-helper` project under `root`; return its command and signals."""
    write(root, "templates/invoice.ejs", _INVOICE_EJS)
    data = {"invoice": {"number": "INV-2291", "customer": {"name": "Harbour Supplies"}, "total": 182.5,
                        "lines": [{"sku": f"SKU-{k}", "qty": k + 1, "price": 12.5 * (k + 1)} for k in range(4)]}}
    write(root, "data/invoice.json", json.dumps(data, indent=2))
    return Run(["ejs", "templates/invoice.ejs", "-f", "data/invoice.json", "-o", "out/invoice.html"], [
        S("stderr", r"^ReferenceError: /.*/templates/invoice\.ejs:8$", "the error and the template's line"),
        S("stderr", r"^ >> 8\| ", "the template line that failed"),
        S("stderr", r"^formatMoney is not defined$", "why"),
        S("stderr", r'^    at eval \("/.*/templates/invoice\.ejs":25:7\)$', "the template's own frame"),
    ], expect_exit=exits(1))


def _geo_declarations() -> str:
    """The hand-maintained declarations of a geometry kit: many exports, TSDoc written loosely."""
    shapes = ["Point", "Line", "Polygon", "Circle", "Box", "Ring", "Path", "Grid", "Tile", "Mesh", "Arc", "Spline"]
    parts = ["interface Options {\n    precision: number;\n    units: 'm' | 'km';\n}\n\n"]
    for shape in shapes:
        low = shape.lower()
        parts.append(f"/**\n * A {low} in projected coordinates.\n */\nexport declare class {shape} {{\n"
                     f"    constructor(coords: number[], options?: Options);\n    area(): number;\n"
                     f"    length(): number;\n}}\n\n")
        for verb in ("buffer", "simplify", "project", "clip", "rotate", "scale", "translate", "snap"):
            parts.append(f"/**\n * {verb.capitalize()} a {low}.\n * @param {low} the {low} to change\n"
                         f" * @param amount how much\n */\nexport declare function {verb}{shape}({low}: {shape}, "
                         f"amount: number): {shape};\n\n")
    return "".join(parts)


@recipe("api-extractor-changed-signature-warnings", "api-extractor", "docs", [nbin("api-extractor"), "--version"],
        needs=("api-extractor",))
def _api_extractor(root):
    """Write the `api-extractor-changed-signature-warnings` project under `root`; return its command and signals."""
    write(root, "package.json", json.dumps({"name": "geo-kit", "version": "3.2.0", "types": "lib/index.d.ts"}) + "\n")
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "declaration": True,
                                                                 "module": "commonjs", "target": "es2020"},
                                             "include": ["lib"]}, indent=2) + "\n")
    write(root, "api-extractor.json", json.dumps({
        "mainEntryPointFilePath": "<projectFolder>/lib/index.d.ts",
        "apiReport": {"enabled": True, "reportFolder": "<projectFolder>/etc/"},
        "docModel": {"enabled": False}, "dtsRollup": {"enabled": False}, "tsdocMetadata": {"enabled": False}},
        indent=2) + "\n")
    write(root, "lib/index.d.ts", _geo_declarations())
    write(root, "etc/geo-kit.api.md", "## API Report File for \"geo-kit\"\n\n```ts\n\n"
          "// @public\nexport function bufferPoint(point: Point, amount: number): Point;\n\n```\n")
    return Run(["api-extractor", "run"], [
        S("stderr", r"Warning: You have changed the API signature for this project\. ", "the one finding of its kind among 300 warnings: why the run fails"),
        S("stdout", r"API Extractor completed with warnings", "the verdict"),
    ], expect_exit=exits(1))


def _patched_package(root: str, name: str, version: str, body: str) -> None:
    """An installed package in the project's node_modules: its manifest and its one module."""
    write(root, f"node_modules/{name}/package.json", json.dumps({"name": name, "version": version, "main": "index.js"}))
    write(root, f"node_modules/{name}/index.js", body)


def _patch(name: str, version: str, old: str, new: str, line: int) -> str:
    """A patch-package patch file changing one line of a package's index.js."""
    return (f"diff --git a/node_modules/{name}/index.js b/node_modules/{name}/index.js\n"
            f"index 1111111..2222222 100644\n--- a/node_modules/{name}/index.js\n+++ b/node_modules/{name}/index.js\n"
            f"@@ -{line},1 +{line},1 @@\n-{old}\n+{new}\n")


@recipe("patch-package-one-patch-fails", "patch-package", "package-manager", npmver("patch-package"),
        needs=("patch-package",))
def _patch_package(root):
    """Write the `patch-package-one-patch-fails` project under `root`; return its command and signals."""
    packages = {"csv-lite": ("2.1.0", "const SEP = ',';", "const SEP = ';';"),
                "retry-lite": ("0.9.3", "const TRIES = 3;", "const TRIES = 5;"),
                "slug-lite": ("1.4.1", "const MAX = 60;", "const MAX = 80;"),
                "money-lite": ("3.0.2", "const DIGITS = 2;", "const DIGITS = 4;")}
    deps = {}
    for name, (version, old, new) in packages.items():
        installed = old if name != "money-lite" else "const DIGITS = 2; // rounding moved to format()"
        _patched_package(root, name, version, f"'use strict';\n{installed}\nmodule.exports = {{}};\n")
        write(root, f"patches/{name}+{version}.patch", _patch(name, version, old, new, 2))
        deps[name] = version
    write(root, "package.json", json.dumps({"name": "ledger-app", "version": "1.0.0", "dependencies": deps,
                                            "scripts": {"postinstall": "patch-package"}}, indent=2) + "\n")
    write(root, "package-lock.json", json.dumps({"name": "ledger-app", "lockfileVersion": 3, "packages": {
        "": {"dependencies": deps}, **{f"node_modules/{n}": {"version": v[0]} for n, v in packages.items()}}}, indent=2))
    return Run(["patch-package"], [
        S("stdout", r"^\*\*ERROR\*\* Failed to apply patch for package money-lite at path$", "the one patch that failed among four"),
        S("stdout", r"^    patches/money-lite\+3\.0\.2\.patch$", "the patch file"),
        S("stdout", r"^patch-package finished with 1 error\(s\)\.$", "the summary"),
    ], expect_exit=exits(0))


def _lock_entries(count: int) -> dict:
    """A package-lock v3 `packages` map of `count` resolved dependencies from the public registry."""
    words = ["alpha", "beta", "delta", "gamma", "kappa", "lambda", "sigma", "omega", "theta", "zeta"]
    entries = {}
    for n in range(count):
        name = f"{words[n % 10]}-{words[(n // 10) % 10]}-{n}"
        host = "https://registry.npmjs.org"
        if n == 517:
            host = "http://npm.internal-mirror.example:4873"
        entries[f"node_modules/{name}"] = {"version": f"{n % 7}.{n % 11}.{n % 5}",
                                           "resolved": f"{host}/{name}/-/{name}-{n % 7}.{n % 11}.{n % 5}.tgz",
                                           "integrity": f"sha512-{'A' * 20}{n:06d}=="}
    return entries


@recipe("lockfile-lint-one-foreign-host", "lockfile-lint", "linter", npmver("lockfile-lint"), needs=("lockfile-lint",))
def _lockfile_lint(root):
    """Write the `lockfile-lint-one-foreign-host` project under `root`; return its command and signals."""
    write(root, "package-lock.json", json.dumps({"name": "storefront", "version": "4.0.0", "lockfileVersion": 3,
                                                 "requires": True, "packages": {"": {"name": "storefront"},
                                                                                **_lock_entries(900)}}, indent=2))
    return Run(["lockfile-lint", "--path", "package-lock.json", "--type", "npm", "--allowed-hosts", "npm",
                "--validate-https"], [
        S("stderr", r"^detected invalid host\(s\) for package: omega-beta-517@", "the one package from a foreign host among 900"),
        S("stderr", r"^detected invalid protocol for package: omega-beta-517@", "and over plain http"),
        S("stderr", r"✖ Error: security issues detected!", "the verdict"),
    ], expect_exit=exits(1))
