"""Sealed recipes for npm tools and node: cspell, write-good, textlint, jsonlint, ajv, taplo, coffeelint,
tslint, jasmine, uvu, QUnit, html-validate, madge, depcheck, flow, and node running out of heap.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from sealed_common import Run, S, exits, link_node_modules, nbin, recipe, write


def _npm_version(package: str) -> list[str]:
    """A version command reading an npm package's own package.json (for tools without --version)."""
    path = f"/tmp/yarp-gen/sealed/npm/node_modules/{package}/package.json"
    return ["node", "-p", f"require('{path}').version"]


@recipe("cspell-docs-typos", "cspell", "linter", [nbin("cspell"), "--version"], needs=("cspell",))
def _cspell(root):
    """Write the `cspell-docs-typos` project under `root`; return its command and signals."""
    text = "The service reads orders from the queue and writes invoices to the database.\n"
    for n in range(160):
        write(root, f"docs/chapter{n:03d}.md", f"# Chapter {n}\n\n" + text * 5)
    write(root, "docs/chapter123.md", "# Chapter 123\n\nThe servise reads orders and writes invoises.\n")
    return Run(["cspell", "--show-suggestions", "docs/**/*.md"], [
        S("stdout", r"^docs/chapter123\.md:3:\d+ +- Unknown word \((servise|invoises)\)", "each typo with its line"),
        S("stderr", r"^124/160 docs/chapter123\.md [\d.]+ms X$", "the one file with issues in the progress list"),
        S("stderr", r"^CSpell: Files checked: 160, Issues found: 2 in 1 file", "the count"),
    ], expect_exit=exits(1))


@recipe("write-good-readme", "write-good", "linter", _npm_version("write-good"), needs=("write-good",))
def _write_good(root):
    """Write the `write-good-readme` project under `root`; return its command and signals."""
    write(root, "README.md", "The data is processed by the worker. There are many jobs that are queued.\n"
          "It is basically just a simple queue, so it should be fairly easy to use.\n")
    return Run(["write-good", "README.md"], [
        S("stdout", r"^In README\.md$", "the file heading"),
        S("stdout", r"^\S.* on line \d+ at column \d+$", "each suggestion with its place"),
    ], expect_exit=exits(7))


