"""Hooded recipes for npm tools: japa, IBM OpenAPI Validator, graphql-schema-linter, npm-run-all (run-s), dpdm,
vue-tsc, quick-lint-js, nodemon, ts-unused-exports, manypkg, clean-css, documentation.js.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from hooded_common import NPM, Run, S, exits, link_node_modules, nbin, npmver, recipe, sh, vbin, write  # noqa: F401

NPM_PINS = ["@japa/runner@4.2.0", "@japa/assert@4.0.1", "vue-tsc@2.1.10", "vue@3.5.13", "typescript@5.6.3",
            "npm-run-all@4.1.5", "ibm-openapi-validator@1.38.4", "graphql-schema-linter@3.0.1", "graphql@16.11.0",
            "dpdm@4.3.0", "nodemon@3.1.14", "@microsoft/api-extractor@7.60.2", "ts-unused-exports@11.0.1",
            "@manypkg/cli@0.25.1", "quick-lint-js@3.2.0", "clean-css-cli@5.6.3",
            "documentation@14.0.3"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}

def _package(root: str, name: str, extra: dict | None = None, rel: str = "package.json") -> None:
    """Write a package.json called `name` (with `extra` keys) at `root/rel`."""
    write(root, rel, json.dumps({"name": name, "version": "1.0.0", **(extra or {})}, indent=2) + "\n")


_JAPA_BIN = """\
import { assert } from '@japa/assert'
import { configure, processCLIArgs, run } from '@japa/runner'

