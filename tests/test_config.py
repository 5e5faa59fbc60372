"""The configuration file: defaults, validation, location and the `config show` shape."""

from __future__ import annotations

import os

import pytest

from yarp import config
from yarp.errors import EXIT_USAGE, UsageError


def test_defaults_when_missing(private_home):
    loaded = config.load()
    assert loaded == config.Config()
    assert loaded.to_json() == {
        "version": 1,
        "pruning": {"enabled": True},
        "output": {"cap_bytes": 5120, "recovery_cap_bytes": 32768, "recovery_cap_lines": 1900},
        "archive": {"enabled": True, "path": str(private_home / "home" / ".local" / "share" / "yarp" / "tool-calls.sqlite3")},
        "rules": {"packs": []},
    }


def test_full_file(private_home):
    path = private_home / "home" / ".config" / "yarp" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "version = 1\n[pruning]\nenabled = false\n[output]\ncap_bytes = 0\nrecovery_cap_bytes = 4096\n"
        "recovery_cap_lines = 10\n[archive]\nenabled = false\npath = \"~/a.sqlite3\"\n[rules]\npacks = [\"/p.toml\"]\n"
    )
    loaded = config.load()
    assert loaded == config.Config(False, 0, 4096, 10, False, "~/a.sqlite3", ("/p.toml",))
    shown = loaded.to_json()
    assert shown["archive"]["path"] == str(private_home / "home" / "a.sqlite3")
    assert os.path.isabs(shown["archive"]["path"]) and shown["rules"]["packs"] == ["/p.toml"]


def test_archive_env_overrides_configured_path(private_home, monkeypatch):
    monkeypatch.setenv("YARP_ARCHIVE", str(private_home / "env.sqlite3"))
    shown = config.parse('version = 1\n[archive]\npath = "/elsewhere.sqlite3"\n').to_json()
    assert shown["archive"]["path"] == str(private_home / "env.sqlite3")


def test_config_location(private_home, monkeypatch):
    assert config.config_path() == str(private_home / "home" / ".config" / "yarp" / "config.toml")
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # not absolute: ignored, as XDG requires
    assert config.config_path() == os.path.join(os.path.expanduser("~"), ".config", "yarp", "config.toml")
    monkeypatch.setenv("YARP_CONFIG", str(private_home / "x.toml"))
    assert config.config_path() == str(private_home / "x.toml")


@pytest.mark.parametrize("cap", [0, 1024, 5120, 16 * 1024 * 1024])
def test_cap_bounds_accepted(cap):
    assert config.parse(f"version = 1\n[output]\ncap_bytes = {cap}\n").cap_bytes == cap


BAD = {
    "not toml": "version = = 1",
    "missing version": "[pruning]\nenabled = true\n",
    "version 2": "version = 2\n",
    "unknown section": "version = 1\n[telemetry]\nenabled = true\n",
    "unknown key": "version = 1\n[pruning]\nlevel = 3\n",
    "section not a table": "version = 1\npruning = true\n",
    "wrong type": 'version = 1\n[pruning]\nenabled = "yes"\n',
    "bool as int": "version = 1\n[output]\ncap_bytes = true\n",
    "cap too small": "version = 1\n[output]\ncap_bytes = 1023\n",
    "cap too large": "version = 1\n[output]\ncap_bytes = 16777217\n",
    "negative recovery": "version = 1\n[output]\nrecovery_cap_bytes = 0\n",
    "packs not strings": "version = 1\n[rules]\npacks = [1]\n",
    "path not string": "version = 1\n[archive]\npath = 3\n",
}


@pytest.mark.parametrize("text", BAD.values(), ids=list(BAD))
def test_invalid_files_are_usage_errors(text):
    with pytest.raises(UsageError) as caught:
        config.parse(text)
    assert caught.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize("version", ["true", "1.0"])
def test_version_must_be_the_integer_one(version):
    with pytest.raises(UsageError):
        config.parse(f"version = {version}\n")


def test_empty_archive_path_is_refused_not_defaulted():
    with pytest.raises(UsageError):
        config.parse('version = 1\n[archive]\npath = ""\n')


def test_unreadable_config_is_a_usage_error(private_home, monkeypatch):
    directory = private_home / "dir.toml"
    directory.mkdir()
    monkeypatch.setenv("YARP_CONFIG", str(directory))
    with pytest.raises(UsageError):
        config.load()