@recipe("textlint-no-todo", "textlint", "linter", [nbin("textlint"), "--version"], needs=("textlint",))
def _textlint(root):
    """Write the `textlint-no-todo` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, ".textlintrc.json", json.dumps({"rules": {"no-todo": True}}))
    for n in range(5):
        write(root, f"docs/step{n}.md", f"# Step {n}\n\nDo the thing number {n}.\n")
    write(root, "docs/release.md", "# Release\n\n- [ ] TODO: tag the release\n\nTODO: write the changelog\n")
    return Run(["textlint", "docs"], [
        S("stdout", r"release\.md$", "the file heading"),
        S("stdout", r"^ +\d+:\d+ +error +Found TODO", "each finding with its line"),
        S("stdout", r"^✖ \d+ problems? \(\d+ errors?", "the count"),
    ], expect_exit=exits(1))


@recipe("jsonlint-parse-error", "jsonlint", "data", _npm_version("jsonlint"), needs=("jsonlint",))
def _jsonlint(root):
    """Write the `jsonlint-parse-error` project under `root`; return its command and signals."""
    entries = ",\n".join(f'    "feature_{n}": {{"enabled": {str(n % 2 == 0).lower()}, "rollout": {n * 5}}}' for n in range(12))
    write(root, "flags.json", "{\n" + entries.replace('"feature_7": {', '"feature_7": {,', 1) + "\n}\n")
    return Run(["jsonlint", "-q", "flags.json"], [
        S("stderr", r"^Error: Parse error on line \d+:$", "the error and its line"),
        S("stderr", r"^Expecting 'STRING', '}', got ','$", "what was wrong"),
    ], expect_exit=exits(1))


AJV_SCHEMA = {"type": "object", "required": ["id", "email", "plan"],
              "properties": {"id": {"type": "integer"}, "email": {"type": "string", "minLength": 3},
                             "plan": {"enum": ["free", "team", "enterprise"]},
                             "seats": {"type": "integer", "minimum": 1}}}


@recipe("ajv-validate-errors", "ajv", "data", _npm_version("ajv-cli"), needs=("ajv",))
def _ajv(root):
    """Write the `ajv-validate-errors` project under `root`; return its command and signals."""
    write(root, "account.schema.json", json.dumps(AJV_SCHEMA, indent=2))
    for n in range(400):
        doc = {"id": n + 1, "email": f"user{n}@example.org", "plan": ["free", "team"][n % 2], "seats": n % 7 + 1}
        if n == 287:
            doc = {"id": "288", "email": "ops@example.org", "plan": "gold", "seats": 0}
        write(root, f"accounts/a{n:03d}.json", json.dumps(doc, indent=2))
    return Run(["ajv", "validate", "-s", "account.schema.json", "-d", "accounts/*.json", "--all-errors"], [
        S("stderr", r"^accounts/a287\.json invalid$", "the one invalid document among 400"),
        S("stderr", r"^ +message: '", "each validation error"),
    ], expect_exit=exits(1))


@recipe("taplo-check-invalid-toml", "taplo", "linter", [nbin("taplo"), "--version"], needs=("taplo",))
def _taplo(root):
    """Write the `taplo-check-invalid-toml` project under `root`; return its command and signals."""
    write(root, "config/app.toml", '[server]\nhost = "0.0.0.0"\nport = 8080\n\n[database]\nurl = "postgres://db/app"\n'
          'pool = 10\n\n[server]\nworkers = 4\n')
    write(root, "config/jobs.toml", '[jobs.cleanup]\nschedule = "0 3 * * *"\nenabled = true\n')
    write(root, "config/cache.toml", '[cache]\nttl = 300\nbackend = "redis\n')
    return Run(["taplo", "check", "config/app.toml", "config/jobs.toml", "config/cache.toml"], [
        S("stderr", r"^error: ", "each error"),
        S("stderr", r"┌─ .*config/(app|cache)\.toml:\d+:\d+$", "each error's place"),
        S("stderr", r"^ERROR operation failed error=some files were not valid$", "the verdict"),
    ], env={"RUST_LOG": None}, expect_exit=exits(1))


@recipe("coffeelint-src", "coffeelint", "linter", [nbin("coffeelint"), "--version"], needs=("coffeelint",))
def _coffeelint(root):
    """Write the `coffeelint-src` project under `root`; return its command and signals."""
    write(root, "src/cart.coffee", "class Cart\n  constructor: (@items) ->\n\n  total: ->\n"
          "    sum = 0\n    for item in @items\n      sum += item.price * item.qty\n    sum\n\n"
          "  describe: -> \"Cart with #{@items.length} items and a total that is far too long for a single line of coffee\"\n"
          "\tbroken: -> 1\n")
    for n in range(250):
        write(root, f"src/util{n:03d}.coffee", f"module.exports =\n  scale{n}: (x) -> x * {n}\n")
    return Run(["coffeelint", "src"], [
        S("stdout", r"^  ✗ src/cart\.coffee$", "the file heading"),
        S("stdout", r"✗ #11: \[stdin\]:11:2: error: indentation mismatch$", "the error and its line"),
        S("stdout", r"^✗ Lint! » 1 error and 0 warnings in 251 files$", "the count"),
    ], expect_exit=exits(1))


@recipe("tslint-project", "tslint", "linter", [nbin("tslint"), "--version"], needs=("tslint",))
def _tslint(root):
    """Write the `tslint-project` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "tslint.json", json.dumps({"extends": "tslint:recommended", "rules": {"no-console": True}}))
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {"strict": True, "target": "es2020"}, "include": ["src"]}))
    write(root, "src/orders.ts", "export class Orders {\n    private items: Array<number> = []\n\n"
          "    add(n: number) { this.items.push(n); console.log('added', n) }\n\n"
          "    total(): number {\n        var t = 0\n        for (let i = 0; i < this.items.length; i++) t += this.items[i]\n"
          "        return t\n    }\n}\n")
    write(root, "src/index.ts", "import { Orders } from './orders';\nexport const o = new Orders();\n")
    for n in range(90):
        write(root, f"src/handlers/h{n:02d}.ts", f"export function handle{n}(id: number): number {{\n"
              f"    console.log('handling', id);\n    return id * {n};\n}}\n")
    return Run(["tslint", "-p", "."], [
        S("stdout", r"src/orders\.ts:\d+:\d+$", "the heading of the file with findings other than console calls"),
        S("stdout", r"^ERROR: \d+:\d+ +(array-type|no-var-keyword|prefer-for-of) ", "the findings other than the console call in every handler"),
    ], expect_exit=exits(2))


