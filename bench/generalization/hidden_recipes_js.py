"""Hidden recipes for npm tools: terser, uglify-js, tape, concurrently, commitlint, remark, alex,
svgo, solhint, sort-package-json, publint.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

import json

from generate_native import Repo, git_env
from hidden_common import Run, S, exits, link_node_modules, nbin, recipe, write


@recipe("terser-parse-error", "terser", "build", [nbin("terser"), "--version"], needs=("terser",))
def _terser(root):
    """Write the `terser-parse-error` project under `root`; return its command and signals."""
    body = "".join(f"export function add{n}(a, b) {{ return a + b + {n}; }}\n" for n in range(80))
    write(root, "src/math.js", body + "export const broken = (a, b) => { return a +* b; };\n")
    return Run(["terser", "src/math.js", "--module", "-c", "-m", "-o", "dist/math.min.js"], [
        S("stderr", r"^Parse error at src/math\.js:81,", "the error and its place"),
        S("stderr", r"^ERROR: Unexpected token: operator \(\*\)$", "the error"),
    ], expect_exit=exits(1))


@recipe("uglifyjs-unsupported-syntax", "uglifyjs", "build", [nbin("uglifyjs"), "--version"], needs=("uglifyjs",))
def _uglify(root):
    """Write the `uglifyjs-unsupported-syntax` project under `root`; return its command and signals."""
    write(root, "app.js", "var cart = [];\nfunction add(item) {\n  cart.push(item);\n}\n"
          "var total = cart.reduce((s, i) => s + i.price, 0)\nlet label = `Total: ${total}`;\n"
          "if (total > 100 {\n  console.log(label);\n}\n")
    return Run(["uglifyjs", "app.js", "-c", "-m"], [
        S("stderr", r"^Parse error at app\.js:7,", "the error and its place"),
        S("stderr", r"^ERROR: Unexpected token: punc ", "the error"),
    ], expect_exit=exits(1))


def _tape_tests(n: int, broken: int) -> str:
    """One tape test with a few assertions; the `broken` one compares a wrong total."""
    expected = n * 3 + (1 if n == broken else 0)
    return (f"test('invoice {n} totals', (t) => {{\n  const lines = [{n}, {n}, {n}];\n"
            f"  t.equal(lines.length, 3, 'has three lines');\n  t.ok(lines.every((x) => x >= 0), 'no negatives');\n"
            f"  t.equal(lines.reduce((a, b) => a + b, 0), {expected}, 'sums the lines');\n  t.end();\n}});\n\n")


@recipe("tape-tap-deep-failure", "tape", "test-runner", [nbin("tape"), "--version"], needs=("tape",))
def _tape(root):
    """Write the `tape-tap-deep-failure` project under `root`; return its command and signals."""
    link_node_modules(root)
    write(root, "test/invoice.test.js", "const test = require('tape');\n\n"
          + "".join(_tape_tests(n, 1337) for n in range(1500)))
    return Run(["tape", "test/invoice.test.js"], [
        S("stdout", r"^not ok \d+ sums the lines$", "the one failing assertion among 4,500"),
        S("stdout", r"^    at: Test\.<anonymous> \(.*test/invoice\.test\.js:\d+:\d+\)$", "its place"),
        S("stdout", r"^# fail  1$", "the failure count"),
        S("stdout", r"^# tests 4500$", "the total"),
    ], expect_exit=exits(1))


@recipe("concurrently-one-process-fails", "concurrently", "build", [nbin("concurrently"), "--version"],
        needs=("concurrently",))
def _concurrently(root):
    """Write the `concurrently-one-process-fails` project under `root`; return its command and signals."""
    write(root, "watch.js", "for (let i = 0; i < 300; i++) console.log(`[watch] rebuilt bundle chunk ${i} in 12ms`);\n")
    write(root, "lint.js", "for (let i = 0; i < 200; i++) console.log(`checked src/file${i}.js`);\n"
          "console.error('src/file117.js: Unexpected console statement');\nprocess.exit(2);\n")
    write(root, "types.js", "for (let i = 0; i < 150; i++) console.log(`typed module ${i}`);\n")
    return Run(["concurrently", "-n", "watch,lint,types", "node watch.js", "node lint.js", "node types.js"], [
        S("stdout", r"^\[lint\] src/file117\.js: Unexpected console statement$", "the error"),
        S("stdout", r"^\[lint\] node lint\.js exited with code 2$", "the process that failed"),
    ], expect_exit=exits(1))


@recipe("commitlint-bad-messages", "commitlint", "vcs", [nbin("commitlint"), "--version"], needs=("commitlint", "git"))
def _commitlint(root):
    """Write the `commitlint-bad-messages` project under `root`; return its command and signals."""
    repo = Repo(root)
    link_node_modules(root)
    repo.write("commitlint.config.js", "module.exports = { extends: ['@commitlint/config-conventional'] };\n")
    repo.write(".gitignore", "node_modules\n")
    repo.commit("chore: add commitlint")
    for n in range(6):
        repo.write(f"src/m{n}.js", f"module.exports = {n};\n")
        repo.commit(f"feat(core): add module {n}")
    repo.write("src/m3.js", "module.exports = 33;\n")
    repo.commit("Fixed the thing.")
    return Run(["commitlint", "--from", "HEAD~7", "--to", "HEAD"], [
        S("stdout", r"^⧗   input: Fixed the thing\.$", "the offending message"),
        S("stdout", r"^✖   (subject|type) ", "each error"),
        S("stdout", r"^✖   found 3 problems, 0 warnings$", "the count"),
    ], env=git_env(), expect_exit=exits(1))


def _remark_doc(n: int) -> str:
    """A Markdown page with the list and heading slips remark-lint reports."""
    return (f"# Guide {n}\n\n* first item\n+ second item\n\nSee [the api][api{n}] for more.\n\n"
            f"####### too deep\n\n[unused{n}]: https://example.test/{n}\n")


@recipe("remark-lint-docs", "remark", "linter", [nbin("remark"), "--version"], needs=("remark",))
def _remark(root):
    """Write the `remark-lint-docs` project under `root`; return its command and signals."""
    link_node_modules(root)
    for n in range(40):
        write(root, f"docs/guide{n:02d}.md", _remark_doc(n))
    write(root, ".remarkrc.json", json.dumps({"plugins": ["remark-preset-lint-recommended"]}))
    return Run(["remark", "--frail", "--no-stdout", "docs"], [
        S("stderr", r"⚠\S* 80 warnings$", "the total: eighty warnings of two kinds, nothing worse"),
    ], expect_exit=exits(1))


@recipe("alex-insensitive-wording", "alex", "linter", [nbin("alex"), "--version"], needs=("alex",))
def _alex(root):
    """Write the `alex-insensitive-wording` project under `root`; return its command and signals."""
    for n in range(10):
        write(root, f"docs/p{n}.md", f"# Page {n}\n\nThe service restarts the worker when it fails.\n")
    write(root, "docs/p4.md", "# Page 4\n\nThe master node tells each slave to rebuild. Just a dummy value.\n")
    return Run(["alex", "docs"], [
        S("stderr", r"^docs/p4\.md$", "the file's heading"),
        S("stderr", r"^ +\d+:\d+-\d+:\d+ +warning +", "each finding"),
        S("stderr", r"^⚠ \d+ warnings$", "the total"),
    ], expect_exit=exits(1))


@recipe("svgo-broken-svg", "svgo", "build", [nbin("svgo"), "--version"], needs=("svgo",))
def _svgo(root):
    """Write the `svgo-broken-svg` project under `root`; return its command and signals."""
    for n in range(25):
        write(root, f"icons/i{n:02d}.svg", f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
              f'<!-- icon {n} --><path d="M0 0h{n + 1}v24H0z" fill="#000000"/></svg>\n')
    write(root, "icons/i09.svg", '<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0h9" fill="#000"></svg>\n')
    return Run(["svgo", "-f", "icons", "-o", "out"], [
        S("stderr", r"^SvgoParserError: .*icons/i09\.svg:1:75: Unexpected close tag$", "the error and its place"),
    ], expect_exit=exits(0, 1))


def _contract(n: int) -> str:
    """A Solidity contract with the style and security findings solhint reports."""
    return (f"pragma solidity ^0.8.0;\n\ncontract Vault{n} {{\n    mapping(address => uint) balances;\n"
            f"    function withdraw(uint amount) public {{\n        require(balances[msg.sender] >= amount);\n"
            f"        (bool ok, ) = msg.sender.call{{value: amount}}(\"\");\n        require(ok);\n"
            f"        balances[msg.sender] -= amount;\n    }}\n}}\n")


@recipe("solhint-contracts", "solhint", "linter", [nbin("solhint"), "--version"], needs=("solhint",))
def _solhint(root):
    """Write the `solhint-contracts` project under `root`; return its command and signals."""
    for n in range(30):
        write(root, f"contracts/Vault{n:02d}.sol", _contract(n))
    write(root, "contracts/Vault21.sol", _contract(21).replace("pragma solidity ^0.8.0;",
          "pragma solidity ^0.7.0;\n\nimport \"./Missing.sol\";").replace("public {", "public {\n        tx.origin;"))
    write(root, ".solhint.json", json.dumps({"extends": "solhint:recommended",
                                              "rules": {"compiler-version": ["error", "^0.8.0"]}}))
    return Run(["solhint", "contracts/**/*.sol"], [
        S("stdout", r"^contracts/Vault21\.sol$", "the file with the rare findings"),
        S("stdout", r"^ +1:1 +error +Compiler version \^0\.7\.0 does not satisfy", "the one error among hundreds of warnings"),
        S("stdout", r"Import in contracts/Vault21\.sol doesn't exist in: \./Missing\.sol|Avoid to use tx\.origin",
          "the two rare findings"),
        S("stderr", r"^Error checking for updates: ", "the error on stderr"),
        S("stdout", r"^✖ \d+ problems \(1 error, \d+ warnings\)$", "the count"),
    ], expect_exit=exits(0, 1))


@recipe("sort-package-json-check", "sort-package-json", "formatter", [nbin("sort-package-json"), "--version"],
        needs=("sort-package-json",))
def _sort_package_json(root):
    """Write the `sort-package-json-check` project under `root`; return its command and signals."""
    good = {"name": "pkg", "version": "1.0.0", "scripts": {"build": "tsc"}}
    for n in range(8):
        write(root, f"packages/p{n}/package.json", json.dumps({**good, "name": f"p{n}"}, indent=2) + "\n")
    write(root, "packages/p5/package.json", json.dumps({"version": "1.0.0", "scripts": {"test": "x", "build": "y"},
                                                        "name": "p5"}, indent=2) + "\n")
    return Run(["sort-package-json", "--check", "packages/*/package.json"], [
        S("stdout", r"^packages/p5/package\.json$", "the unsorted file"),
        S("stdout", r"^1 file was not sorted\.$", "the summary"),
    ], expect_exit=exits(1))


@recipe("publint-package-issues", "publint", "package-manager", [nbin("publint"), "--version"], needs=("publint",))
def _publint(root):
    """Write the `publint-package-issues` project under `root`; return its command and signals."""
    write(root, "package.json", json.dumps({"name": "shop-lib", "version": "1.0.0", "main": "dist/index.js",
                                            "module": "dist/index.mjs", "type": "module",
                                            "exports": {".": {"require": "./dist/index.cjs", "import": "./dist/index.js"}},
                                            "files": ["dist"]}, indent=2) + "\n")
    write(root, "dist/index.js", "export const a = 1;\n")
    return Run(["publint"], [
        S("stdout", r"^Errors:$", "the errors' heading"),
        S("stdout", r"^\d+\. .* but the file does not exist\.$", "each error"),
    ], expect_exit=exits(0, 1))
