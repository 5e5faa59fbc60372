"""The parse cache: a warm load equals a parse, and any doubt falls back to parsing.

Real files, real permissions: each test points XDG_CACHE_HOME at its own
directory and checks what lands on disk.
"""

from __future__ import annotations

import os
import stat

import pytest

from yarp.errors import UsageError
from yarp import config, parse_cache
from yarp.view.rules import Rule, builtin_sources, load_rules

PACK = """version = 1
[[rule]]
id = "user.frob"
program = ["frob"]
action = "reduce"
reducer = "filter"
keep = ["^KEEP"]
drop = ["^noise"]
"""


@pytest.fixture
def cache_env(tmp_path):
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}


def _cache_file(env) -> str:
    return parse_cache.cache_path("rules", env)


def _key(pack: str) -> str:
    files = [(origin, open(path, "rb").read()) for path, origin in builtin_sources()]
    return parse_cache.cache_key("rules", [*files, ("rules.packs[0]", open(pack, "rb").read())])


def _write_pack(tmp_path, text: str = PACK) -> str:
    path = tmp_path / "pack.toml"
    path.write_text(text)
    return str(path)


def test_first_load_writes_a_private_cache_and_the_second_reads_it(tmp_path, cache_env):
    pack = _write_pack(tmp_path)
    parsed = load_rules([pack], environ=cache_env)
    path = _cache_file(cache_env)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    key = _key(pack)
    assert len(parse_cache.load("rules", key, cache_env)) == len(parsed.rules)
    warm = load_rules([pack], environ=cache_env)
    assert warm.rules == parsed.rules
    frob = warm.select(["frob"]).rule
    assert frob.keep.search(b"KEEP this") and frob.drop.search(b"noise here")
    assert frob.keep.pattern == parsed.select(["frob"]).rule.keep.pattern


def test_editing_a_pack_makes_the_cache_stale(tmp_path, cache_env):
    pack = _write_pack(tmp_path)
    assert load_rules([pack], environ=cache_env).select(["frob"]).rule.keep.pattern == b"(?:^KEEP)"
    # Same size, same modification time, at once: the content still tells.
    before = os.stat(pack)
    with open(pack, "w") as handle:
        handle.write(PACK.replace("^KEEP", "^KEPT"))
    os.utime(pack, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(pack).st_size == before.st_size
    assert load_rules([pack], environ=cache_env).select(["frob"]).rule.keep.pattern == b"(?:^KEPT)"


def test_an_invalid_edit_is_reported_even_with_a_warm_cache(tmp_path, cache_env):
    pack = _write_pack(tmp_path)
    load_rules([pack], environ=cache_env)
    with open(pack, "a") as handle:
        handle.write('[[rule]]\nid = "Bad Id"\nprogram = ["x"]\naction = "passthrough"\n')
    with pytest.raises(UsageError, match=r"rules.packs\[0\], rule 2"):
        load_rules([pack], environ=cache_env)


def test_a_corrupt_cache_is_ignored_and_rewritten(tmp_path, cache_env):
    pack = _write_pack(tmp_path)
    expected = load_rules([pack], environ=cache_env).rules
    path = _cache_file(cache_env)
    with open(path, "r+b") as handle:
        handle.truncate(100)
    key = _key(pack)
    assert parse_cache.load("rules", key, cache_env) is None
    assert load_rules([pack], environ=cache_env).rules == expected
    assert parse_cache.load("rules", key, cache_env) is not None  # written again


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_a_cache_directory_others_can_write_is_never_used(tmp_path, cache_env, mode):
    pack = _write_pack(tmp_path)
    load_rules([pack], environ=cache_env)
    directory = os.path.dirname(_cache_file(cache_env))
    os.chmod(directory, mode)
    key = _key(pack)
    assert parse_cache.load("rules", key, cache_env) is None
    os.unlink(_cache_file(cache_env))
    assert load_rules([pack], environ=cache_env).select(["frob"]).outcome == "reduce"
    assert not os.path.exists(_cache_file(cache_env))  # nothing written into it either


def test_a_symlinked_or_shared_cache_file_is_never_read(tmp_path, cache_env):
    pack = _write_pack(tmp_path)
    load_rules([pack], environ=cache_env)
    path = _cache_file(cache_env)
    key = _key(pack)
    os.chmod(path, 0o666)
    assert parse_cache.load("rules", key, cache_env) is None
    os.chmod(path, 0o600)
    os.rename(path, path + ".real")
    os.symlink(path + ".real", path)
    assert parse_cache.load("rules", key, cache_env) is None


def test_an_unusable_cache_location_still_loads_rules(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    env = {"XDG_CACHE_HOME": str(blocker), "HOME": str(tmp_path)}
    rules = load_rules([], environ=env)
    assert rules.select(["git", "log"]).outcome == "reduce"


def test_a_missing_pack_is_still_a_usage_error(tmp_path, cache_env):
    load_rules([], environ=cache_env)
    with pytest.raises(UsageError, match="does not exist"):
        load_rules([str(tmp_path / "absent.toml")], environ=cache_env)


CONFIG = """version = 1
[output]
cap_bytes = 8192
[rules]
packs = ["~/packs/one.toml"]
"""


def _config_env(tmp_path, text: str) -> dict:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path), "YARP_CONFIG": str(path)}


def test_configuration_is_cached_and_edits_are_seen(tmp_path):
    env = _config_env(tmp_path, CONFIG)
    first = config.load(env)
    assert (first.cap_bytes, first.rule_packs) == (8192, ("~/packs/one.toml",))
    assert stat.S_IMODE(os.stat(parse_cache.cache_path("config", env)).st_mode) == 0o600
    key = parse_cache.cache_key("config", [("config", CONFIG.encode())])
    assert parse_cache.load("config", key, env) == first._values()
    assert config.load(env) == first
    with open(env["YARP_CONFIG"], "w") as handle:
        handle.write(CONFIG.replace("8192", "9000"))
    assert config.load(env).cap_bytes == 9000


def test_an_invalid_configuration_is_reported_even_with_a_warm_cache(tmp_path):
    env = _config_env(tmp_path, CONFIG)
    config.load(env)
    with open(env["YARP_CONFIG"], "w") as handle:
        handle.write(CONFIG.replace("8192", "7"))
    with pytest.raises(UsageError, match="cap_bytes"):
        config.load(env)


def test_a_cache_entry_of_the_wrong_shape_is_ignored(tmp_path):
    env = _config_env(tmp_path, CONFIG)
    key = parse_cache.cache_key("config", [("config", CONFIG.encode())])
    parse_cache.store("config", key, ("not", "a", "config"), env)
    assert config.load(env).cap_bytes == 8192
    assert parse_cache.load("config", key, env) == config.load(env)._values()  # overwritten


def test_a_damaged_cached_pattern_is_a_usage_error_not_a_crash(tmp_path, cache_env):
    # Only a damaged cache can hold a pattern that does not compile (parsing
    # checks them); using it must raise the error `yarp run` falls back on.
    pack = _write_pack(tmp_path)
    load_rules([pack], environ=cache_env)
    key = _key(pack)
    rows = [list(row) for row in parse_cache.load("rules", key, cache_env)]
    frob = next(row for row in rows if row[0] == "user.frob")
    frob[Rule._fields.index("keep_patterns")] = ("unbalanced(",)
    parse_cache.store("rules", key, tuple(tuple(row) for row in rows), cache_env)
    rule = load_rules([pack], environ=cache_env).select(["frob"]).rule
    assert rule.keep_patterns == ("unbalanced(",)  # the damaged entry was used
    with pytest.raises(UsageError, match="do not compile"):
        rule.keep