@recipe("jasmine-one-failure", "jasmine", "test-runner", _npm_version("jasmine"), needs=("jasmine",))
def _jasmine(root):
    """Write the `jasmine-one-failure` project under `root`; return its command and signals."""
    write(root, "spec/support/jasmine.json", json.dumps({"spec_dir": "spec", "spec_files": ["**/*[sS]pec.js"],
                                                         "random": False}))
    write(root, "lib/money.js", "exports.cents = (amount) => Math.round(amount * 100);\n"
          "exports.split = (total, ways) => Array(ways).fill(Math.floor(total / ways));\n")
    specs = "".join(f"  it('converts {n}.25', () => expect(money.cents({n}.25)).toBe({n * 100 + 25}));\n" for n in range(60))
    write(root, "spec/money.spec.js", "const money = require('../lib/money');\n\ndescribe('cents', () => {\n"
          f"{specs}}});\n\ndescribe('split', () => {{\n  it('keeps every cent', () => {{\n"
          "    const parts = money.split(1000, 3);\n    expect(parts.reduce((a, b) => a + b, 0)).toBe(1000);\n  });\n});\n")
    return Run(["jasmine"], [
        S("stdout", r"^1\) split keeps every cent$", "the failed spec"),
        S("stdout", r"^ +Expected 999 to be 1000\.$", "the assertion"),
        S("stdout", r"spec/money\.spec\.js:\d+:\d+\)$", "the spec's frame"),
        S("stdout", r"^61 specs, 1 failure$", "the summary"),
    ], expect_exit=exits(3))