processCLIArgs(process.argv.splice(2))
configure({ files: ['tests/**/*.spec.js'], plugins: [assert()] })
run()
"""

_SLUG = """\
export function slugify(title) {
  return title.toLowerCase().normalize('NFKD').replace(/[\\u0300-\\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
}
"""


def _japa_spec(part: int) -> str:
    """A japa spec of 60 slug tests for one catalogue section; one expects a slug the code does not make."""
    tests = []
    for n in range(60):
        title = f"Summer Sale {part}-{n}: Caf\\u00e9 & Cr\\u00e8me"
        want = f"summer-sale-{part}-{n}-cafe-creme"
        if (part, n) == (17, 41):
            want = f"summer-sale-{part}-{n}-cafe-and-creme"
        tests.append(f"  test('slug of product {part}-{n}', ({{ assert }}) => {{\n"
                     f"    assert.equal(slugify('{title}'), '{want}')\n  }})\n")
    return (f"import {{ test }} from '@japa/runner'\nimport {{ slugify }} from '../src/slug.js'\n\n"
            f"test.group('catalogue section {part}', () => {{\n" + "\n".join(tests) + "})\n")


@recipe("japa-spec-one-failure-among-passes", "japa", "test-runner", npmver("@japa/runner"), needs=("node",))
def _japa(root):
    """Write the `japa-spec-one-failure-among-passes` project under `root`; return its command and signals."""
    _package(root, "catalogue", {"private": True, "type": "module"})
    link_node_modules(root)
    write(root, "bin/test.js", _JAPA_BIN)
    write(root, "src/slug.js", _SLUG)
    for part in range(30):
        write(root, f"tests/section{part:02d}.spec.js", _japa_spec(part))
    return Run(["node", "bin/test.js"], [
        S("stdout", r"^catalogue section 17 \(tests/section17\.spec\.js\)$", "the failing test's group and file"),
        S("stdout", r"^  ✖ slug of product 17-41 ", "the one failing test among 1,800"),
        S("stdout", r"^ FAILED $", "the verdict"),
        S("stdout", r"^Tests  1799 passed, 1 failed \(1800\)$", "the count"),
        S("stderr", r"^❯ catalogue section 17 / slug of product 17-41$", "the failure's heading"),
        S("stderr", r"AssertionError: expected 'summer-sale-17-41-cafe-creme' to equal 'summer-sale-17-41-cafe-and-creme'",
          "the failed assertion"),
        S("stderr", r"at Object\.executor .*\(tests/section17\.spec\.js:170:12\)", "the test's own frame"),
    ], expect_exit=exits(1))


def _openapi(resources: int) -> dict:
    """An OpenAPI 3.0 document of a fleet API: list/get paths for each resource, schemas in camelCase as the
    team wrote them, one path referring to a schema that was renamed and one operationId used twice."""
    paths, schemas = {}, {}
    for n in range(resources):
        name = f"Vehicle{n:02d}"
        schemas[name] = {"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string"}, "plateNumber": {"type": "string"}, "fuelLevel": {"type": "integer"},
            "lastService": {"type": "string", "format": "date"}}}
        ref = f"#/components/schemas/{'VehicleLegacy' if n == 23 else name}"
        paths[f"/fleet{n:02d}/vehicles"] = {"get": {
            "operationId": "listVehicles" if n in (7, 31) else f"listVehicles{n:02d}", "summary": f"List vehicles of fleet {n}",
            "responses": {"200": {"description": "The vehicles", "content": {"application/json": {"schema": {
                "type": "array", "items": {"$ref": ref}}}}}}}}
        paths[f"/fleet{n:02d}/vehicles/{{vehicleId}}"] = {"get": {
            "operationId": f"getVehicle{n:02d}", "summary": f"Get one vehicle of fleet {n}",
            "parameters": [{"name": "vehicleId", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "The vehicle", "content": {"application/json": {"schema": {
                "$ref": f"#/components/schemas/{name}"}}}}}}}
    return {"openapi": "3.0.3", "info": {"title": "Fleet API", "version": "1.4.0", "description": "Fleet management."},
            "servers": [{"url": "https://fleet.example.com/api"}], "paths": paths, "components": {"schemas": schemas}}


@recipe("lint-openapi-fleet-api-two-errors", "lint-openapi", "linter", [nbin("lint-openapi"), "--version"],
        needs=("lint-openapi",))
def _lint_openapi(root):
    """Write the `lint-openapi-fleet-api-two-errors` project under `root`; return its command and signals."""
    write(root, "openapi.json", json.dumps(_openapi(40), indent=2) + "\n")
    return Run(["lint-openapi", "openapi.json"], [
        S("stdout", r"^  Message :   ('#/components/schemas/VehicleLegacy' does not exist|Every operation must have "
          r'unique "operationId"\.)$', "the two errors of substance among 322 style errors"),
        S("stdout", r"^  Rule    :   (invalid-ref|operation-operationId-unique)$", "their rules"),
        S("stdout", r"^  Path    :   paths\./fleet31/vehicles\.get\.operationId$", "where the duplicate is"),
        S("stdout", r"^  Total number of (errors   : 322|warnings : 1163)$", "the totals"),
    ], expect_exit=exits(1))


def _graphql_type(n: int) -> str:
    """A catalogue type and its connection, described the way half of the team does it."""
    described = n % 2 == 0
    doc = f'"""A product of catalogue shard {n}."""\n' if described else ""
    fdoc = '  """The identifier."""\n' if described else ""
    return (f"{doc}type Product{n} {{\n{fdoc}  id: ID!\n  name: String!\n  price_cents: Int!\n  tags: [String]\n"
            f"  related: [Product{(n + 1) % 60}!]!\n}}\n\n"
            f"type Product{n}Connection {{\n  edges: [Product{n}!]!\n  total: Int!\n}}\n\n")


@recipe("graphql-schema-linter-catalogue-unknown-type", "graphql-schema-linter", "linter",
        npmver("graphql-schema-linter"), needs=("graphql-schema-linter",))
def _graphql_schema_linter(root):
    """Write the `graphql-schema-linter-catalogue-unknown-type` project under `root`; return its command and signals."""
    types = "".join(_graphql_type(n) for n in range(60))
    query = "type Query {\n" + "".join(f"  products{n}(first: Int): Product{n}Connection!\n" for n in range(60))
    query += "  warehouse(id: ID!): Warehouse\n}\n"
    write(root, "schema/catalogue.graphql", types)
    write(root, "schema/query.graphql", query)
    return Run(["graphql-schema-linter", "schema/*.graphql"], [
        S("stdout", r"^/.*/schema/query\.graphql$", "the file of the finding"),
        S("stdout", r'^62:23 Unknown type "Warehouse"\. invalid-graphql-schema$', "the schema error"),
        S("stdout", r"^✖ 1 error detected$", "the count"),
    ], expect_exit=exits(1))


_STEP = """\
const fs = require('fs')
const path = require('path')

const [kind, dir] = process.argv.slice(2)
const files = fs.readdirSync(dir).sort()
for (const file of files) {
  const text = fs.readFileSync(path.join(dir, file), 'utf8')
  if (kind === 'icons' && !text.includes('viewBox')) {
    throw new Error(`${file}: <svg> has no viewBox, cannot build the sprite`)
  }
  console.log(`[${kind}] ${path.join(dir, file)} -> dist/${kind}/${file} (${text.length} bytes)`)
}
console.log(`[${kind}] ${files.length} files done`)
"""


@recipe("run-s-build-steps-one-fails", "run-s", "build", npmver("npm-run-all"), needs=("run-s",))
def _run_s(root):
    """Write the `run-s-build-steps-one-fails` project under `root`; return its command and signals."""
    steps = {"styles": ("css", 180), "scripts": ("js", 260), "icons": ("svg", 150), "fonts": ("woff2", 40)}
    scripts = {f"build:{kind}": f"node tools/step.js {kind} src/{kind}" for kind in steps}
    _package(root, "storefront", {"private": True, "scripts": {**scripts, "build": "run-s build:*"}})
    link_node_modules(root)
    write(root, "tools/step.js", _STEP)
    for kind, (ext, count) in steps.items():
        for n in range(count):
            body = f"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 24 24\"><path d=\"M{n} 0h24\"/></svg>\n"
            if kind == "icons" and n == 97:
                body = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"24\" height=\"24\"><path d=\"M0 0h24\"/></svg>\n"
            write(root, f"src/{kind}/{kind[:-1]}-{n:03d}.{ext}", body if kind == "icons" else f"/* {kind} {n} */\n" * (n % 7 + 1))
    return Run(["run-s", "build:*"], [
        S("stdout", r"^> storefront@1\.0\.0 build:icons$", "the step that failed"),
        S("stderr", r"^/.*/tools/step\.js:9$", "where it threw"),
        S("stderr", r"^Error: icon-097\.svg: <svg> has no viewBox, cannot build the sprite$", "the exception"),
        S("stderr", r"^    at Object\.<anonymous> \(/.*/tools/step\.js:9:11\)$", "the project's own frame"),
        S("stderr", r'^ERROR: "build:icons" exited with 1\.$', "the verdict"),
    ], expect_exit=exits(1))


def _ts_module(layer: str, n: int, imports: list[str]) -> str:
    """A TypeScript module of an app's `layer` that imports `imports` (paths relative to src)."""
    lines = "".join(f"import {{ {name.split('/')[-1].replace('-', '_')} }} from '../{name}'\n" for name in imports)
    return f"{lines}\nexport function {layer}_{n}(input: number): number {{\n  return input + {n}\n}}\n"


@recipe("dpdm-tree-two-circular-chains", "dpdm", "linter", npmver("dpdm"), needs=("dpdm",))
def _dpdm(root):
    """Write the `dpdm-tree-two-circular-chains` project under `root`; return its command and signals."""
    for n in range(70):
        write(root, f"src/util/util_{n}.ts", _ts_module("util", n, []))
        write(root, f"src/models/models_{n}.ts", _ts_module("models", n, [f"util/util_{n}", f"util/util_{(n + 3) % 70}"]))
        write(root, f"src/services/services_{n}.ts", _ts_module("services", n, [f"models/models_{n}", f"util/util_{n}"]))
        write(root, f"src/routes/routes_{n}.ts", _ts_module("routes", n, [f"services/services_{n}", f"models/models_{n}"]))
    write(root, "src/models/models_12.ts", _ts_module("models", 12, ["util/util_12", "services/services_12"]))
    write(root, "src/util/util_40.ts", _ts_module("util", 40, ["routes/routes_37"]))
    write(root, "src/index.ts", "".join(f"export * from './routes/routes_{n}'\n" for n in range(70)))
    return Run(["dpdm", "--no-progress", "--exit-code", "circular:1", "src/index.ts"], [
        S("stdout", r"^• Circular Dependencies$", "the section of findings"),
        S("stdout", r"^  [12]\) src/(services/services_12\.ts -> src/models/models_12\.ts|routes/routes_37\.ts -> .* -> "
          r"src/util/util_40\.ts)$", "the two cycles among 281 modules"),
    ], expect_exit=exits(1))


def _vue_component(n: int) -> str:
    """A single-file component of an order dashboard, with typed props and a computed total."""
    return ("<script setup lang=\"ts\">\nimport { computed } from 'vue'\n\n"
            "interface Line { sku: string; quantity: number; unitPrice: number }\n"
            f"const props = defineProps<{{ lines: Line[]; currency: string }}>()\n"
            "const total = computed(() => props.lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0))\n"
            "</script>\n\n<template>\n  <section class=\"panel\">\n"
            f"    <h2>Panel {n}</h2>\n    <p>{{{{ total.toFixed(2) }}}} {{{{ props.currency }}}}</p>\n  </section>\n</template>\n")


@recipe("vue-tsc-dashboard-type-errors", "vue-tsc", "type-checker", [nbin("vue-tsc"), "--version"], needs=("vue-tsc",))
def _vue_tsc(root):
    """Write the `vue-tsc-dashboard-type-errors` project under `root`; return its command and signals."""
    _package(root, "dashboard", {"private": True, "type": "module"})
    link_node_modules(root)
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {
        "target": "ES2020", "module": "ESNext", "moduleResolution": "Bundler", "strict": True, "jsx": "preserve",
        "noEmit": True, "skipLibCheck": True}, "include": ["src/**/*.ts", "src/**/*.vue"]}, indent=2) + "\n")
    write(root, "src/env.d.ts", "declare module '*.vue' {\n  import type { DefineComponent } from 'vue'\n"
          "  const component: DefineComponent<object, object, unknown>\n  export default component\n}\n")
    for n in range(36):
        write(root, f"src/components/Panel{n:02d}.vue", _vue_component(n))
    write(root, "src/components/Panel21.vue", _vue_component(21).replace(
        "<p>{{ total.toFixed(2) }}", "<p>{{ total.toFixed('2') }}").replace(
        "sum + line.quantity * line.unitPrice", "sum + line.quantity * line.price"))
    write(root, "src/App.vue", "<script setup lang=\"ts\">\nimport Panel03 from './components/Panel03.vue'\n\n"
          "const lines = [{ sku: 'A-1', quantity: '2', unitPrice: 9.5 }]\n</script>\n\n<template>\n"
          "  <Panel03 :lines=\"lines\" currency=\"EUR\" />\n</template>\n")
    return Run(["vue-tsc", "--noEmit", "--pretty", "false"], [
        S("stdout", r"^src/(App|components/Panel21)\.vue\(\d+,\d+\): error TS\d+: ", "the three type errors"),
        S("stdout", r"^      Type 'string' is not assignable to type 'number'\.$", "the first error's root cause"),
    ], expect_exit=exits(2))


