"""Cowled recipes (system): filled in as the half is recorded.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from cowled_common import Run, S, exits, recipe, sh, vbin, write  # noqa: F401

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "wget": "1.21.3-1+deb12u1", "apache2-utils": "2.4.71-1~deb12u1", "icinga2": "2.13.6-2+deb12u2", "caddy": "2.6.2-5",
    "aide": "0.18.3-1+deb12u5", "restic": "0.14.0-1+b5", "beancount": "2.3.5-2", "knot": "3.2.6-1",
    "xorriso": "1.5.4-4", "sloccount": "2.26-5.2", "radvd": "1:2.19-1+b1", "gzip": "1.12-1",
}
