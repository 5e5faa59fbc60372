"""Cloaked recipes for VCS, services, data tools, listings and logs.

Each signal is written from the raw output's meaning, without any view of it being computed.
"""

from __future__ import annotations

from cloaked_common import Run, S, exits, recipe, sh, write  # noqa: F401 (used by the recipes)

NPM_PINS: list[str] = []
PY_PINS: list[str] = []
APT_PINS: dict[str, str] = {
    "systemd-journal-remote": "252.39-1~deb12u2", "auditd": "1:3.0.9-1", "rclone": "1.60.1+dfsg-2+b5",
    "myrepos": "1.20180726", "freeradius": "3.2.1+dfsg-4+deb12u1", "xfsprogs": "6.1.0-1", "dosfstools": "4.2-1",
    "mtools": "4.0.33-1+really4.0.32-1", "stgit": "0.19-1.1", "dnsmasq": "2.90-4~deb12u2",
    "kea-dhcp4-server": "2.2.0-6", "lighttpd": "1.4.69-1", "rsyslog": "8.2302.0-1+deb12u2",
    "nagios4": "4.4.6-4+deb12u2", "recutils": "1.9-2",
}