def _widget_script(n: int) -> str:
    """A page script from a jQuery-era site: globals from script tags ($, moment, _) and a form handler."""
    return (f"// widget {n}: order form enhancements\n$(function () {{\n  var form = $('#order-{n}')\n"
            f"  form.on('submit', function (event) {{\n    var due = moment().add({n % 14 + 1}, 'days')\n"
            f"    var lines = _.filter(form.serializeArray(), function (field) {{ return field.value !== '' }})\n"
            f"    analytics.track('order-{n}', {{ lines: lines.length, due: due.format('YYYY-MM-DD') }})\n"
            "  })\n})\n")


@recipe("quick-lint-js-legacy-site-two-errors", "quick-lint-js", "linter", [nbin("quick-lint-js"), "--version"],
        needs=("quick-lint-js",))
def _quick_lint_js(root):
    """Write the `quick-lint-js-legacy-site-two-errors` project under `root`; return its command and signals."""
    files = []
    for n in range(160):
        files.append(f"public/js/widget-{n:03d}.js")
        write(root, files[-1], _widget_script(n))
    write(root, "public/js/widget-058.js", _widget_script(58).replace("    var due =", "    const due =").replace(
        "    analytics.track", "    due = due.startOf('day')\n    analytics.track"))
    write(root, "public/js/widget-131.js", _widget_script(131).replace("return field.value !== '' }", "return field.value !== '' "))
    return Run(["quick-lint-js", *files], [
        S("stderr", r"^public/js/widget-(058|131)\.js:\d+:\d+: error: ", "the four errors among 480 warnings"),
        S("stderr", r"^public/js/widget-058\.js:5:11: note: const variable declared here \[E0003\]$",
          "where the assigned const was declared"),
    ], command="quick-lint-js public/js/*.js", expect_exit=exits(1))


