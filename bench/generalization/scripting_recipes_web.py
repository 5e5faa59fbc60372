"""Recipes for npm tools, YAML/JSON tools, hooks, and the outputs of scripts: logs, data dumps."""

from __future__ import annotations

import json
import os

from scripting_common import Recipe, link_node_modules, write

NODE_TOOL = ["node", "--version"]


def _eslint_setup(root: str) -> None:
    link_node_modules(root)
    files = {"eslint.config.js": '''
    export default [{
      files: ["**/*.js"],
      languageOptions: {ecmaVersion: 2022, sourceType: "module", globals: {console: "readonly", document: "readonly"}},
      rules: {
        "no-unused-vars": "warn", "no-console": "warn", "eqeqeq": "warn", "prefer-const": "warn",
        "curly": "warn", "no-var": "warn", "no-undef": "error",
      },
    }];
    '''}
    for i in range(18):
        files[f"src/widgets/widget_{i:02d}.js"] = f'''
        import {{ render, hydrate, measure }} from "../core.js";

        var registry = {{}};
        let count = 0;

        export function mount{i}(el, props) {{
          let unused = props.debug;
          console.log("mount", el.id);
          if (props.size == "large") el.classList.add("large");
          for (var k in props) registry[k] = props[k];
          let label = props.label || "widget {i}";
          console.info(label);
          if (count == 0) console.debug("first");
          return render(el, label);
        }}
        '''
    files["src/widgets/widget_08_legacy.js"] = '''
    import { render } from "../core.js";

    export function drawChart(el, series) {
      const scale = computeScale(series);
      return render(el, series.map((p) => p * scale + offsetY));
    }
    '''
    files["src/core.js"] = "export const render = (el, v) => v;\nexport const hydrate = () => 0;\nexport const measure = () => 0;\n"
    write(root, files)


def _prettier_setup(root: str) -> None:
    link_node_modules(root)
    files = {".prettierrc": '{"semi": true, "singleQuote": false}\n'}
    for i in range(40):
        files[f"src/lib/fmt_{i:02d}.js"] = f'export function fmt{i}(value) {{\n  return String(value).padStart({i});\n}}\n'
    for i in (6, 13, 29):
        files[f"src/lib/fmt_{i:02d}.js"] = f"export function fmt{i}( value ){{ return String(value).padStart({i}) }}\n"
    files["src/styles/app.css"] = ".app{color:red;margin:0 auto}\n"
    write(root, files)


def _stylelint_setup(root: str) -> None:
    link_node_modules(root)
    files = {".stylelintrc.json": json.dumps({
        "extends": ["stylelint-config-standard"], "defaultSeverity": "warning",
        "rules": {"color-no-invalid-hex": [True, {"severity": "error"}],
                  "declaration-block-no-duplicate-properties": [True, {"severity": "error"}]},
    }, indent=2) + "\n"}
    for i in range(14):
        files[f"styles/components/card_{i:02d}.css"] = f'''
        .Card{i} {{ color: #FFFFFF; margin: 0px; padding: 0px 0px 0px 0px }}
        .Card{i}-title{{font-weight:bold;font-family: Helvetica, Arial}}
        .Card{i} > .Body {{ background: url(img/bg-{i}.png) }}
        @media screen and (max-width:600px) {{ .Card{i} {{ width: 100% }} }}
        '''
    files["styles/components/card_06_brand.css"] = ":root { --brand: #12g4aa; }\n.button { color: var(--brand); color: #fff; }\n"
    write(root, files)


def _markdownlint_setup(root: str) -> None:
    files = {}
    long_line = ("This paragraph explains the operational procedure for the service in considerable detail, "
                 "and it keeps going well past the usual line length.")
    for i in range(24):
        files[f"docs/ops/page_{i:02d}.md"] = f"# Page {i}\n\n{long_line}\n\n{long_line}\n\n* item\n* item\n"
    files["docs/ops/escalation.md"] = "# Escalation\n\nCall [the on-call engineer]().\n\n" + long_line + "\n"
    write(root, files)


