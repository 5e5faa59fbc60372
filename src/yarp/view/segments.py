"""Where a compound shell command can take `yarp run`: one wrap point per simple command.

An agent types `cd pkg && npm test 2>&1 | tail -20`, not one bare program.
This module walks the tree-sitter-bash tree of such a text and decides, for
every simple command in it, whether `yarp run` goes in front of its name and
in which mode; the planner (`yarp.view.plan`) inserts those prefixes and
changes nothing else in the text. What belongs to the agent's own shell stays
there: builtins (`cd`, `export`, `source`, `set`, `echo`, …), functions the
text defines, loops' bodies, `exec`, privilege changes and commands whose
name the shell computes.

The mode says where the command's output goes:

* `view`: both streams reach the agent's result directly; `yarp run` prints
  its pruned and capped view.
* `pass`: a stream goes into a pipe, a file, a command or process
  substitution, or the command runs in the background or inside a function
  (whose caller may pipe it): the next reader must get exactly what it would
  have got without YARP, so `yarp run --pass` forwards the bytes unchanged,
  as they come, and archives them.

tree-sitter-bash widens a trailing redirection or a pipe to the whole list
before it (`a && b > f` comes back as `(a && b) > f`). Such a misparse only
ever moves commands from `view` to `pass`, which keeps the shell's meaning
and costs only the view; it never does the opposite.

This module never executes, expands or rewrites anything.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from yarp.view.shell_syntax import literal_value, parse_program

#: Builtins and keywords that change or read the agent's own shell state (or
#: stop it): they must run in that shell, and they print nothing of interest.
SHELL_STATE = frozenset({
    "cd", "pushd", "popd", "dirs", "export", "unset", "set", "shopt", "source", ".", "alias", "unalias",
    "declare", "typeset", "local", "readonly", "eval", "exit", "return", "shift", "trap", "ulimit",
    "umask", "wait", "jobs", "fg", "bg", "disown", "hash", "read", "mapfile", "readarray", "getopts",
    "let", "break", "continue", "builtin", "command", "enable", "history", "caller", "complete",
    "compgen", "compopt", "suspend", "times", "true", "false", ":", "test", "[", "logout", "kill",
})
#: Builtins whose output is the point of running them. They stay in the shell
#: (their external twins differ in corner cases, and zsh's `echo` differs
#: again); the host's own result keeps their bytes.
SHELL_OUTPUT = frozenset({"echo", "printf", "pwd", "type", "help"})
#: Programs run as they are: `exec` replaces the shell; the privilege changers
#: run their command as someone else and may ask for a password; `coproc` is a
#: keyword tree-sitter reads as a name.
LEFT_ALONE = frozenset({"exec", "sudo", "doas", "su", "runuser", "yarp", "coproc"})
#: Where the shell keeps reading commands: loops run their bodies many times,
#: and a `yarp run` per iteration could turn a loop of seconds into minutes.
_LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement", "until_statement",
                    "select_statement"})
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_OUTPUT_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
#: Words by which a text shows the commands it runs, wherever they appear (in an
#: `eval` string, a trap's action): a rewrite would be seen. Matching too much
#: only leaves a text unwrapped.
_SEES_COMMAND_TEXT = re.compile(
    rb"BASH_COMMAND|BASH_XTRACEFD|xtrace|\bDEBUG\b|\bset\s+(?:-o\s+verbose|[-+][A-Za-z]*[xv])")


@dataclass(frozen=True, slots=True)
class WrapPoint:
    """`yarp run` goes in front of the byte `offset` (the command's name), in `mode`."""

    offset: int
    mode: str
    program: str


@dataclass(frozen=True, slots=True)
class Segments:
    """The wrap points of one command text, and what was left in the shell.

    `unwrapped` holds one reason token per simple command left alone whose
    output would reach someone (a builtin like `echo`, a loop's body, a
    computed name, ...); state builtins such as `cd` are not counted.
    `recovery` says a `yarp search` / `yarp read` prints into the result.
    `xtrace` says the text can see its own commands' text (`set -x`, `set -v`,
    `shopt -so xtrace`, `eval "set -x"`, a `DEBUG` trap, `$BASH_COMMAND`): it
    would show the prefixes, so nothing may be wrapped.
    """

    points: tuple[WrapPoint, ...]
    unwrapped: tuple[str, ...]
    recovery: bool
    xtrace: bool


def find_segments(root, source: bytes, shell_names: frozenset[str] = frozenset(),
                  search_path: str | None = None, cwd: str | None = None) -> Segments:
    """Walk a parsed program (tree-sitter-bash root without errors) and collect its wrap points.

    `shell_names` are aliases and functions the agent's shell defines before
    the command runs: like the text's own functions, they stay in the shell.
    `search_path` is the agent's `PATH`, when known: a name found in none of
    its directories stays in the shell, which reports it in its own words
    (`bash: line 1: code: command not found`); a name with a slash is
    resolved by the shell's working directory at run time and is not checked.
    A file the text sources (`source f`, `. f`) may define functions: `cwd`
    (the agent's working directory, when known) lets its definitions be read;
    a file that cannot be read, or an `eval`, leaves every later command in
    the shell.
    """
    walk = _Walk(source)
    walk.functions = _defined_functions(root) | shell_names
    walk.search_path = search_path
    walk.cwd = cwd
    walk.visit(root, "view")
    points = tuple(sorted(walk.points, key=lambda point: point.offset))
    sees_commands = walk.xtrace or _SEES_COMMAND_TEXT.search(source) is not None
    return Segments(points, tuple(walk.unwrapped), walk.recovery, sees_commands)


def _nodes(root, skip: tuple[str, ...] = ()):
    """Every node under `root`, itself included, without descending into nodes of the `skip` types."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if node.type not in skip:
            stack.extend(node.children)


def _defined_functions(root) -> set[str]:
    """Names the text defines as functions or aliases (anywhere in it: a loop may define one late)."""
    names: set[str] = set()
    for node in _nodes(root):
        if node.type == "function_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                names.add(name.text.decode("utf-8", "replace"))
        elif node.type == "command" and _command_name(node) == "alias":
            for word in node.children[1:]:
                text = word.text.decode("utf-8", "replace").strip("'\"")
                if "=" in text:
                    names.add(text.split("=", 1)[0])
    return names


def _word_value(node) -> str | None:
    """A plain word's text (no quotes, escapes or expansions), else None."""
    if node.type != "word":
        return None
    text = node.text.decode("utf-8", "replace")
    if any(ch in text for ch in "\\$`'\"*?[{") or "~" in text[1:]:
        return None
    return text


def _redirects_output(node) -> bool:
    """Whether a redirect node sends a command's output somewhere other than its fd 1 / fd 2.

    `2>&1`, `>&2` and `1>&2` only join the two streams (`yarp run` keeps their
    order); `/dev/null` discards, so no reader depends on its bytes. Input
    redirections (`<`, here-documents, here-strings) change nothing.
    """
    if node.type == "heredoc_redirect":
        return any(_redirects_output(child) for child in node.children if child.type == "file_redirect")
    if node.type != "file_redirect":
        return False
    operator = next((c.type for c in node.children if not c.is_named), "")
    if operator not in _OUTPUT_OPERATORS:
        return False
    descriptor = next((c for c in node.children if c.type == "file_descriptor"), None)
    target = node.child_by_field_name("destination") or node.children[-1]
    target_text = target.text.decode("utf-8", "replace")
    if operator in (">&", "<>") and target_text in ("1", "2"):
        source_fd = descriptor.text.decode() if descriptor is not None else "1"
        return source_fd not in ("1", "2")
    return target_text != "/dev/null"


class _Walk:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.functions: set[str] = set()
        self.points: list[WrapPoint] = []
        self.unwrapped: list[str] = []
        self.recovery = False
        self.xtrace = False
        self.search_path: str | None = None
        self._found: dict[str, bool] = {}
        #: The agent's working directory while the text has not changed it (None: unknown).
        self.cwd: str | None = None
        #: A `source` or `eval` ran code we could not read: any later name may be a function.
        self.opaque = False
        #: An `exec` redirected the shell's own output: nothing after it writes to the agent directly.
        self.moved = False

    def visit(self, node, mode: str) -> None:
        kind = node.type
        if kind == "command":
            self.command(node, mode)
        elif kind == "pipeline":
            self.pipeline(node, mode)
        elif kind == "redirected_statement":
            self.redirected(node, mode)
        elif kind in _SUBSTITUTIONS:
            self.children(node, "pass")
        elif kind == "function_definition":
            # The definition outlives the call in a shell that lives on (and `declare -f`
            # shows it): its body is left exactly as written.
            body = node.child_by_field_name("body")
            if body is not None:
                self.count_left_alone(body, "function")
        elif kind in _LOOPS:
            self.loop(node)
        elif kind in ("heredoc_body", "comment"):
            return
        else:
            self.children(node, mode)

    def children(self, node, mode: str) -> None:
        children = node.children
        for index, child in enumerate(children):
            if index + 1 < len(children) and children[index + 1].type == "&":
                # `cmd &`: `$!` must be the command's pid (`kill $!` must reach it), and
                # `wait` must wait for it alone: it stays in the shell.
                self.count_left_alone(child, "background")
            else:
                self.visit(child, mode)

    def pipeline(self, node, mode: str) -> None:
        elements = [child for child in node.children if child.is_named]
        for child in elements[:-1]:
            self.visit(child, "pass")
        if elements:
            self.visit(elements[-1], mode)

    def redirected(self, node, mode: str) -> None:
        redirects = [child for child in node.children if child.type in _REDIRECTS]
        # `cat <<EOF | wc -l`: tree-sitter puts the rest of the pipeline inside the here-document's
        # redirection; the command in front of it writes into that pipe.
        piped = any(g.type == "pipeline" for r in redirects if r.type == "heredoc_redirect" for g in r.children)
        inner = "pass" if piped or any(_redirects_output(r) for r in redirects) else mode
        for child in node.children:
            if child.type in _REDIRECTS:
                # A here-string or redirection target may hold `$(…)`.
                for grandchild in child.children:
                    if grandchild.type == "heredoc_body":
                        continue
                    if grandchild.type == "pipeline" and child.type == "heredoc_redirect":
                        self.pipeline(grandchild, mode)
                    else:
                        self.visit(grandchild, "pass")
            else:
                self.visit(child, inner)

    def loop(self, node) -> None:
        if node.type in ("while_statement", "until_statement"):
            # The condition runs before every iteration too: the whole loop stays in the shell.
            self.count_left_alone(node, "loop")
            return
        body = node.child_by_field_name("body")
        for child in node.children:
            if child is not None and body is not None and child.id == body.id:
                self.count_left_alone(child, "loop")
            else:
                self.visit(child, "pass")

    def count_left_alone(self, node, reason: str) -> None:
        """Count every output-producing command under `node` as left in the shell."""
        for current in _nodes(node, skip=("heredoc_body",)):
            if current.type == "command":
                name = _command_name(current)
                if name is None or (name not in SHELL_STATE and name not in self.functions):
                    self.unwrapped.append(reason)

    def command(self, node, mode: str) -> None:
        name_node = node.child_by_field_name("name")
        # Arguments, assignments and redirections may hold `$(…)`: those run first.
        for child in node.children:
            if name_node is None or child.id != name_node.id:
                self.visit(child, "pass")
        if name_node is None:
            return  # assignments only: `X=1`
        words = [child for child in node.children if child.id != name_node.id and child.start_byte > name_node.start_byte]
        name = _command_name(node)
        if name is None:
            self.unwrapped.append("dynamic_name")
            return
        if any(child.type in _REDIRECTS and _redirects_output(child) for child in node.children):
            mode = "pass"  # `>out seq 2`: a redirection in front of the name is the command's too
        if name == "exec" and not any(w.type not in _REDIRECTS for w in words):
            self.moved = True  # `exec >log`: every later command writes where the shell's output went
        if self.moved:
            mode = "pass"
        if name == "set":
            self.note_set(words)
        if name in ("cd", "pushd", "popd"):
            self.cwd = None
        if name in ("source", ".", "eval"):
            defined = self.sourced_names(words) if name != "eval" else None
            if defined is None:
                self.opaque = True
            else:
                self.functions |= defined
            return
        if name in SHELL_STATE or name in self.functions:
            return
        if self.opaque:
            self.unwrapped.append("sourced")
            return
        if name in SHELL_OUTPUT:
            if not (name in _TEXT_ONLY and all(_is_literal(w) for w in words)):
                self.unwrapped.append("builtin")
            return
        if name == "yarp" or name.endswith("/yarp"):
            if mode == "view" and words and _word_value(words[0]) in ("search", "read"):
                self.recovery = True
            return
        if name in LEFT_ALONE:
            self.unwrapped.append(name)
            return
        offset = name_node.start_byte
        if name == "time":
            # The `time` keyword times the pipeline after it: wrap what it runs.
            rest = [w for w in words if _word_value(w) not in ("-p", "--")]
            if not rest:
                return
            offset = rest[0].start_byte
            name = _word_value(rest[0]) or ""
            if not name or "=" in name or name == "!" or name in SHELL_STATE or name in SHELL_OUTPUT or name in LEFT_ALONE \
                    or name in self.functions:
                self.unwrapped.append("time")
                return
        if _assignments_affect_yarp(node, name_node):
            self.unwrapped.append("interpreter_environment")
            return
        if not self.findable(name):
            return  # nothing runs: the shell's own "command not found" is the whole output
        self.points.append(WrapPoint(offset, mode, name))

    def findable(self, name: str) -> bool:
        """Whether `name` could be run: it has a slash, no PATH is known, or PATH has it."""
        if self.search_path is None or "/" in name or name.startswith("~"):
            return True
        found = self._found.get(name)
        if found is None:
            from yarp.launcher import which

            # A relative PATH entry is relative to the shell's working directory at run time: not searched.
            search = ":".join(folder for folder in self.search_path.split(":") if folder == "" or os.path.isabs(folder))
            found = which(name, search) is not None
            self._found[name] = found
        return found

    def sourced_names(self, words) -> set[str] | None:
        """The functions and aliases a sourced file defines, or None when it cannot be known:
        a computed or unresolvable path, an unreadable or unparsable file, or one that sources
        or evaluates more code itself."""
        path = _word_value(words[0]) if words else None
        if path is None:
            return None
        path = os.path.expanduser(path)
        if not os.path.isabs(path):
            if self.cwd is None:
                return None
            path = os.path.join(self.cwd, path)
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_SOURCED_BYTES + 1)
        except OSError:
            return None
        if len(data) > MAX_SOURCED_BYTES:
            return None
        root = parse_program(data)
        if root is None or _runs_more_code(root):
            return None
        return _defined_functions(root)

    def note_set(self, words) -> None:
        """`set -x`, `set -e -v`, `set -o xtrace` in any word of a `set`: the text's own trace."""
        values = [w.text.decode("utf-8", "replace") for w in words]
        for index, value in enumerate(values):
            if value.startswith(("-", "+")) and not value.startswith(("--", "-o", "+o")) \
                    and ("x" in value or "v" in value):
                self.xtrace = True
            if value in ("-o", "+o") and index + 1 < len(values) and values[index + 1] in ("xtrace", "verbose"):
                self.xtrace = True