_WORKER = """\
const { resize } = require('./lib/images')

async function main() {
  for (let job = 0; job < 420; job++) {
    const result = await resize({ id: job, width: 1200 - (job % 5) * 200, format: job === 287 ? 'heic' : 'webp' })
    console.log(`job ${job}: resized image ${result.id} to ${result.width}px ${result.format}`)
  }
}

main()
"""

_IMAGES = """\
const ENCODERS = { webp: (w) => w, avif: (w) => w, jpeg: (w) => w }

exports.resize = async function resize(image) {
  const encode = ENCODERS[image.format]
  return { ...image, width: encode(image.width) }
}
"""


@recipe("nodemon-worker-crash-unhandled-rejection", "nodemon", "crash", [nbin("nodemon"), "--version"], needs=("nodemon",))
def _nodemon(root):
    """Write the `nodemon-worker-crash-unhandled-rejection` project under `root`; return its command and signals."""
    _package(root, "image-worker", {"private": True, "main": "worker.js"})
    write(root, "worker.js", _WORKER)
    write(root, "lib/images.js", _IMAGES)
    return Run(["nodemon", "--exitcrash", "worker.js"], [
        S("stdout", r"\[nodemon\] app crashed", "nodemon's verdict"),
        S("stderr", r"^/.*/lib/images\.js:5$", "where it threw"),
        S("stderr", r"^TypeError: encode is not a function$", "the exception"),
        S("stderr", r"^    at resize \(/.*/lib/images\.js:5:29\)$", "the project's frame that raised"),
    ], expect_exit=exits(1), timeout=60)


