"""Fresh recipes for npm and node: tsc, jest, mocha, vitest, rollup, webpack, npm ci, node itself.

Each project is small but realistic, with the mistakes a developer makes; the signals are the lines
a reader of the output must see, written from the raw output before any view of it.
"""

from __future__ import annotations

import json
import os

from fresh_common import NPM_BIN, Run, S, exits, link_node_modules, node_env, recipe, write

NODE = ["node", "--version"]


def _tsc(name: str) -> list[str]:
    return [os.path.join(NPM_BIN, name), "--version"]


def _ts_project(root: str, modules: int) -> None:
    link_node_modules(root)
    write(root, "tsconfig.json", json.dumps({"compilerOptions": {
        "target": "es2022", "module": "commonjs", "strict": True, "outDir": "dist", "skipLibCheck": True,
        "types": []}, "include": ["src"]}, indent=2) + "\n")
    for i in range(modules):
        write(root, f"src/services/service{i:02d}.ts", f"""
            export interface Record{i} {{ id: number; name: string; tags: string[] }}

            export function load{i}(rows: Record{i}[]): Map<number, Record{i}> {{
              const out = new Map<number, Record{i}>();
              for (const row of rows) out.set(row.id, row);
              return out;
            }}
            """)
    write(root, "src/billing/invoice.ts", """
        import { load3, Record3 } from "../services/service03";

        export interface Invoice { id: number; total: number; customer?: { email: string } }

        export function total(lines: { amount: number }[]): number {
          return lines.reduce((sum, l) => sum + l.amount, "0");
        }

        export function email(inv: Invoice): string {
          return inv.customer.email;
        }

        export function byId(rows: Record3[]) {
          return load3(rows).get("7");
        }
        """)
    write(root, "src/index.ts", """
        import { total, email } from "./billing/invoice";
        import { formatMoney } from "./billing/money";

        console.log(total([{ amount: 3 }]), email({ id: 1, total: 2 }), formatMoney(3));
        """)


@recipe("tsc-pretty-errors", "tsc", "type-checker", _tsc("tsc"), needs=("node",))
def _tsc_pretty(root):
    _ts_project(root, 4)
    return Run(["npx", "tsc", "--noEmit", "--pretty"], [
        S("stdout", r"error.*TS\d+: ", "each type error's file:line:col heading, with its code and message"),
        S("stdout", r"^Found \d+ errors in \d+ files\.$", "the closing count"),
    ], command=[os.path.join(NPM_BIN, "tsc"), "--noEmit", "--pretty"], env=node_env(), expect_exit=exits(1, 2))


@recipe("tsc-listfiles-errors", "tsc", "type-checker", _tsc("tsc"), needs=("node",))
def _tsc_listfiles(root):
    _ts_project(root, 60)
    return Run(["npx", "tsc", "--noEmit", "--listFiles"], [
        S("stdout", r"^src/.*\(\d+,\d+\): error TS\d+: ", "each type error, with file(line,col), among the listed files"),
    ], command=[os.path.join(NPM_BIN, "tsc"), "--noEmit", "--listFiles"], env=node_env(), expect_exit=exits(1, 2))


def _bin(name: str) -> str:
    return os.path.join(NPM_BIN, name)


@recipe("jest-verbose-two-failures", "jest", "test-runner", [_bin("jest"), "--version"], needs=("node",))
def _jest(root):
    link_node_modules(root)
    write(root, "package.json", '{"name": "cart", "version": "1.0.0", "private": true}\n')
    for i in range(24):
        write(root, f"src/util{i:02d}.js", f"exports.scale{i} = (x) => x * {i + 1};\n")
        checks = "".join(f'  test("scales {v} by {i + 1}", () => {{ expect(scale{i}({v})).toBe({v * (i + 1)}); }});\n'
                         for v in range(6))
        write(root, f"test/util{i:02d}.test.js",
              f'const {{ scale{i} }} = require("../src/util{i:02d}");\n\ndescribe("scale{i}", () => {{\n{checks}}});\n')
    write(root, "src/cart.js", """
        exports.total = (items) => items.reduce((s, it) => s + it.price * it.qty, 0);
        exports.discount = (total, code) => (code === "HALF" ? total / 2 : total);
        exports.parseQty = (text) => parseInt(text);
        """)
    write(root, "test/cart.test.js", """
        const { total, discount, parseQty } = require("../src/cart");

        describe("cart", () => {
          test("sums price times quantity", () => {
            expect(total([{ price: 2, qty: 3 }, { price: 1.5, qty: 2 }])).toBe(9);
          });
          test("applies the HALF code", () => {
            expect(discount(10, "half")).toBe(5);
          });
          test("parses a quantity", () => {
            expect(parseQty("3 items")).toBe(3);
          });
          test("rejects an empty cart", () => {
            expect(() => total(null)).toThrow(TypeError);
          });
          test("keeps line order", () => {
            expect([3, 1, 2].map((q) => ({ qty: q }))).toEqual([{ qty: 3 }, { qty: 2 }, { qty: 1 }]);
          });
        });
        """)
    return Run(["npx", "jest", "--verbose"], [
        S("stderr", r"^  ● cart › ", "each failing test's heading (in place and in the closing summary)"),
        S("stderr", r"^    (Expected|Received): \d+$", "what the failed assertion expected and got"),
        S("stderr", r"^      at Object\.to\w+ \(test/cart\.test\.js:\d+:\d+\)$", "the test's own line of each failure"),
        S("stderr", r"^(Test Suites|Tests): +\d+ failed", "the closing counts"),
    ], command=[_bin("jest"), "--verbose", "--ci"], env=node_env(),
               expect_exit=exits(1))


