"""The user configuration file (`$XDG_CONFIG_HOME/yarp/config.toml`).

TOML, `version = 1`, unknown keys rejected, with the reference contract's keys and
defaults. `yarp config show --json` prints exactly these keys. `yarp run` reads it
on every call, so a validated configuration is kept in the parse cache
(`yarp.parse_cache`, keyed by the file's bytes): a warm load imports no TOML parser.
"""

import os

from yarp._record import Record
from yarp.limits import (
    DEFAULT_CAP_BYTES,
    DEFAULT_RECOVERY_CAP_BYTES,
    DEFAULT_RECOVERY_CAP_LINES,
    MAX_CAP_BYTES,
    MIN_CAP_BYTES,
)
from yarp.paths import resolve_archive

CONFIG_ENV = "YARP_CONFIG"


class Config(Record):
    """The validated configuration: pruning and cap sizes, recovery caps, archive switch and path, rule packs."""
    __slots__ = (
        "pruning_enabled", "cap_bytes", "recovery_cap_bytes", "recovery_cap_lines", "archive_enabled",
        "archive_path", "rule_packs",
    )
    _defaults = {
        "pruning_enabled": True,
        "cap_bytes": DEFAULT_CAP_BYTES,
        "recovery_cap_bytes": DEFAULT_RECOVERY_CAP_BYTES,
        "recovery_cap_lines": DEFAULT_RECOVERY_CAP_LINES,
        "archive_enabled": True,
        "archive_path": None,
        "rule_packs": (),
    }
    pruning_enabled: bool
    cap_bytes: int
    recovery_cap_bytes: int
    recovery_cap_lines: int
    archive_enabled: bool
    archive_path: str | None
    rule_packs: tuple[str, ...]

    def to_json(self, environ=os.environ) -> dict:
        """The reference contract's `config show --json` shape (archive path absolute)."""
        return {
            "version": 1,
            "pruning": {"enabled": self.pruning_enabled},
            "output": {
                "cap_bytes": self.cap_bytes,
                "recovery_cap_bytes": self.recovery_cap_bytes,
                "recovery_cap_lines": self.recovery_cap_lines,
            },
            "archive": {
                "enabled": self.archive_enabled,
                "path": resolve_archive(None, environ, self.archive_path).path,
            },
            "rules": {"packs": list(self.rule_packs)},
        }


_SCHEMA = {
    "pruning": {"enabled": bool},
    "output": {"cap_bytes": int, "recovery_cap_bytes": int, "recovery_cap_lines": int},
    "archive": {"enabled": bool, "path": str},
    "rules": {"packs": list},
}


def config_path(environ=os.environ) -> str:
    """`$YARP_CONFIG`, else `$XDG_CONFIG_HOME/yarp/config.toml` (else `~/.config/yarp/config.toml`)."""
    explicit = environ.get(CONFIG_ENV)
    if explicit:
        return explicit
    base = environ.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "yarp", "config.toml")


def parse(text: str) -> Config:
    """Parse and validate configuration text; raise `UsageError` on any problem."""
    import tomllib

    from yarp.errors import UsageError

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"configuration is not valid TOML: {exc}") from None
    version = data.get("version")
    if type(version) is not int or version != 1:
        raise UsageError("configuration must declare version = 1")
    values: dict = {}
    for section, body in data.items():
        if section == "version":
            continue
        if section not in _SCHEMA or not isinstance(body, dict):
            raise UsageError(f"unknown configuration key: {section}")
        for key, value in body.items():
            expected = _SCHEMA[section].get(key)
            if expected is None:
                raise UsageError(f"unknown configuration key: {section}.{key}")
            if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
                raise UsageError(f"configuration key {section}.{key} must be {expected.__name__}")
            values[(section, key)] = value
    cap = values.get(("output", "cap_bytes"), DEFAULT_CAP_BYTES)
    if cap != 0 and not MIN_CAP_BYTES <= cap <= MAX_CAP_BYTES:
        raise UsageError(f"output.cap_bytes must be 0 or between {MIN_CAP_BYTES} and {MAX_CAP_BYTES}")
    for key in ("recovery_cap_bytes", "recovery_cap_lines"):
        if values.get(("output", key), 1) < 1:
            raise UsageError(f"output.{key} must be positive")
    if values.get(("archive", "path")) == "":
        raise UsageError("archive.path must not be empty")
    packs = values.get(("rules", "packs"), [])
    if not all(isinstance(p, str) for p in packs):
        raise UsageError("rules.packs must be a list of strings")
    return Config(
        pruning_enabled=values.get(("pruning", "enabled"), True),
        cap_bytes=cap,
        recovery_cap_bytes=values.get(("output", "recovery_cap_bytes"), DEFAULT_RECOVERY_CAP_BYTES),
        recovery_cap_lines=values.get(("output", "recovery_cap_lines"), DEFAULT_RECOVERY_CAP_LINES),
        archive_enabled=values.get(("archive", "enabled"), True),
        archive_path=values.get(("archive", "path")),
        rule_packs=tuple(packs),
    )


#: The type of each `Config` field, in order, as the parse cache holds them.
_CACHED_TYPES = (bool, int, int, int, bool, (str, type(None)), tuple)


def _from_cache(values) -> Config | None:
    """A cached configuration, or None when the entry is not what `load` stores."""
    if (type(values) is not tuple or len(values) != len(_CACHED_TYPES)
            or not all(isinstance(v, t) for v, t in zip(values, _CACHED_TYPES))):
        return None
    return Config(*values)


def load(environ=os.environ) -> Config:
    """Load the configuration file, or the defaults when there is none."""
    path = config_path(environ)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        from yarp.errors import UsageError

        raise UsageError(f"cannot read configuration: {exc.strerror}") from None
    from yarp import parse_cache

    key = parse_cache.cache_key("config", [("config", text.encode("utf-8", "surrogatepass"))])
    cached = _from_cache(parse_cache.load("config", key, environ))
    if cached is not None:
        return cached
    config = parse(text)
    parse_cache.store("config", key, config._values(), environ)
    return config