def _esbuild_error_setup(root: str) -> None:
    write(root, {
        "src/main.ts": '''
        import leftPad from "left-pad";
        import { formatPrice } from "./price";

        const total: number = 42;
        console.log(leftPad(formatPrice(total), 10));
        ''',
        "src/price.ts": '''
        export function formatPrice(cents: number): string {
          return `€${(cents / 100).toFixed(2)`;
        }
        ''',
    })


def _esbuild_ok_setup(root: str) -> None:
    write(root, {
        "src/main.js": '''
        import { formatPrice } from "./price.js";

        const prices = [120, 3450, 99];
        const labels = { cart: "Warenkorb", total: "Summe", cart: "Korb" };
        if (typeof prices == "array") console.log("never");
        console.log(labels.cart, prices.map(formatPrice).join(", "));
        ''',
        "src/price.js": "export function formatPrice(c) {\n  return `€${(c / 100).toFixed(2)}`;\n}\n",
    })


def _npm_ls_setup(root: str) -> None:
    """A project whose node_modules drifted from package.json: missing, invalid and extraneous."""
    deps = {f"@acme/util-{i:02d}": "^1.0.0" for i in range(40)}
    deps.update({"lodash": "^4.17.21", "chalk": "^5.3.0", "dayjs": "^1.11.0"})
    files = {"package.json": json.dumps({"name": "storefront", "version": "2.4.0", "dependencies": deps}, indent=2) + "\n"}

    def pkg(path: str, name: str, version: str, deps: dict | None = None) -> None:
        files[f"{path}/package.json"] = json.dumps({"name": name, "version": version, "dependencies": deps or {}}) + "\n"

    for i in range(40):
        sub = {f"@acme/leaf-{i:02d}-{j}": "^2.0.0" for j in range(3)}
        pkg(f"node_modules/@acme/util-{i:02d}", f"@acme/util-{i:02d}", "1.4.2", sub)
        for j in range(3):
            pkg(f"node_modules/@acme/leaf-{i:02d}-{j}", f"@acme/leaf-{i:02d}-{j}", "2.0.1")
    pkg("node_modules/lodash", "lodash", "3.10.1")
    pkg("node_modules/dayjs", "dayjs", "1.11.13")
    pkg("node_modules/left-pad", "left-pad", "1.3.0")
    write(root, files)


def _npm_run_setup(root: str) -> None:
    write(root, {
        "package.json": json.dumps({"name": "admin-ui", "version": "0.9.0", "scripts": {
            "build": "node scripts/build.mjs", "test": "node --test"}}, indent=2) + "\n",
        "scripts/build.mjs": '''
        import { readFileSync } from "node:fs";

        const pages = ["index", "users", "billing", "settings"];
        for (const page of pages) {
          console.log(`building ${page}...`);
          const spec = JSON.parse(readFileSync(`pages/${page}.json`, "utf8"));
          console.log(`  ${spec.widgets.length} widgets`);
        }
        ''',
        "pages/index.json": '{"widgets": [1, 2, 3]}\n',
        "pages/users.json": '{"widgets": [1, 2]}\n',
        "pages/billing.json": '{"widgets": [1, 2, 3, 4],}\n',
        "pages/settings.json": '{"widgets": []}\n',
    })


