"""The agent registry (`yarp.agents`): every folder's record is complete, and lookups never import strangers.

What a folder must hold is docs/design/agents.md; these tests hold every
agent to it, so a new agent's folder that lacks a field or a part fails here
before any of its users do.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from yarp import agents

#: Record fields every agent has, and their types.
REQUIRED = {"NAME": str, "LABEL": str, "ADAPTER": str, "TOOL_CLASSES": dict, "HOST_VIEWS": dict,
            "REPLACES_VIEW": bool, "INSTALL_FILES": tuple, "INSTALL_NOTES": tuple, "DOCTOR_NAME": str,
            "RESULT_VIEW": dict, "TRANSCRIPTS": str}
#: Further fields of an agent hooked up by command hooks.
HOOKS_REQUIRED = {"HOOK_EVENTS": tuple, "BEFORE_TOOL": str, "CAPS_VIEW": bool, "SHELL_TOOLS": frozenset,
                  "HOOK_HELP": str}
EXTENSION_REQUIRED = {"EXTENSION_FILES": tuple}
OPTIONAL = {"REWRITE_OFF_ENV": str, "FAILURE_NOTICE": str, "EVENT_MEMBER": str, "SESSION_MEMBER": str,
            "TRUST_NOTE": str, "EXTENSION_MANIFEST": bool, "EXTENSION_ENTRY": tuple, "EXTENSION_BASE": str}
HOST_VIEW_FIELDS = {"limit", "overflow", "notice", "lines"}


def test_the_agents_are_registered():
    assert agents.names() == ("claude-code", "cline", "codex", "droid", "gemini", "kilo-code", "opencode", "pi",
                              "qwen-code")
    assert agents.hooked() == ("claude-code", "cline", "codex", "droid", "gemini", "qwen-code")


@pytest.mark.parametrize("name", agents.names())
def test_each_record_has_its_fields(name):
    record = agents.record(name)
    assert record.__name__ == agents.module_name(name) and record.NAME == name
    expected = dict(REQUIRED)
    expected.update(HOOKS_REQUIRED if record.ADAPTER == agents.HOOKS else EXTENSION_REQUIRED)
    for field, kind in expected.items():
        assert isinstance(getattr(record, field, None), kind), f"{name}: {field} is not a {kind.__name__}"
    for field, kind in OPTIONAL.items():
        assert getattr(record, field, None) is None or isinstance(getattr(record, field), kind), field
    public = {field for field in vars(record) if field.isupper()}
    assert public <= set(expected) | set(OPTIONAL), f"{name}: fields docs/design/agents.md does not list"
    assert record.ADAPTER in (agents.HOOKS, agents.EXTENSION)
    assert set(record.TOOL_CLASSES.values()) <= {"shell", "read"}
    assert all(key == key.lower() for key in record.TOOL_CLASSES)
    for (cls, failed), fields in record.HOST_VIEWS.items():
        assert cls in ("shell", "read", "other") and failed in (True, False, None)
        assert "limit" in fields and set(fields) <= HOST_VIEW_FIELDS
    assert {"host", "ours", "left"} <= set(record.RESULT_VIEW) and "{cap}" in record.RESULT_VIEW["ours"]
    if record.ADAPTER == agents.HOOKS:
        assert record.BEFORE_TOOL in record.HOOK_EVENTS
    base = getattr(record, "EXTENSION_BASE", None)
    if base is not None:  # an extension built on another agent's: that one is an extension without a base
        assert record.ADAPTER == agents.get(base, "ADAPTER") == agents.EXTENSION
        assert agents.get(base, "EXTENSION_BASE") is None


@pytest.mark.parametrize("name", agents.names())
def test_each_record_imports_nothing(name):
    # The hook process reads a record on every event: importing it loads that module alone.
    code = (f"import sys; import yarp.agents; before = set(sys.modules); "
            f"import {agents.module_name(name)}; print(sorted(set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == repr([agents.module_name(name)])


@pytest.mark.parametrize("name", ["", "ts", "__pycache__", "Claude-Code", "claude_code", "../x", "a" * 33, "x",
                                  "os", None, 3])
def test_a_lookup_of_a_stranger_is_none(name):
    assert agents.record(name) is None
    assert agents.hook_record(name) is None


def test_a_part_is_imported_only_when_asked_for():
    code = ("import sys, yarp.agents as a; a.record('gemini'); before = set(sys.modules); "
            "a.part('gemini', 'hooks'); print(sorted(m for m in set(sys.modules) - before if 'agents' in m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == repr(["yarp.agents.gemini.hooks"])
    with pytest.raises(KeyError):
        agents.part("gemini", "view")
    with pytest.raises(KeyError):
        agents.part("nobody", "hooks")


@pytest.mark.parametrize("name", agents.hooked())
def test_the_hook_process_reads_the_same_facts_as_the_record(name):
    # The hook process reads hook.json itself, without the registry; both must say the same.
    import json
    from pathlib import Path

    from yarp.clients.hook import hook_facts

    record = agents.record(name)
    facts = hook_facts(name)
    assert facts is not None
    assert (tuple(facts["events"]), facts["beforeTool"], facts["capsView"]) == (
        record.HOOK_EVENTS, record.BEFORE_TOOL, record.CAPS_VIEW)
    assert facts.get("rewriteOffEnv") == getattr(record, "REWRITE_OFF_ENV", None)
    assert facts.get("failureNotice") == getattr(record, "FAILURE_NOTICE", None)
    assert facts.get("eventMember") == getattr(record, "EVENT_MEMBER", None)
    assert facts.get("sessionMember") == getattr(record, "SESSION_MEMBER", None)
    path = Path(record.__file__).with_name(agents.HOOK_FACTS)
    assert set(json.loads(path.read_text())) <= {"events", "beforeTool", "capsView", "rewriteOffEnv", "failureNotice",
                                                 "eventMember", "sessionMember"}


@pytest.mark.parametrize("name", ["", "ts", "__pycache__", "pi", "opencode", "claude_code", "Codex", "../codex",
                                  "codex/../gemini", None])
def test_the_hook_process_takes_no_stranger_for_an_agent(name):
    from yarp.clients.hook import hook_facts

    assert hook_facts(name) is None


def test_the_hook_process_imports_no_python_of_the_agents():
    code = ("import sys; from yarp.clients.hook import hook_facts; assert hook_facts('codex'); "
            "print(sorted(m for m in sys.modules if m.startswith('yarp.agents')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
