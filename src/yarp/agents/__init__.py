"""The agents YARP hooks up, one package each, found by name and loaded only when asked for.

Everything that is about one agent lives in its folder, `yarp/agents/<module>/`
(the agent's name with `-` as `_`: `some-agent` is `some_agent`); everything
agent-neutral (the CLI, the hook process, the validator, the broker's dispatch,
discovery, doctor, savings) reads it through this module and names no agent.
docs/design/agents.md says what a folder must hold; in short:

    <module>/__init__.py   the agent's record: plain data (its names, shell tools,
                           host limits, doctor and help texts); imports nothing.
    <module>/hook.json     an agent with command hooks: what the hook process
                           needs on every tool call (the events it forwards, the
                           one before the tool, whether it sends the cap, ...),
                           read there without importing any Python of the agent's
                           (`yarp.clients.hook.hook_facts`); `record` sets the
                           same facts on the record (`HOOK_EVENTS`, ...).
    <module>/hooks         its hook events decoded into the event its service
                           takes, and its installer's paths (layer `hooks`)
    <module>/broker        its hook service in the broker (layer `broker`)
    <module>/transcripts   its transcript reader for `yarp import` (layer `transcripts`)

Each part is a module or a package named for the layer it belongs to
(tests/test_layering.py holds each to its layer's imports), reached through
`part(name, layer)`, which imports it on first use: a process imports the
parts it uses and no other agent's. A folder without `__init__.py` (the
TypeScript the extension adapters share, `ts/`) is not an agent.

No `from __future__ import annotations` and no typing: each import is a real
one in a short-lived process.
"""

import os
import sys

#: The layers an agent's part may belong to, each a module or package of that name in its folder.
PARTS = ("hooks", "transcripts", "broker")
#: How an agent is hooked up: command hooks (`yarp hook NAME` per event, entries in its settings
#: file) or an extension (TypeScript copied into its folder, talking to `yarp archive ingest`).
HOOKS, EXTENSION = "hooks", "extension"
#: Longest agent name.
MAX_NAME_CHARS = 32
#: The file of an agent with command hooks that holds the hook process's facts, and the record's
#: field each of its members becomes (members with no default are required).
HOOK_FACTS = "hook.json"
_FACT_FIELDS = {"events": "HOOK_EVENTS", "beforeTool": "BEFORE_TOOL", "capsView": "CAPS_VIEW",
                "rewriteOffEnv": "REWRITE_OFF_ENV", "failureNotice": "FAILURE_NOTICE",
                "eventMember": "EVENT_MEMBER", "sessionMember": "SESSION_MEMBER"}

_HERE = os.path.dirname(os.path.abspath(__file__))
_records = {}
_names = None


def valid_name(name) -> bool:
    """Whether `name` could name an agent: lower-case ASCII letters, digits and `-`, a letter first."""
    return (type(name) is str and 0 < len(name) <= MAX_NAME_CHARS and name.isascii() and name[0].isalpha()
            and name.islower() and name.replace("-", "").isalnum())


def module_name(name: str) -> str:
    """The package of agent `name` (`yarp.agents.some_agent` for `some-agent`)."""
    return "yarp.agents." + name.replace("-", "_")


def record(name):
    """The record (the package module) of agent `name`, or None when no agent has that name.

    Imports that one agent's `__init__.py` and nothing else; safe for any
    string (an invalid name is never imported).
    """
    found = _records.get(name)
    if found is not None or not valid_name(name):
        return found
    full = module_name(name)
    try:
        # __import__ rather than importlib: the hook process does not load importlib.
        __import__(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        return None
    module = sys.modules[full]
    if getattr(module, "NAME", None) != name:
        return None  # a folder that is not an agent (no record, or another name)
    if getattr(module, "ADAPTER", None) == HOOKS:
        _set_hook_facts(module)
    _records[name] = module
    return module


def _set_hook_facts(module) -> None:
    """Set the facts of the agent's `hook.json` on its record (`HOOK_EVENTS` as a tuple)."""
    from yarp.json_text import loads

    with open(os.path.join(os.path.dirname(module.__file__), HOOK_FACTS), "rb") as handle:
        facts = loads(handle.read(), HOOK_FACTS)
    for member, field in _FACT_FIELDS.items():
        if member in facts:
            value = facts[member]
            setattr(module, field, tuple(value) if type(value) is list else value)


def names() -> tuple:
    """Every agent's name, sorted: the folders here that hold a record."""
    global _names
    if _names is None:
        found = []
        with os.scandir(_HERE) as entries:
            for entry in entries:
                name = entry.name.replace("_", "-")
                if entry.is_dir() and valid_name(name) and os.path.isfile(os.path.join(entry.path, "__init__.py")) \
                        and record(name) is not None:
                    found.append(name)
        _names = tuple(sorted(found))
    return _names


def hooked() -> tuple:
    """The agents hooked up by command hooks (`yarp hook NAME`), sorted."""
    return tuple(name for name in names() if record(name).ADAPTER == HOOKS)


def hook_record(name):
    """The record of agent `name` when it takes command hooks (`yarp hook NAME`), else None."""
    found = record(name)
    return found if found is not None and found.ADAPTER == HOOKS else None


def part(name: str, layer: str):
    """Agent `name`'s module for `layer` (one of `PARTS`), imported on first use; None when it has none.

    Raises `KeyError` for an unknown agent or layer. A caller may ask only for
    a layer it may import (tests/test_layering.py checks the literal `layer`).
    """
    if layer not in PARTS or record(name) is None:
        raise KeyError(name if layer in PARTS else layer)
    full = f"{module_name(name)}.{layer}"
    try:
        __import__(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        return None
    return sys.modules[full]


def has_part(name: str, layer: str) -> bool:
    """Whether agent `name` has a part for `layer`, without importing it (`KeyError`: no such agent or layer)."""
    if layer not in PARTS or record(name) is None:
        raise KeyError(name if layer in PARTS else layer)
    folder = os.path.join(_HERE, name.replace("-", "_"))
    return os.path.isfile(os.path.join(folder, layer + ".py")) or os.path.isfile(
        os.path.join(folder, layer, "__init__.py"))


def get(name: str, field: str, default=None):
    """One field of agent `name`'s record, `default` when the record leaves it out (`KeyError`: no such agent)."""
    found = record(name)
    if found is None:
        raise KeyError(name)
    return getattr(found, field, default)