@recipe("mocha-spec-one-failure", "mocha", "test-runner", [_bin("mocha"), "--version"], needs=("node",))
def _mocha(root):
    link_node_modules(root)
    for i in range(30):
        its = "".join(f'    it("formats {v} with {i} decimals", () => assert.strictEqual(fmt({v}, {i % 4}), '
                      f'({v}).toFixed({i % 4})));\n' for v in range(8))
        write(root, f"test/format_{i:02d}.spec.js",
              f'const assert = require("assert");\nconst {{ fmt }} = require("../lib/format");\n\n'
              f'describe("format suite {i}", () => {{\n  describe("fmt", () => {{\n{its}  }});\n}});\n')
    write(root, "lib/format.js", """
        exports.fmt = (v, d) => v.toFixed(d);
        exports.slug = (s) => s.toLowerCase().replace(/ /g, "-");
        """)
    write(root, "test/slug.spec.js", """
        const assert = require("assert");
        const { slug } = require("../lib/format");

        describe("slug", () => {
          it("lowercases", () => assert.strictEqual(slug("Hello"), "hello"));
          it("joins words with dashes", () => assert.strictEqual(slug("New  Year Sale"), "new-year-sale"));
        });
        """)
    return Run(["npx", "mocha"], [
        S("stdout", r"^    1\) joins words with dashes$", "the one failing test among 241 passing, in place"),
        S("stdout", r"^  \d+ passing|^  1 failing$", "the closing counts"),
        S("stdout", r"AssertionError \[ERR_ASSERTION\]", "the failure's exception line"),
        S("stdout", r"^[+-] 'new-+year-sale'$", "the actual and expected values"),
        S("stdout", r"at Context\.<anonymous> \(test/slug\.spec\.js:\d+:\d+\)$", "the test's own frame"),
    ], command=[_bin("mocha"), "--no-color"], env=node_env(), expect_exit=exits(1))


@recipe("vitest-reporter-crash", "vitest", "test-runner", [_bin("vitest"), "--version"], needs=("node",))
def _vitest(root):
    link_node_modules(root)
    write(root, "package.json", '{"name": "dates", "version": "1.0.0", "private": true, "type": "module"}\n')
    write(root, "src/dates.js", """
        export function addDays(iso, n) {
          const d = new Date(iso);
          d.setUTCDate(d.getUTCDate() + n);
          return d.toISOString().slice(0, 10);
        }
        export function weekday(iso) {
          return ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][new Date(iso).getUTCDay() + 1];
        }
        """)
    write(root, "src/dates.test.js", """
        import { describe, expect, it } from "vitest";
        import { addDays, weekday } from "./dates.js";

        describe("addDays", () => {
          it("crosses a month", () => expect(addDays("2024-01-31", 1)).toBe("2024-02-01"));
          it("crosses a leap day", () => expect(addDays("2024-02-28", 1)).toBe("2024-02-29"));
        });
        describe("weekday", () => {
          it("knows a Monday", () => expect(weekday("2024-01-01")).toBe("Mon"));
          it("knows a Sunday", () => expect(weekday("2024-01-07")).toBe("Sun"));
        });
        """)
    return Run(["npx", "vitest", "run"], [
        S("stdout", r"^ ❯ src/dates\.test\.js \(4 tests \| 2 failed\)", "the file with its failure count"),
        S("stdout", r"^     × knows a ", "each failing test"),
        S("stderr", r"Failed Tests 2", "the failure count the report starts with"),
        S("stderr", r"^TypeError: Map\.groupBy is not a function", "the reporter's own crash, why no failure details follow"),
    ], command=[_bin("vitest"), "run"], env=node_env(), expect_exit=exits(1))


