"""What the sealed half's recipes share: where its tools live, the recipe registry, the run environment.

The sealed half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
later halves' place (`half_cli.Place`: `/tmp/yarp-gen/sealed`), so that its cases land in
`manifest-sealed.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable.
"""

from __future__ import annotations

from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)
from half_cli import Place

PLACE = Place("sealed")
WORK, HOME, NPM, VENV = PLACE.work, PLACE.home, PLACE.npm, PLACE.venv
RECIPES: list[Recipe] = PLACE.recipes
recipe, vbin, nbin, link_node_modules = PLACE.recipe, PLACE.vbin, PLACE.nbin, PLACE.link_node_modules
sealed_env = PLACE.env

# The pinned tools, installed outside the repository (npm prefix and venv above, Debian packages).
NPM_PINS = ["cspell@8.18.1", "write-good@1.0.8", "textlint@14.5.0", "textlint-rule-no-todo@2.0.1",
            "jsonlint@1.6.3", "ajv-cli@5.0.0", "@taplo/cli@0.7.0", "@coffeelint/cli@5.2.11", "tslint@6.1.3",
            "typescript@5.8.2", "jasmine@5.6.0", "uvu@0.5.6", "qunit@2.24.1", "html-validate@9.5.2",
            "madge@8.0.0", "depcheck@1.4.7", "flow-bin@0.266.1"]
PY_PINS = ["pycodestyle==2.13.0", "mccabe==0.7.0", "rstcheck==6.2.4", "doc8==1.1.2", "proselint==0.14.0",
           "djlint==1.36.4", "green==4.0.2", "autopep8==2.3.2", "check-jsonschema==0.33.0", "bashate==2.1.1",
           "tornado==6.4.2", "csvkit==2.1.0", "mdformat==0.7.22", "deptry==0.23.0"]
APT_PINS = {"subversion": "1.14.2-4+deb12u1", "xmlstarlet": "1.6.1-3", "acl": "2.3.1-3",
            "redis-server": "5:7.0.15-1~deb12u10", "bats": "1.8.2-1", "shunit2": "2.1.8-3",
            "check": "0.15.2-2+b1", "libcunit1-dev": "2.1-3-dfsg-2.6", "phpunit": "9.6.7-1+deb12u1",
            "lintian": "2.116.3+deb12u1", "sbcl": "2:2.2.9-1", "guile-3.0": "3.0.8-2",
            "fp-compiler": "3.2.2+dfsg-20", "gdc": "4:12.2.0-3", "valac": "0.56.3-1", "ocaml-dune": "2.9.3-1",
            "shfmt": "3.6.0-1+b2", "erlang-eunit": "1:25.2.3+dfsg-1+deb12u4", "ruby-minitest": "5.17.0-1"}


def as_nobody(argv: list[str]) -> list[str]:
    """`argv` run as the unprivileged user `nobody` (for tools that refuse root or need real denials)."""
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv]
