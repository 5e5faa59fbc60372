"""What the hidden half's recipes share: where its tools live, the recipe registry, the run environment.

The hidden half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
later halves' place (`half_cli.Place`: `/tmp/yarp-gen/hidden`), so that its cases land in
`manifest-hidden.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable.
"""

from __future__ import annotations

from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)
from half_cli import Place

PLACE = Place("hidden")
WORK, HOME, NPM, VENV = PLACE.work, PLACE.home, PLACE.npm, PLACE.venv
RECIPES: list[Recipe] = PLACE.recipes
recipe, vbin, nbin, link_node_modules = PLACE.recipe, PLACE.vbin, PLACE.nbin, PLACE.link_node_modules
hidden_env = PLACE.env

# The pinned tools, installed outside the repository (npm prefix and venv above, Debian packages).
NPM_PINS = ["@commitlint/cli@20.5.3", "@commitlint/config-conventional@20.5.3", "alex@11.0.1",
            "concurrently@9.2.5", "handlebars@4.7.10", "publint@0.3.25", "remark-cli@12.0.1",
            "remark-preset-lint-recommended@7.0.1", "solhint@6.2.4", "sort-package-json@3.7.1", "svgo@4.1.0",
            "tape@5.10.2", "terser@5.51.4", "uglify-js@3.19.3"]
PY_PINS = ["autoflake==2.4.0", "cmakelang==0.6.13", "Cython==3.3.1", "docformatter==1.7.8", "doit==0.37.0",
           "gitlint==0.19.1", "import-linter==2.16", "invoke==3.0.3", "pipdeptree==4.2.16", "reuse==6.2.0",
           "sphinx-lint==1.0.2", "supervisor==4.3.0", "toml-sort==0.26.0", "typos==1.52.2",
           "validate-pyproject==0.27", "vermin==1.9.2", "ty==1.2.0", "xdoctest==1.3.2",
           "cram==0.7", "zope.testrunner==8.3"]
APT_PINS = {"tcc": "0.9.27+git20200814.62c30a4a-1", "iverilog": "11.0-1.1+b1", "doxygen": "1.9.4-4",
            "graphviz": "2.42.2-7+deb12u1", "quilt": "0.67+really0.66-1", "haproxy": "2.6.12-1+deb12u4",
            "logrotate": "3.21.0-1", "sudo": "1.9.13p3-1+deb12u4", "cvs": "2:1.12.13+real-28+deb12u1",
            "rcs": "5.10.1-1", "desktop-file-utils": "0.26-1", "chktex": "1.7.8-1",
            "bind9-utils": "1:9.18.49-1~deb12u3", "fossil": "1:2.21-1+deb12u1"}
