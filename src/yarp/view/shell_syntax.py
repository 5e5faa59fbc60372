"""The shell's syntax as the planner reads it: the tree-sitter-bash parser, its bounds, literal words.

Nothing here executes, expands or rewrites a command. The grammar is loaded
on first use; `yarp run` never imports this module.
"""

from __future__ import annotations

from yarp.limits import MAX_COMMAND_BYTES, MAX_TREE_DEPTH, MAX_TREE_NODES

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


def _unescape(raw: str, escapable: str | None = None) -> str:
    """A shell word's backslash escapes removed: any character outside quotes, only
    `escapable` ones inside double quotes; an escaped newline joins the lines."""
    out = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw) and (escapable is None or raw[i + 1] in escapable):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def literal_value(node) -> str | None:
    """The literal value of an argument node, or None when it needs the shell to expand it."""
    kind = node.type
    text = node.text.decode("utf-8")
    if kind in ("word", "number"):
        return _unescape(text)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == '"':
                continue
            if child.type != "string_content":
                return None
            parts.append(_unescape(child.text.decode("utf-8"), '$`"\\\n'))
        return "".join(parts)
    if kind == "concatenation":
        parts = []
        for child in node.children:
            value = literal_value(child)
            if value is None:
                return None
            parts.append(value)
        return "".join(parts)
    return None


def within_bounds(root) -> bool:
    """Whether a parsed tree stays within `MAX_TREE_DEPTH` levels and `MAX_TREE_NODES` nodes."""
    stack = [(root, 0)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if depth > MAX_TREE_DEPTH or seen > MAX_TREE_NODES:
            return False
        stack.extend((child, depth + 1) for child in node.children)
    return True


def parse_text(text: str):
    """(the root node, "ok"), or (None, why the text cannot be planned)."""
    try:
        source = text.encode("utf-8")
    except UnicodeEncodeError:
        return None, "not_utf8"  # a lone surrogate (from JSON) or an undecodable byte (from argv)
    if len(source) > MAX_COMMAND_BYTES:
        return None, "too_large"
    if not text.strip():
        return None, "empty"
    if "\x00" in text:
        return None, "nul"
    root = _parser().parse(source).root_node
    if root.has_error:
        return None, "syntax_error"
    if not within_bounds(root):
        return None, "too_deep"
    return root, "ok"


def parse_program(source: bytes):
    """The tree-sitter-bash root of `source` within the planner's bounds, or None."""
    if len(source) > MAX_COMMAND_BYTES * 16 or b"\x00" in source:
        return None
    root = _parser().parse(source).root_node
    return None if root.has_error or not within_bounds(root) else root