@recipe("uvu-one-failure", "uvu", "test-runner", _npm_version("uvu"), needs=("uvu",))
def _uvu(root):
    """Write the `uvu-one-failure` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "package.json", json.dumps({"name": "slug", "version": "1.0.0", "type": "module"}))
    write(root, "src/slug.js", "export const slug = (s) => s.toLowerCase().replace(/ /g, '-');\n")
    cases = "".join(f"test('word {n}', () => assert.is(slug('Word {n}'), 'word-{n}'));\n" for n in range(30))
    for f in range(90):
        write(root, f"tests/word{f:02d}.test.js", "import { test } from 'uvu';\nimport * as assert from 'uvu/assert';\n"
              "import { slug } from '../src/slug.js';\n\n" + cases + "\ntest.run();\n")
    write(root, "tests/slug.test.js", "import { test } from 'uvu';\nimport * as assert from 'uvu/assert';\n"
          "import { slug } from '../src/slug.js';\n\n" + cases +
          "test('collapses spaces', () => assert.is(slug('Big  Sale'), 'big-sale'));\n\ntest.run();\n")
    return Run(["uvu", "tests"], [
        S("stdout", r"FAIL .*\"collapses spaces\"", "the failed test"),
        S("stdout", r"^ +Expected values to be strictly equal:", "the assertion"),
        S("stdout", r"tests/slug\.test\.js:\d+:\d+\)$", "the test's frame"),
        S("stdout", r"^ +Total: +2731$", "the total"),
        S("stdout", r"^ +Passed: +2730$", "how many passed"),
    ], expect_exit=exits(1))


@recipe("qunit-tap-deep-failure", "qunit", "test-runner", [nbin("qunit"), "--version"], needs=("qunit",))
def _qunit(root):
    """Write the `qunit-tap-deep-failure` project under `root`; return its command and signals."""
    write(root, "src/tax.js", "exports.tax = (net, rate) => Math.round(net * rate) / 100;\n")
    for m in range(6):
        tests = "".join(f"QUnit.test('tax of {n} at rate {m} for region EU-{n % 27:02d} is rounded', a => "
                        f"a.strictEqual(tax({n * 100}, {m + 5}), {round(n * 100 * (m + 5)) / 100}));\n" for n in range(700))
        if m == 3:
            tests += "QUnit.test('tax of a refund is negative', a => a.strictEqual(tax(-1051, 19), -199.7));\n"
        write(root, f"test/tax{m}.js", f"const {{ tax }} = require('../src/tax');\nQUnit.module('tax{m}');\n{tests}")
    return Run(["qunit", "test/"], [
        S("stdout", r"^not ok \d+ tax3 > tax of a refund is negative$", "the one failure among 4,201 tests"),
        S("stdout", r"^ +actual +: -199\.69$|^ +expected: -199\.7$", "the values"),
        S("stdout", r"test/tax3\.js:\d+:\d+\)$", "the test's frame"),
        S("stdout", r"^# fail 1$", "the count"),
    ], expect_exit=exits(1))


@recipe("html-validate-site", "html-validate", "linter", [nbin("html-validate"), "--version"], needs=("html-validate",))
def _html_validate(root):
    """Write the `html-validate-site` project under `root`; return its command and signals."""
    for n in range(150):
        write(root, f"site/p{n:03d}.html", f"<!doctype html>\n<html lang=\"en\">\n<head><title>P{n}</title></head>\n"
              f"<body><main><h1>Page {n}</h1><p>Text.</p></main></body>\n</html>\n")
    write(root, "site/checkout.html", "<!doctype html>\n<html lang=\"en\">\n<head><title>Pay</title></head>\n<body>\n"
          "<main>\n<h1>Pay</h1>\n<img src=\"card.png\">\n<button>Pay</button>\n<div id=\"total\"></div>\n"
          "<div id=\"total\"></div>\n<p><div>nested</div></p>\n</main>\n</body>\n</html>\n")
    return Run(["html-validate", "site"], [
        S("stdout", r"site/checkout\.html$", "the file with the real findings"),
        S("stdout", r"^ +\d+:\d+ +error +(?!DOCTYPE|\s)", "each finding other than the doctype style repeated on every page"),
        S("stdout", r"^✖ 156 problems \(156 errors, 0 warnings\)$", "the count"),
    ], expect_exit=exits(1))


@recipe("madge-circular", "madge", "linter", [nbin("madge"), "--version"], needs=("madge",))
def _madge(root):
    """Write the `madge-circular` project under `root`; return its command and signals."""
    write(root, "src/index.js", "require('./orders');\nrequire('./users');\n")
    write(root, "src/orders.js", "const billing = require('./billing');\nmodule.exports = {};\n")
    write(root, "src/billing.js", "const invoices = require('./invoices');\nmodule.exports = {};\n")
    write(root, "src/invoices.js", "const orders = require('./orders');\nmodule.exports = {};\n")
    write(root, "src/users.js", "const util = require('./util');\nmodule.exports = {};\n")
    write(root, "src/util.js", "module.exports = {};\n")
    return Run(["madge", "--circular", "--no-spinner", "--no-color", "src"], [
        S("stdout", r"^1\) billing\.js > invoices\.js > orders\.js$", "the cycle"),
        S("stderr", r"^✖ Found 1 circular dependency!$", "the verdict"),
    ], expect_exit=exits(1))


@recipe("depcheck-missing-unused", "depcheck", "package-manager", _npm_version("depcheck"), needs=("depcheck",))
def _depcheck(root):
    """Write the `depcheck-missing-unused` project under `root`; return its command and signals."""
    write(root, "package.json", json.dumps({"name": "shop", "version": "1.0.0",
                                            "dependencies": {"express": "^4.0.0", "lodash": "^4.0.0", "moment": "^2.0.0"},
                                            "devDependencies": {"mocha": "^10.0.0"}}, indent=2))
    write(root, "src/app.js", "const express = require('express');\nconst dayjs = require('dayjs');\nmodule.exports = express();\n")
    write(root, "src/util.js", "const _ = require('lodash');\nconst pino = require('pino');\n")
    return Run(["depcheck"], [
        S("stdout", r"^(Unused dependencies|Unused devDependencies|Missing dependencies)$", "each kind of problem"),
        S("stdout", r"^\* ", "each package named"),
    ], expect_exit=exits(255))


@recipe("flow-check-errors", "flow", "type-checker", [nbin("flow"), "version"], needs=("flow",))
def _flow(root):
    """Write the `flow-check-errors` project under `root`; return its command and signals."""
    write(root, ".flowconfig", "[options]\n")
    write(root, "src/cart.js", "// @flow\ntype Item = {price: number, qty: number};\n\n"
          "export function total(items: Array<Item>): number {\n  return items.reduce((s, i) => s + i.price * i.qty, 0);\n}\n\n"
          "export function label(n: number): string {\n  return n;\n}\n\ntotal([{price: '3', qty: 1}]);\n")
    return Run(["flow", "check"], [
        S("stdout", r"^Error -+ src/cart\.js:\d+:\d+$", "each error's heading and place"),
        S("stdout", r"^Cannot (return|call) ", "each error"),
        S("stdout", r"^Found 2 errors$", "the count"),
    ], expect_exit=exits(2))


OOM_SCRIPT = """
const cache = new Map();
function remember(key) {
  cache.set(key, new Array(10000).fill(key));
}
let n = 0;
console.log('warming cache');
for (;;) remember('k' + n++);
"""


@recipe("node-heap-out-of-memory", "node", "crash", ["node", "--version"], needs=("node",))
def _node_oom(root):
    """Write the `node-heap-out-of-memory` project under `root`; return its command and signals."""
    write(root, "warm.js", OOM_SCRIPT)
    return Run(["node", "--max-old-space-size=48", "warm.js"], [
        S("stderr", r"^FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory$", "the crash"),
        S("stdout", r"^warming cache$", "the last step before the crash"),
        S("stderr", r"Aborted +node --max-old-space-size=48 warm\.js$", "the shell's report of the abort"),
    ], command="node --max-old-space-size=48 warm.js; exit $?", expect_exit=exits(134))
