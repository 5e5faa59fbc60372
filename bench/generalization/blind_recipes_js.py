"""Blind recipes for npm tools and node: biome, oxlint, standard, jshint, htmlhint, ava, node's test
runner, sass, less, babel, swc, vite, tsup, pnpm and yarn.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from blind_common import Run, S, exits, link_node_modules, nbin, recipe, sh, write


def _ver(tool: str) -> list[str]:
    """The version command of a pinned npm tool."""
    return [nbin(tool), "--version"]


def _js_module(i: int) -> str:
    """A small browser module with the usual lint findings: var, ==, an unused variable."""
    return (f"var counter{i} = 0\n"
            f"function bump{i} (step) {{\n  var unused = {i}\n  if (step == null) {{ step = 1 }}\n"
            f"  counter{i} = counter{i} + step\n  return counter{i}\n}}\n"
            f"module.exports = {{ bump{i} }}\n")


@recipe("biome-lint-diagnostics", "biome", "linter", _ver("biome"))
def _biome(root):
    """Write the `biome-lint-diagnostics` project under `root`; return its command and signals."""
    write(root, "biome.json", '{"linter": {"enabled": true, "rules": {"recommended": true}}}\n')
    for i in range(5):
        write(root, f"src/m{i}.js", _js_module(i))
    write(root, "src/bad.js", "export function total(items) {\n  return items.reduce((a, b) => a + b, 0\n}\n")
    return Run(["biome", "lint", "src"], [
        S("stderr", r"^src/bad\.js:\d+:\d+ parse ", "the file that does not parse, the one error of its kind"),
        S("stderr", r"^  × expected `,` but instead found `\}`$", "the parse error's message"),
        S("stdout", r"^Checked \d+ files? in ", "how much was checked"),
        S("stdout", r"^Found \d+ errors?\.$", "the closing count"),
    ], command=[nbin("biome"), "lint", "--colors=off", "src"], expect_exit=exits(1))


@recipe("oxlint-warnings-two-errors", "oxlint", "linter", _ver("oxlint"))
def _oxlint(root):
    """Write the `oxlint-warnings-two-errors` project under `root`; return its command and signals."""
    for i in range(30):
        write(root, f"src/m{i:02d}.js", _js_module(i) + ("debugger\n" if i == 17 else ""))
    write(root, "src/loop.js", "export function spin(list) {\n  for (let i = 0; i < list.length; i--) {\n"
          "    if (list[i] = 0) return i\n  }\n}\n")
    argv = ["oxlint", "-D", "for-direction", "-D", "no-cond-assign", "src"]
    return Run(argv, [
        S("stdout", r"^  x eslint\((for-direction|no-cond-assign)\): ", "the two errors among 32 warnings"),
        S("stdout", r"^   ,-\[src/loop\.js:(2:19|3:17)\]$", "where they are"),
        S("stdout", r"^Found 32 warnings and 2 errors\.$", "the closing count"),
    ], command=[nbin("oxlint"), *argv[1:]], expect_exit=exits(1))


@recipe("standard-style-errors", "standard", "linter", _ver("standard"))
def _standard(root):
    """Write the `standard-style-errors` project under `root`; return its command and signals."""
    write(root, "package.json", '{"name": "widgets", "version": "1.0.0"}\n')
    for i in range(18):
        write(root, f"lib/w{i}.js", _js_module(i).replace("var ", "var  "))
    write(root, "lib/w5.js", _js_module(5).replace("return counter5\n}", "return counter5 + offset\n}"))
    return Run(["standard", "lib/"], [
        S("stdout", r"lib/w5\.js:\d+:\d+: 'offset' is not defined\. \(no-undef\)$", "the one real bug among style findings"),
    ], command=[nbin("standard"), "lib/"], expect_exit=exits(1))


@recipe("jshint-undefined-unused", "jshint", "linter", _ver("jshint"))
def _jshint(root):
    """Write the `jshint-undefined-unused` project under `root`; return its command and signals."""
    write(root, ".jshintrc", '{"undef": true, "unused": true, "esversion": 6, "node": true}\n')
    for i in range(6):
        write(root, f"js/page{i}.js", f"const title{i} = 'Page {i}';\nmodule.exports = title{i};\n")
    write(root, "js/cart.js", "function total(items) {\n  return items.reduce(function (a, b) { return a + b.price }, 0)\n}\n"
          "module.exports = { total: totl };\n")
    return Run(["jshint", "js"], [
        S("stdout", r"^js/cart\.js: line 4, col \d+, 'totl' is not defined\.$", "the real bug: an undefined name"),
        S("stdout", r"^\d+ errors?$", "the closing count"),
    ], command=[nbin("jshint"), "js"], expect_exit=exits(2))


@recipe("htmlhint-site", "htmlhint", "linter", _ver("htmlhint"))
def _htmlhint(root):
    """Write the `htmlhint-site` project under `root`; return its command and signals."""
    for i in range(4):
        write(root, f"site/page{i}.html", f"<!DOCTYPE html>\n<html lang=\"en\"><head><title>Page {i}</title></head>\n"
              f"<body><p>Page {i}</p></body></html>\n")
    write(root, "site/contact.html", "<html><head></head>\n<body>\n<div id=\"main\"><img src=\"a.png\">\n"
          "<div id=\"main\"><p CLASS=\"x\">Hi</div>\n</body></html>\n")
    return Run(["htmlhint", "site"], [
        S("stdout", r"^   /tmp/yarp-gen/blind/work/htmlhint-site/site/contact\.html$", "the file the findings are in"),
        S("stdout", r"^ +\^ .*\((doctype-first|title-require|id-unique|attr-lowercase|tag-pair)\)$", "each finding"),
        S("stdout", r"^Scanned \d+ files, found \d+ errors in \d+ files", "the closing count"),
    ], command=[nbin("htmlhint"), "--nocolor", "site"], expect_exit=exits(1))


@recipe("ava-verbose-one-failure", "ava", "test-runner", _ver("ava"))
def _ava(root):
    """Write the `ava-verbose-one-failure` project under `root`; return its command and signals."""
    write(root, "package.json", json.dumps({"name": "units", "type": "module", "ava": {"files": ["test/**/*.js"]}}))
    link_node_modules(root)
    write(root, "src/units.js", "export const toCm = (inches) => Math.round(inches * 2.54 * 100) / 100;\n"
          "export const toIn = (cm) => Math.round(cm / 2.54 * 100) / 100;\n")
    for f in range(6):
        body = "".join(f"test('converts {n} inches (file {f})', t => {{\n  t.is(toCm({n}), Math.round({n} * 254) / 100);\n}});\n"
                       for n in range(40))
        write(root, f"test/units{f}.js", "import test from 'ava';\nimport { toCm, toIn } from '../src/units.js';\n\n" + body)
    write(root, "test/roundtrip.js", "import test from 'ava';\nimport { toCm, toIn } from '../src/units.js';\n\n"
          "test('round trip keeps the value', t => {\n  t.is(toIn(toCm(3.333)), 3.333);\n});\n")
    return Run(["ava", "--verbose"], [
        S("stdout", r"✘ \[fail\]: roundtrip › round trip keeps the value", "the failing test among 241"),
        S("stdout", r"^  test/roundtrip\.js:\d+$", "where it failed"),
        S("stdout", r"^  1 test failed$", "the closing count"),
    ], command=[nbin("ava"), "--verbose"], expect_exit=exits(1))


@recipe("node-test-tap-deep-failure", "node", "test-runner", ["node", "--version"], needs=("node",))
def _node_test(root):
    """Write the `node-test-tap-deep-failure` project under `root`; return its command and signals."""
    for f in range(25):
        body = "".join(f"test('slug {f}-{n} keeps ascii', () => {{\n  assert.equal(slug('Item {n}'), 'item-{n}');\n}});\n"
                       for n in range(100))
        if f == 19:
            body += "test('slug folds accents', () => {\n  assert.equal(slug('Crème brûlée'), 'creme-brulee');\n});\n"
        write(root, f"test/slug{f:02d}.test.mjs", "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n"
              "import { slug } from '../slug.mjs';\n\n" + body)
    write(root, "slug.mjs", "export function slug(text) {\n  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');\n}\n")
    return Run(["node", "--test", "--test-reporter=tap"], [
        S("stdout", r"^not ok \d+ - slug folds accents$", "the one failing test among 2,501"),
        S("stdout", r"^  error: \|-$|^    Expected values to be strictly equal:$", "its error"),
        S("stdout", r"^    \+ 'cr-me-br-l-e'$|^    - 'creme-brulee'$", "what differed"),
        S("stdout", r"^    TestContext\.<anonymous> \(file:///.*/test/slug19\.test\.mjs:\d+:\d+\)$", "the test's own frame"),
        S("stdout", r"^  location: '/tmp/yarp-gen/blind/work/node-test-tap-deep-failure/test/slug19\.test\.mjs:\d+:\d+'$",
          "where it is"),
        S("stdout", r"^# (tests|pass|fail) \d+$", "the closing counts"),
    ], command=["node", "--test", "--test-reporter=tap"], expect_exit=exits(1))


@recipe("sass-undefined-variable", "sass", "build", _ver("sass"))
def _sass(root):
    """Write the `sass-undefined-variable` project under `root`; return its command and signals."""
    write(root, "styles/_theme.scss", "$brand: #0a7;\n$radius: 4px;\n")
    write(root, "styles/main.scss", """
        @use "theme";

        .button {
          color: theme.$brand;
          border-radius: theme.$radius;
          padding: theme.$gutter * 2;
        }
        """)
    return Run(["sass", "styles/main.scss", "out/main.css"], [
        S("stderr", r"^Error: Undefined variable\.$", "the error"),
        S("stderr", r"^ +styles/main\.scss \d+:\d+ +root stylesheet$", "where it is"),
    ], command=[nbin("sass"), "--no-color", "styles/main.scss", "out/main.css"], expect_exit=exits(65))


@recipe("lessc-missing-mixin", "lessc", "build", _ver("lessc"))
def _less(root):
    """Write the `lessc-missing-mixin` project under `root`; return its command and signals."""
    write(root, "less/mixins.less", ".rounded(@r: 4px) { border-radius: @r; }\n")
    write(root, "less/site.less", "@import 'mixins';\n.card { .rounded(6px); }\n.panel { .shadowed(2px); color: red; }\n")
    return Run(["lessc", "less/site.less"], [
        S("stderr", r"^\w*Error: .*\.shadowed.* is undefined in .*less/site\.less on line 3", "the error and where it is"),
    ], command=[nbin("lessc"), "--no-color", "less/site.less"], expect_exit=exits(1))


@recipe("babel-syntax-error", "babel", "build", _ver("babel"))
def _babel(root):
    """Write the `babel-syntax-error` project under `root`; return its command and signals."""
    write(root, "babel.config.json", '{"presets": []}\n')
    link_node_modules(root)
    for i in range(10):
        write(root, f"src/c{i}.js", f"export const c{i} = (x) => x + {i};\n")
    write(root, "src/form.js", "export function submit(form) {\n  const data = { ...form.values, };\n"
          "  return fetch('/api', { method: 'POST', body: JSON.stringify(data) }\n}\n")
    return Run(["babel", "src", "-d", "lib"], [
        S("stderr", r"^SyntaxError: /tmp/yarp-gen/blind/work/babel-syntax-error/src/form\.js: ", "the error and its file"),
        S("stderr", r"^> +4 \| \}$", "the line it points at"),
    ], command=[nbin("babel"), "src", "-d", "lib"], expect_exit=exits(1))


@recipe("swc-compile-error", "swc", "build", [nbin("swc"), "--version"])
def _swc(root):
    """Write the `swc-compile-error` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, ".swcrc", '{"jsc": {"parser": {"syntax": "typescript"}}}\n')
    for i in range(6):
        write(root, f"src/s{i}.ts", f"export const s{i}: number = {i};\n")
    write(root, "src/broken.ts", "export function pick<T>(items: T[], n: number): T {\n  return items[n]\n"
          "export const limit = 10;\n")
    return Run(["swc", "src", "-d", "dist"], [
        S("stderr", r"^  x 'import', and 'export' cannot be used outside of module code$", "the compiler's error"),
        S("stderr", r"^   ,-\[src/broken\.ts:3:1\]$", "where it is"),
        S("stderr", r"^Failed to compile 1 file with swc\.$", "the count"),
    ], command=[nbin("swc"), "src", "-d", "dist"], expect_exit=lambda code: code != 0)