def _yamllint_setup(root: str) -> None:
    files = {".yamllint": "extends: default\nrules:\n  line-length: {max: 100, level: warning}\n"
                          "  truthy: {level: warning}\n  comments: {level: warning}\n"
                          "  document-start: {level: warning}\n  indentation: {level: warning}\n"
                          "  trailing-spaces: {level: warning}\n"}
    for i in range(20):
        files[f"deploy/k8s/service_{i:02d}.yaml"] = f'''
        apiVersion: v1
        kind: Service
        metadata:
          name: svc-{i}   #owner: team-{i}
          labels: {{app: svc-{i}, tier: backend}}
        spec:
            selector:
                app: svc-{i}
            ports:
              - port: 80
                targetPort: {8000 + i}
            publishNotReadyAddresses: yes
        '''
    files["deploy/k8s/ingress.yaml"] = "---\nkind: Ingress\nmetadata:\n  name: web\n  name: web-2\nspec:\n  rules: []\n"
    files["deploy/k8s/cron.yaml"] = "---\nkind: CronJob\nspec:\n  schedule: \"0 * * * *\"\n  command: [run, --all\n"
    write(root, files)


def _jq_setup(root: str) -> None:
    lines = []
    for i in range(3000):
        event = {"id": i, "type": ["click", "view", "purchase"][i % 3], "user": f"u{i % 97}", "ms": (i * 37) % 900}
        lines.append(json.dumps(event))
    lines[2417] = lines[2417][:-1] + ', "note": "truncated}'
    write(root, {"events.jsonl": "\n".join(lines) + "\n"})


def _service_setup(root: str) -> None:
    write(root, {"service.py": '''
    import logging
    import random

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s",
                        level=logging.INFO)
    log = logging.getLogger("orders.api")
    random.seed(7)
    users = ["anna", "björn", "chloé", "dmitri", "eun-ji", "farah"]
    handled = failed = 0
    for n in range(20000):
        user = users[n % len(users)]
        log.info("GET /api/orders/%d user=%s status=200 duration_ms=%d", 100000 + n, user, random.randint(3, 90))
        handled += 1
        if n == 13377:
            try:
                {"sku": "A-1"}["price"]
            except KeyError:
                failed += 1
                log.exception("POST /api/orders/%d user=%s failed: pricing lookup", 100000 + n, user)
    log.info("shutdown: %d requests handled, %d failed", handled, failed)
    '''})


def _minified_setup(root: str) -> None:
    write(root, {"dump_catalog.py": '''
    import json
    import random
    import sys

    random.seed(3)
    catalog = {"version": 7, "currency": "EUR", "products": [
        {"sku": f"P{n:05d}", "name": f"Produkt {n} – Größe {random.choice('SML')}", "price": round(random.uniform(1, 500), 2),
         "tags": random.sample(["eco", "new", "sale", "bulk", "import", "local"], 3), "stock": random.randint(0, 900)}
        for n in range(4500)]}
    text = json.dumps(catalog, separators=(",", ":"), ensure_ascii=False)
    print(text)
    print(f"dumped {len(catalog['products'])} products, {len(text.encode())} bytes", file=sys.stderr)
    '''})


def _csv_setup(root: str) -> None:
    write(root, {"export_orders.py": '''
    import csv
    import random
    import sys

    random.seed(11)
    names = ["Zoë Martin", "Jürgen Weiß", "Åsa Lind", "Tomás Ruiz", "Ngozi Okafor", "山田 太郎", "Priya Nair"]
    out = csv.writer(sys.stdout, lineterminator="\\n")
    out.writerow(["order_id", "customer", "country", "items", "total_eur", "status", "created_at"])
    for n in range(4000):
        out.writerow([70000 + n, names[n % len(names)], random.choice(["DE", "FR", "SE", "ES", "NG", "JP", "IN"]),
                      random.randint(1, 9), f"{random.uniform(5, 900):.2f}", random.choice(["paid", "shipped", "open"]),
                      f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z"])
    print(f"exported 4000 orders", file=sys.stderr)
    '''})


