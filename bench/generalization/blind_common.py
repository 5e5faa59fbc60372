"""What the blind half's recipes share: where its tools live, the recipe registry, the run environment.

The blind half reuses the native generator's machinery (`Run`, `S`, `write`, `sh`, storage) and the
later halves' place (`half_cli.Place`: `/tmp/yarp-gen/blind`), so that its cases land in
`manifest-blind.json` only. Every recorded command runs in one environment: the pinned tools first on
PATH, a private HOME, `LANG=C.UTF-8`, `TZ=UTC`, no colours, no CI variable.
"""

from __future__ import annotations

from generate_native import Recipe, Run, S, Skip, exits, failing, sh, write  # noqa: F401 (re-exported)
from half_cli import Place

PLACE = Place("blind")
WORK, HOME, NPM, VENV = PLACE.work, PLACE.home, PLACE.npm, PLACE.venv
RECIPES: list[Recipe] = PLACE.recipes
recipe, vbin, nbin, link_node_modules = PLACE.recipe, PLACE.vbin, PLACE.nbin, PLACE.link_node_modules
blind_env = PLACE.env

# The pinned tools, installed outside the repository (npm prefix and venv above, Debian packages).
NPM_PINS = ["@biomejs/biome@1.9.4", "oxlint@0.16.6", "standard@17.1.2", "jshint@2.13.6", "htmlhint@1.1.4",
            "ava@6.2.0", "sass@1.86.0", "@babel/cli@7.27.0", "@babel/core@7.26.10", "@swc/cli@0.6.0",
            "@swc/core@1.11.13", "vite@6.2.5", "tsup@8.4.0", "pnpm@10.7.1", "yarn@1.22.22", "less@4.2.2",
            "typescript@5.8.2"]
PY_PINS = ["codespell==2.4.1", "pyupgrade==3.19.1", "radon==6.0.1", "sqlfluff==3.3.1", "yapf==0.43.0",
           "nose2==0.15.1", "behave==1.2.6", "robotframework==7.2.2", "fastapi==0.115.12", "uvicorn==0.34.0",
           "gunicorn==23.0.0", "poetry==2.1.2", "ansible-core==2.18.4", "pyflakes==3.3.2", "interrogate==1.7.0",
           "csvkit==2.1.0", "httpx==0.28.1", "Django==5.2"]
APT_PINS = {"gfortran": "4:12.2.0-3", "nasm": "2.16.01-1", "ocaml-nox": "4.13.1-4",
            "erlang-base": "1:25.2.3+dfsg-1+deb12u4", "scons": "4.4.0+dfsg-1", "ant": "1.10.13-1",
            "ruby-rspec": "3.12.0c0e1m1s0-1", "rubocop": "1.39.0+dfsg-1", "libperl-critic-perl": "1.148-1",
            "lua-check": "1.1.0-1", "lua-busted": "2.1.1-1", "libxml2-utils": "2.9.14+dfsg-1.3~deb12u6",
            "tidy": "2:5.6.0-11", "devscripts": "2.23.4+deb12u2", "php-cli": "2:8.2+93",
            "nginx-light": "1.22.1-9+deb12u12", "openssh-server": "1:9.2p1-2+deb12u10",
            "mercurial": "6.3.2-1+deb12u1", "miller": "6.6.0-2+b3"}