@recipe("vite-build-unresolved-import", "vite", "build", _ver("vite"))
def _vite(root):
    """Write the `vite-build-unresolved-import` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "package.json", '{"name": "dash", "private": true, "type": "module"}\n')
    write(root, "index.html", '<!doctype html>\n<html><body><div id="app"></div>'
          '<script type="module" src="/src/main.js"></script></body></html>\n')
    write(root, "src/main.js", "import { chart } from './chart.js';\nimport { fmt } from './utils/format.js';\n"
          "document.querySelector('#app').textContent = fmt(chart());\n")
    write(root, "src/chart.js", "export const chart = () => 42;\n")
    return Run(["vite", "build"], [
        S("stderr", r"Could not resolve \"\./utils/format\.js\" from \"src/main\.js\"", "the error: the import that resolves to nothing"),
        S("stderr", r"^error during build:$|^✗ Build failed in ", "the build's verdict"),
    ], command=[nbin("vite"), "build"], expect_exit=exits(1))


@recipe("tsup-dts-type-error", "tsup", "build", _ver("tsup"))
def _tsup(root):
    """Write the `tsup-dts-type-error` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "package.json", '{"name": "kit", "version": "0.1.0", "type": "module"}\n')
    write(root, "tsconfig.json", '{"compilerOptions": {"strict": true, "target": "ES2022", "moduleResolution": "bundler", '
          '"module": "ESNext"}}\n')
    write(root, "src/index.ts", "export interface Money { cents: number; currency: string }\n\n"
          "export function add(a: Money, b: Money): Money {\n  return { cents: a.cents + b.cents, currency: a.currency, rate: 1 };\n}\n")
    return Run(["tsup", "src/index.ts", "--dts", "--format", "esm"], [
        S("stderr", r"src/index\.ts\(4,\d+\): error TS2353: ", "the type error with its place"),
        S("stderr", r"^Error: error occurred in dts build$", "the build's verdict"),
        S("stderr", r"^DTS Build error$", "which of the two builds failed (the ESM one succeeded)"),
    ], command=[nbin("tsup"), "src/index.ts", "--dts", "--format", "esm"], expect_exit=exits(1))