@recipe("rollup-unresolved-circular", "rollup", "build", [_bin("rollup"), "--version"], needs=("node",))
def _rollup(root):
    link_node_modules(root)
    write(root, "src/main.js", 'import { a } from "./a.js";\nimport dayjs from "dayjs";\nconsole.log(a(), dayjs());\n')
    write(root, "src/a.js", 'import { b } from "./b.js";\nexport const a = () => b() + 1;\nexport const unused = 3;\n')
    write(root, "src/b.js", 'import { a } from "./a.js";\nexport const b = () => (a ? 1 : 0);\n')
    write(root, "src/extra.js", 'export default function () { return eval("1 + 1"); }\n')
    return Run(["npx", "rollup", "src/main.js", "src/extra.js", "--dir", "dist", "--format", "es"], [
        S("stderr", r"^\(!\) ", "each warning's heading: an unresolved import, a cycle, eval"),
        S("stderr", r"^dayjs \(imported by \"src/main\.js\"\)$", "the import left external"),
        S("stderr", r"^src/a\.js -> src/b\.js -> src/a\.js$", "the cycle"),
        S("stderr", r"^created dist in ", "the build still finished"),
    ],
               command=[_bin("rollup"), "src/main.js", "src/extra.js", "--dir", "dist", "--format", "es"],
               env=node_env(), expect_exit=exits(0, 1))


WEBPACK = ["node", "-p", "'webpack ' + require('/tmp/yarp-gen/fresh/npm/node_modules/webpack/package.json').version"]


@recipe("webpack-module-not-found", "webpack", "build", WEBPACK, needs=("node",))
def _webpack(root):
    link_node_modules(root)
    write(root, "webpack.config.js", """
        module.exports = { mode: "development", entry: "./src/index.js", devtool: false,
          output: { path: __dirname + "/dist", filename: "bundle.js" }, stats: "verbose" };
        """)
    imports = "".join(f'import {{ part{i} }} from "./parts/part{i:02d}.js";\n' for i in range(60))
    write(root, "src/index.js", imports + 'import { chart } from "./charts/line-chart";\nimport "./styles.css";\n'
          + "console.log(" + ", ".join(f"part{i}()" for i in range(60)) + ", chart);\n")
    for i in range(60):
        write(root, f"src/parts/part{i:02d}.js", f"export const part{i} = () => {i};\n")
    write(root, "src/styles.css", "body { margin: 0 }\n")
    return Run(["npx", "webpack"], [
        S("stdout", r"^ERROR in \./src/index\.js \d+:\d+-\d+$", "the error's heading, with the importing file and place"),
        S("stdout", r"^Module not found: Error: Can't resolve '\./charts/line-chart'", "what is missing"),
        S("stdout", r"webpack [\d.]+ compiled with 1 error in ", "the closing verdict"),
    ], command=[_bin("webpack")], env=node_env(), expect_exit=exits(1))


@recipe("npm-ci-offline-not-cached", "npm", "package-manager", ["npm", "--version"], needs=("npm",))
def _npm_ci(root):
    write(root, "package.json", json.dumps({"name": "shop", "version": "1.2.0", "private": True,
                                            "dependencies": {"left-pad": "^1.3.0"}}, indent=2) + "\n")
    write(root, "package-lock.json", json.dumps({"name": "shop", "version": "1.2.0", "lockfileVersion": 3,
                                                 "requires": True, "packages": {"": {"name": "shop",
                                                                                     "version": "1.2.0"}}},
                                                indent=2) + "\n")
    return Run(["npm", "ci"], [
        S("stderr", r"^npm error code ENOTCACHED$", "the error code"),
        S("stderr", r"^npm error request to .*left-pad failed: cache mode is 'only-if-cached'", "what failed and why"),
    ], env={**node_env(), "NPM_CONFIG_OFFLINE": "true",
                                     "NPM_CONFIG_CACHE": os.path.join(root, ".npm-cache")}, expect_exit=exits(1))


@recipe("node-unhandled-rejection", "node", "runtime", NODE, needs=("node",))
def _node_rejection(root):
    write(root, "src/config.js", """
        const fs = require("fs/promises");

        async function readConfig(path) {
          const text = await fs.readFile(path, "utf8");
          return JSON.parse(text);
        }

        module.exports = { readConfig };
        """)
    write(root, "config/app.json", '{"port": 8080, "db": {"host": "localhost",}}\n')
    write(root, "server.js", """
        const { readConfig } = require("./src/config");

        async function start() {
          console.log("starting server");
          const config = await readConfig("config/app.json");
          console.log("listening on", config.port);
        }

        start();
        """)
    return Run(["node", "server.js"], [
        S("stderr", r"^SyntaxError: Expected double-quoted property name in JSON at position 42$", "the crash's exception"),
        S("stderr", r"^\{\"port\": 8080", "the offending input, with the caret under it"),
        S("stderr", r"^    at (readConfig|async start) \(/.*\.js:\d+:\d+\)$", "the project's own frames"),
    ], env=node_env(), expect_exit=exits(1))