def _ts_exports(n: int) -> str:
    """A formatting helper module that exports a family of helpers, of which the app uses the first."""
    return "".join(f"export function format{n}_{k}(value: number): string {{\n  return value.toFixed({k})\n}}\n\n"
                   for k in range(4))


@recipe("ts-unused-exports-helpers-and-dead-file", "ts-unused-exports", "linter", npmver("ts-unused-exports"),
        needs=("ts-unused-exports",))
def _ts_unused_exports(root):
    """Write the `ts-unused-exports-helpers-and-dead-file` project under `root`; return its command and signals."""
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "module": "ESNext",
                                                                 "moduleResolution": "Bundler"}, "include": ["src"]}) + "\n")
    for n in range(220):
        write(root, f"src/format/format{n:03d}.ts", _ts_exports(n))
    uses = "".join(f"import {{ format{n}_0 }} from './format/format{n:03d}'\n" for n in range(220) if n != 164)
    calls = " + ".join(f"format{n}_0(x)" for n in range(220) if n != 164)
    write(root, "src/main.ts", f"{uses}\nexport function render(x: number): string {{\n  return {calls}\n}}\n")
    return Run(["ts-unused-exports", "tsconfig.json", "--findCompletelyUnusedFiles", "--excludePathsFromReport=main.ts"], [
        S("stdout", r"^220 modules with unused exports$", "the count"),
        S("stdout", r"/src/format/format164\.ts", "the one module none of whose exports is used, and the file unused"),
        S("stdout", r"^Completely unused files:$", "the heading of the rarer finding"),
    ], expect_exit=exits(1))