@recipe("pnpm-frozen-lockfile-outdated", "pnpm", "package-manager", _ver("pnpm"))
def _pnpm(root):
    """Write the `pnpm-frozen-lockfile-outdated` project under `root`; return its command and signals."""
    env = {"npm_config_store_dir": "/tmp/yarp-gen/blind/pnpm-store"}
    write(root, "package.json", json.dumps({"name": "svc", "version": "1.0.0",
                                            "dependencies": {"left-pad": "1.3.0"}}, indent=2) + "\n")
    sh([nbin("pnpm"), "install", "--reporter=silent"], root, env=env)
    write(root, "package.json", json.dumps({"name": "svc", "version": "1.0.0",
                                            "dependencies": {"left-pad": "1.3.0", "is-odd": "3.0.1"}}, indent=2) + "\n")
    return Run(["pnpm", "install", "--frozen-lockfile"], [
        S("stdout", r"ERR_PNPM_OUTDATED_LOCKFILE", "the error"),
        S("stdout", r"^  specifiers in the lockfile \(\{\"left-pad\":\"1\.3\.0\"\}\) don.t match specs in package\.json", "why the lockfile is out of date"),
    ], command=[nbin("pnpm"), "install", "--frozen-lockfile", "--reporter=append-only"], env=env, expect_exit=exits(1))


@recipe("yarn-install-no-version", "yarn", "package-manager", _ver("yarn"))
def _yarn(root):
    """Write the `yarn-install-no-version` project under `root`; return its command and signals."""
    write(root, "package.json", json.dumps({"name": "web", "version": "1.0.0",
                                            "dependencies": {"left-pad": "1.3.0", "is-odd": "99.0.0"}}, indent=2) + "\n")
    return Run(["yarn", "install"], [
        S("stderr", r"^error Couldn't find any versions for \"is-odd\" that matches \"99\.0\.0\"$", "the error"),
    ], command=[nbin("yarn"), "install", "--no-progress", "--non-interactive",
                "--cache-folder", "/tmp/yarp-gen/blind/yarn-cache"], expect_exit=exits(1))