def _precommit_setup(root: str) -> None:
    files = {".pre-commit-config.yaml": '''
    repos:
      - repo: local
        hooks:
          - id: no-trailing-whitespace
            name: trim trailing whitespace
            entry: '[ \\t]+$'
            language: pygrep
            types: [text]
          - id: no-print
            name: forbid print() in library code
            entry: '^\\s*print\\('
            language: pygrep
            files: ^lib/
          - id: no-rej-files
            name: forbid merge leftovers
            entry: merge leftovers must not be committed
            language: fail
            files: '\\.(rej|orig)$'
          - id: flake8
            name: flake8
            entry: flake8
            language: system
            types: [python]
          - id: yaml-parse
            name: check yaml parses
            entry: python -c "import sys, yaml; [yaml.safe_load(open(p)) for p in sys.argv[1:]]"
            language: system
            types: [yaml]
    '''}
    for i in range(10):
        files[f"lib/mod_{i}.py"] = f'"""Module {i}."""\n\n\ndef f(x):\n    """Double."""\n    return 2 * x\n'
    files["lib/mod_3.py"] = '"""Module 3."""\n\n\ndef f(x):  \n    """Double."""\n    print(x)\n    return 2 * x\n'
    files["lib/mod_7.py.orig"] = "old\n"
    files["config/app.yaml"] = "name: app\nport: 8080\n"
    write(root, files)


