"""Shrouded recipes for VCS, services, data tools, listings and logs.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from shrouded_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "tcpdump": "4.99.3-1", "dos2unix": "7.4.3-1", "tree": "2.1.0-1", "btrfs-progs": "6.2-1+deb12u2",
    "netplan.io": "0.106-2+deb12u1", "ripgrep": "13.0.0-4+b2", "guilt": "0.36-3", "isc-dhcp-server": "4.4.3-P1-2",
    "gdisk": "1.0.9-2.1", "pflogsumm": "1.1.5-8",
}
