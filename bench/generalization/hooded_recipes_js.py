"""Hooded recipes (js): filled in as the half is recorded.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from hooded_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS = ["@japa/runner@5.3.0", "@japa/assert@4.2.0", "vue-tsc@2.1.10", "vue@3.5.13", "typescript@5.6.3",
            "npm-run-all@4.1.5", "ibm-openapi-validator@1.38.4", "graphql-schema-linter@3.0.1", "graphql@16.11.0",
            "dpdm@4.3.0", "nodemon@3.1.14", "@microsoft/api-extractor@7.60.2", "ts-unused-exports@11.0.1",
            "@manypkg/cli@0.25.1", "ejs@3.1.10", "quick-lint-js@3.2.0", "clean-css-cli@5.6.3"]
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {}