RECIPES = [
    Recipe(
        name="eslint-warnings-two-errors", tool="eslint", category="linter", argv=["eslint", "src"],
        setup=_eslint_setup, version=["eslint", "--version"], needs=("eslint",), expect_exit=1,
        signals=[
            ("stdout", r"/src/widgets/widget_08_legacy\.js$", "the file with the errors"),
            ("stdout", r"^ +\d+:\d+ +error ", "each error with line:col"),
            ("stdout", r"^\u2716 \d+ problems \(2 errors, \d+ warnings\)$", "summary"),
        ],
    ),
    Recipe(
        name="prettier-check", tool="prettier", category="formatter", argv=["prettier", "--check", "src"],
        setup=_prettier_setup, version=["prettier", "--version"], needs=("prettier",), expect_exit=1,
        signals=[
            ("stderr", r"^\[warn\] src/", "each unformatted file"),
            ("stderr", r"^\[warn\] Code style issues found in \d+ files", "summary"),
        ],
    ),
    Recipe(
        name="stylelint-css", tool="stylelint", category="linter", argv=["stylelint", "styles/**/*.css"],
        setup=_stylelint_setup, version=["stylelint", "--version"], needs=("stylelint",), expect_exit=2,
        signals=[
            ("stderr", r"^styles/components/card_06_brand\.css$", "the file with the errors"),
            ("stderr", r"\u2716 +(Invalid hex color|Duplicate property) ", "each error"),
            ("stderr", r"^\u2716 \d+ problems \(2 errors, \d+ warnings\)$", "summary"),
        ],
    ),
    Recipe(
        name="markdownlint-docs", tool="markdownlint", category="linter", argv=["markdownlint", "docs"],
        setup=_markdownlint_setup, version=["markdownlint", "--version"], needs=("markdownlint",), expect_exit=1,
        signals=[("stderr", r"^docs/ops/escalation\.md:\d+(:\d+)? (error )?MD042", "the one empty link")],
    ),
    Recipe(
        name="esbuild-bundle-error", tool="esbuild", category="build",
        argv=["esbuild", "src/main.ts", "--bundle", "--outfile=dist/app.js"],
        setup=_esbuild_error_setup, version=["esbuild", "--version"], needs=("esbuild",), expect_exit=1,
        signals=[
            ("stderr", r"\[ERROR\] ", "each error"),
            ("stderr", r"^    src/\w+\.ts:\d+:\d+:$", "where each error is"),
            ("stderr", r"^\d+ errors?$", "count"),
        ],
    ),
    Recipe(
        name="esbuild-bundle-ok", tool="esbuild", category="build",
        argv=["esbuild", "src/main.js", "--bundle", "--outfile=dist/app.js"],
        setup=_esbuild_ok_setup, version=["esbuild", "--version"], needs=("esbuild",), expect_exit=0,
        signals=[
            ("stderr", r"\[WARNING\] ", "each warning"),
            ("stderr", r"^  dist/app\.js ", "the output file"),
        ],
    ),
    Recipe(
        name="npm-ls-problems", tool="npm", category="package-manager", argv=["npm", "ls", "--all"],
        setup=_npm_ls_setup, version=["npm", "--version"], needs=("npm",), expect_exit=1,
        signals=[
            ("stdout", r"UNMET DEPENDENCY chalk@", "the missing package in the tree"),
            ("stdout", r"lodash@3\.10\.1 invalid", "the wrong version in the tree"),
            ("stdout", r"left-pad@1\.3\.0 extraneous", "the extraneous package"),
            ("stderr", r"^npm error code ELSPROBLEMS$", "error code"),
            ("stderr", r"^npm error (missing|invalid): ", "each problem"),
        ],
    ),
    Recipe(
        name="npm-run-build-crash", tool="npm", category="build", argv=["npm", "run", "build"],
        setup=_npm_run_setup, version=["npm", "--version"], needs=("npm",), expect_exit=1,
        signals=[
            ("stdout", r"^building billing\.\.\.$", "the step that failed"),
            ("stderr", r"^SyntaxError: ", "the error"),
            ("stderr", r"^    at file:///.*/scripts/build\.mjs:\d+:\d+$", "where in the project's code"),
        ],
    ),
    Recipe(
        name="yamllint-k8s", tool="yamllint", category="linter", argv=["yamllint", "deploy"],
        setup=_yamllint_setup, version=["yamllint", "--version"], needs=("yamllint",), expect_exit=1,
        signals=[
            ("stdout", r"^deploy/k8s/(ingress|cron)\.yaml$", "the files with errors"),
            ("stdout", r"^  \d+:\d+ +error ", "each error"),
        ],
    ),
    Recipe(
        name="jq-stream-error", tool="jq", category="data", argv=["jq", "-c", "select(.type == \"purchase\")", "events.jsonl"],
        setup=_jq_setup, version=["jq", "--version"], needs=("jq",), expect_exit=4,
        signals=[("stderr", r"^(jq: error|parse error)", "the parse error and where")],
    ),
    Recipe(
        name="service-log-one-error", tool="python", category="log", argv=["python", "service.py"],
        setup=_service_setup, version=["python", "--version"], expect_exit=0,
        signals=[
            ("stderr", r" ERROR orders\.api ", "the one error"),
            ("stderr", r"^Traceback \(most recent call last\):$", "its trace"),
            ("stderr", r"^KeyError: 'price'$", "the exception"),
            ("stderr", r" shutdown: \d+ requests handled, 1 failed$", "the final count"),
        ],
    ),
    Recipe(
        name="minified-json-dump", tool="python", category="data", argv=["python", "dump_catalog.py"],
        setup=_minified_setup, version=["python", "--version"], expect_exit=0,
        signals=[("stderr", r"^dumped \d+ products, \d+ bytes$", "what was dumped")],
    ),
    Recipe(
        name="csv-export", tool="python", category="data", argv=["python", "export_orders.py"],
        setup=_csv_setup, version=["python", "--version"], expect_exit=0,
        signals=[
            ("stdout", r"^order_id,customer,", "the header row"),
            ("stderr", r"^exported \d+ orders$", "the count"),
        ],
    ),
    Recipe(
        name="pre-commit-run", tool="pre-commit", category="hooks", argv=["pre-commit", "run", "--all-files"],
        setup=_precommit_setup, version=["pre-commit", "--version"], needs=("pre-commit", "git"), expect_exit=1,
        prep=[["git", "init", "-q"], ["git", "add", "-A"]],
        signals=[
            ("stdout", r"Failed$", "each failing hook"),
            ("stdout", r"^- hook id: ", "which hook failed"),
            ("stdout", r"^lib/mod_3\.py:\d+:", "the offending lines"),
            ("stdout", r"^lib/mod_7\.py\.orig$", "the leftover file"),
        ],
    ),
]