#: Builtins whose output, with literal arguments, is a function of the command
#: text alone (`echo "done"`): the call's archived input already holds it.
_TEXT_ONLY = frozenset({"echo", "printf"})


def _is_literal(node) -> bool:
    return node.type in ("word", "number", "raw_string", "string", "concatenation") and literal_value(node) is not None


#: A sourced file larger than this is not read (its definitions are unknown).
MAX_SOURCED_BYTES = 1 << 20


def _runs_more_code(root) -> bool:
    """Whether a parsed file sources or evaluates further code."""
    return any(node.type == "command" and _command_name(node) in ("source", ".", "eval") for node in _nodes(root))


def _command_name(node) -> str | None:
    """The literal name of a `command` node, or None when the shell computes it."""
    name_node = node.child_by_field_name("name")
    if name_node is None or name_node.child_count != 1:
        return None
    return _word_value(name_node.children[0])


#: Variables that reach `yarp run` itself, not only the command: a prefix
#: assignment of one of these (`PYTHONPATH=src pytest`, `YARP_CONFIG=x make`,
#: `XDG_RUNTIME_DIR=… make`) would change how YARP runs or where it archives,
#: so such commands stay in the shell.
_INTERPRETER_VARIABLES = ("PYTHON", "LD_", "DYLD_", "YARP_", "XDG_")
_INTERPRETER_NAMES = frozenset({"HOME", "TMPDIR", "TMP", "TEMP"})


def _assignments_affect_yarp(node, name_node) -> bool:
    for child in node.children:
        if child.start_byte >= name_node.start_byte:
            break
        if child.type == "variable_assignment":
            variable = child.child_by_field_name("name")
            name = variable.text.decode("utf-8", "replace") if variable is not None else ""
            if name.startswith(_INTERPRETER_VARIABLES) or name in _INTERPRETER_NAMES:
                return True
    return False


__all__ = ["Segments", "WrapPoint", "find_segments", "SHELL_STATE", "SHELL_OUTPUT", "LEFT_ALONE"]