@recipe("manypkg-check-monorepo-mismatches", "manypkg", "linter", npmver("@manypkg/cli"), needs=("manypkg",))
def _manypkg(root):
    """Write the `manypkg-check-monorepo-mismatches` project under `root`; return its command and signals."""
    _package(root, "shop-monorepo", {"private": True, "workspaces": ["packages/*"]})
    write(root, "package-lock.json", json.dumps({"name": "shop-monorepo", "version": "1.0.0", "lockfileVersion": 3,
                                                 "requires": True, "packages": {}}, indent=2) + "\n")
    names = ["api", "web", "admin", "worker", "ui", "config", "db", "mailer"]
    for n, name in enumerate(names):
        deps = {"lodash": "^4.17.21", "zod": "^3.23.8" if name != "admin" else "^3.22.0"}
        if name != "ui":
            deps["@shop/ui"] = "^1.0.0" if name != "worker" else "^0.9.0"
        _package(root, f"@shop/{name}", {"license": "MIT", "dependencies": deps}, rel=f"packages/{name}/package.json")
    return Run(["manypkg", "check"], [
        S("stderr", r"^☔️ error @shop/", "every error: two mismatched ranges, seven unsorted dependency lists"),
    ], expect_exit=exits(1))


def _stylesheet(n: int) -> str:
    """A component stylesheet of a storefront theme."""
    return "".join(f".card-{n}-{k} {{\n  display: flex;\n  margin: 0 0 {k}px 0;\n  padding: {k % 4 * 4}px;\n"
                   f"  color: #{(n * 37 + k) % 4096:03x};\n}}\n\n" for k in range(30))


@recipe("cleancss-batch-warnings-missing-import", "cleancss", "build", [nbin("cleancss"), "--version"], needs=("cleancss",))
def _cleancss(root):
    """Write the `cleancss-batch-warnings-missing-import` project under `root`; return its command and signals."""
    for n in range(48):
        write(root, f"theme/card{n:02d}.css", _stylesheet(n))
    write(root, "theme/card17.css", _stylesheet(17) + ".card-17-promo {\n  color: red;;\n  border: 1px solid\n}}\n")
    write(root, "theme/card40.css", _stylesheet(40) + ".card-40-legacy { background: url(/img/bg.png) no-repeat }\n"
          "@import url(print.css);\n")
    return Run(["cleancss", "--batch", "--batch-suffix", ".min", "--debug", "theme/*.css"], [
        S("stderr", r"^File: theme/card40\.css$", "the file whose import is missing"),
        S("stderr", r'ERROR.*: Ignoring local @import of "theme/print\.css" as resource is missing\.$', "the error"),
    ], command="cleancss --batch --batch-suffix .min --debug theme/*.css", expect_exit=exits(1))


def _documented_module(n: int) -> str:
    """A geometry library module with JSDoc comments on each function."""
    return "".join(f"/**\n * Scale a {shape} of module {n} by a factor.\n * @param {{number}} size the {shape}'s size\n"
                   f" * @param {{number}} factor how much to scale\n * @returns {{number}} the scaled size\n */\n"
                   f"export function scale{shape.capitalize()}{n}(size, factor) {{\n  return size * factor\n}}\n\n"
                   for shape in ("circle", "square", "hexagon"))


@recipe("documentation-lint-jsdoc-one-warning", "documentation", "docs", [nbin("documentation"), "--version"],
        needs=("documentation",))
def _documentation(root):
    """Write the `documentation-lint-jsdoc-one-warning` project under `root`; return its command and signals."""
    for n in range(80):
        write(root, f"src/shapes/shape{n:02d}.js", _documented_module(n))
    write(root, "src/shapes/shape29.js", _documented_module(29).replace(
        "@param {number} factor how much to scale\n * @returns {number} the scaled size\n */\nexport function scaleSquare29",
        "@param {Number} factor how much to scale\n * @returns {number} the scaled size\n */\nexport function scaleSquare29"))
    write(root, "src/shapes/shape63.js", _documented_module(63).replace(
        "@param {number} size the hexagon's size", "@param {numbr} size the hexagon's size").replace(
        "@returns {number} the scaled size\n */\nexport function scaleCircle63", "@return {number} the scaled size\n"
        " * @throws {RangeErr} when the factor is negative\n */\nexport function scaleCircle63"))
    return Run(["documentation", "lint", "src/shapes/*.js"], [
        S("stdout", r"^/.*/src/shapes/shape29\.js$", "the file of the warning"),
        S("stdout", r"^  14:1  warning  type Number found, number is standard$", "the one warning, nothing worse"),
        S("stdout", r"^⚠ 1 warning$", "the count"),
    ], command="documentation lint src/shapes/*.js", expect_exit=exits(1))
