"""Rules as plain data: the TOML rule format, its strict loader and the argv matcher.

A rule names the program (basename of argv[0]), an optional argv prefix and
required arguments, and an action: `reduce` (with a reducer kind and
per-outcome limits), `transform` (a line-preserving pipeline stage, never a
reducer on its own) or `passthrough` (a guard that keeps output exact).

The shipped rules live in `yarp/rules/*.toml`; user packs listed in the
configuration's `rules.packs` are loaded after them and replace shipped rules
with the same `id`. A file may also add `[[salience]]` entries (class, pattern,
triggers) to the shipped salience data of `salience.py`. `yarp run` loads rules on every call with output, so a
validated rule set is kept in a private cache (`yarp.parse_cache`) keyed
by the bytes of every rule file: a warm load is one `marshal` read, with neither
`tomllib` nor `re` imported. A rule's `keep`/`drop` patterns are validated when
its file is parsed and compiled only when the rule is selected.

This module never runs commands and never reads command output. Its errors are
`UsageError`s that name a pack by position and a rule by number, never by
content.
"""

from __future__ import annotations

import os

from yarp._record import Record
from yarp.errors import UsageError
from yarp.limits import (
    MAX_PACK_FILE_BYTES,
    MAX_PACKS,
    MAX_PATTERN_CHARS,
    MAX_PATTERNS_PER_RULE,
    MAX_PREFIX_ARGS,
    MAX_PROGRAMS_PER_RULE,
    MAX_REQUIRED_ARGS,
    MAX_RULES_PER_FILE,
    MAX_SEARCH_HINT_CHARS,
    MAX_WORD_CHARS,
)

# typing (and re, tomllib) cost milliseconds on `yarp run`'s path; annotations only need them.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Iterable, Sequence

RULE_SCHEMA_VERSION = 1

ACTIONS = ("reduce", "transform", "passthrough")
REDUCER_KINDS = ("search", "diff", "test", "build", "log", "status", "list", "filter")
TRANSFORM_KINDS = ("line_preserving",)

_ID_FIRST = "abcdefghijklmnopqrstuvwxyz0123456789"
_ID_CHARS = str.maketrans("", "", _ID_FIRST + "_./-")
MAX_ID_CHARS = 64

#: Per-outcome limit name -> (lowest, highest) accepted value.
LIMIT_BOUNDS: dict[str, tuple[int, int]] = {
    "head_lines": (0, 10_000),
    "tail_lines": (0, 10_000),
    "context_lines": (0, 100),
    "max_important_lines": (0, 10_000),
    "max_line_bytes": (16, 1024 * 1024),
    "max_output_bytes": (256, 16 * 1024 * 1024),
    "min_savings_bytes": (0, 16 * 1024 * 1024),
}


class Limits(Record):
    """How much of one stream a reducer may show for one outcome (success or failure)."""

    __slots__ = (
        "head_lines", "tail_lines", "context_lines", "max_important_lines", "max_line_bytes",
        "max_output_bytes", "min_savings_bytes",
    )
    head_lines: int
    tail_lines: int
    context_lines: int
    max_important_lines: int
    max_line_bytes: int
    max_output_bytes: int
    min_savings_bytes: int


#: Defaults a rule's `[rule.success]` / `[rule.failure]` tables override key by key.
#: Successes are summarised tightly; failures keep more evidence.
DEFAULT_SUCCESS = Limits(
    head_lines=12, tail_lines=12, context_lines=2, max_important_lines=30,
    max_line_bytes=512, max_output_bytes=4096, min_savings_bytes=512,
)
DEFAULT_FAILURE = Limits(
    head_lines=20, tail_lines=40, context_lines=8, max_important_lines=120,
    max_line_bytes=1024, max_output_bytes=12288, min_savings_bytes=512,
)


class Rule(Record):
    """One validated rule. `keep_patterns`/`drop_patterns` hold its regular
    expressions as written; `keep`/`drop` compile them on first use."""

    __slots__ = (
        "id", "programs", "argv_prefix", "required_args", "action", "reducer", "transform", "keep_patterns",
        "drop_patterns", "search_hint", "success", "failure", "origin",
    )
    id: str
    programs: tuple[str, ...]
    argv_prefix: tuple[str, ...]
    required_args: tuple[str, ...]
    action: str
    reducer: str | None
    transform: str | None
    keep_patterns: tuple[str, ...]
    drop_patterns: tuple[str, ...]
    search_hint: str | None
    success: Limits
    failure: Limits
    origin: str

    @property
    def keep(self) -> re.Pattern[bytes] | None:
        """Lines to keep as evidence: one multi-line bytes regex, or None."""
        return _compiled(self.keep_patterns)

    @property
    def drop(self) -> re.Pattern[bytes] | None:
        """Lines to drop before anything else: one multi-line bytes regex, or None."""
        return _compiled(self.drop_patterns)

    def limits_for(self, exit_code: int) -> Limits:
        """The line limits for a command that exited with `exit_code`: the success ones only for 0."""
        return self.success if exit_code == 0 else self.failure

    def matches(self, args: Sequence[str]) -> bool:
        """Whether `args` (argv without argv[0]) start with the prefix and hold every required argument."""
        prefix = self.argv_prefix
        if len(args) < len(prefix) or tuple(args[: len(prefix)]) != prefix:
            return False
        return all(_has_argument(args, want) for want in self.required_args)


_COMPILED: dict[tuple[str, ...], re.Pattern[bytes]] = {}


def _joined(patterns: tuple[str, ...]) -> bytes:
    """One alternation of every pattern, each in its own group."""
    return b"|".join(b"(?:" + p.encode("utf-8") + b")" for p in patterns)


def _compiled(patterns: tuple[str, ...]) -> re.Pattern[bytes] | None:
    if not patterns:
        return None
    found = _COMPILED.get(patterns)
    if found is None:
        import re

        try:
            found = _COMPILED[patterns] = re.compile(_joined(patterns), re.MULTILINE)
        except re.error:
            # Validated when parsed, so only a damaged cache entry gets here:
            # a usage error, which `yarp run` answers with the exact output.
            raise UsageError("a rule's patterns do not compile; delete the parse cache") from None
    return found


def is_python3(program: str) -> bool:
    """`python3` or `python3.N` (ASCII digits): the names that share the python3 rules."""
    if program == "python3":
        return True
    minor = program[8:] if program.startswith("python3.") else ""
    return minor.isascii() and minor.isdigit()


def _has_argument(args: Sequence[str], want: str) -> bool:
    # `--opt` also matches `--opt=value`; a one-letter short option `-R` also
    # matches inside a cluster such as `-laR`.
    short = len(want) == 2 and want[0] == "-" and want[1] != "-"
    for arg in args:
        if arg == want:
            return True
        if want.startswith("--") and arg.startswith(want + "="):
            return True
        if short and len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and want[1] in arg[1:]:
            return True
    return False


class RuleSet:
    """Rules indexed by program name; `select` applies the precedence rules."""

    __slots__ = ("rules", "_by_program")

    def __init__(self, rules: Iterable[Rule]) -> None:
        by_id: dict[str, Rule] = {}
        for rule in rules:
            by_id[rule.id] = rule  # a later pack replaces an earlier rule with the same id
        self.rules: tuple[Rule, ...] = tuple(by_id.values())
        index: dict[str, list[Rule]] = {}
        for rule in self.rules:
            for program in rule.programs:
                index.setdefault(program, []).append(rule)
        self._by_program = index

    def __len__(self) -> int:
        return len(self.rules)

    def candidates(self, program: str) -> list[Rule]:
        """The rules for `program`; any `python3.N` also gets the `python3` rules."""
        found = self._by_program.get(program)
        if found is None and is_python3(program):
            found = self._by_program.get("python3")
        return found or []

    def matching(self, argv: Sequence[str]) -> list[Rule]:
        """The rules whose program and arguments match `argv`."""
        if not argv or not argv[0]:
            return []
        program = os.path.basename(argv[0])
        args = argv[1:]
        return [rule for rule in self.candidates(program) if rule.matches(args)]

    def select(self, argv: Sequence[str]) -> "Selection":
        """Which rule reduces `argv`: a passthrough wins; one reducer, else one transform, is selected.

        Two reducers, or several transforms, are `ambiguous`; none is `unknown`.
        """
        matched = self.matching(argv)
        if any(rule.action == "passthrough" for rule in matched):
            return Selection("passthrough", None)
        reducing = [rule for rule in matched if rule.action == "reduce"]
        if len(reducing) > 1:
            return Selection("ambiguous", None)
        if reducing:
            return Selection("reduce", reducing[0])
        transforms = [rule for rule in matched if rule.action == "transform"]
        if len(transforms) == 1:
            return Selection("transform", transforms[0])
        return Selection("ambiguous" if transforms else "unknown", None)


class Selection(Record):
    """The outcome of matching one argv: `reduce`, `transform`, `passthrough`, `ambiguous` or `unknown`."""

    __slots__ = ("outcome", "rule")
    outcome: str
    rule: Rule | None


def select_rule(argv: Sequence[str], rules: RuleSet) -> Rule | None:
    """The single reduce rule for `argv`, or None (pass-through guard, ambiguity, unknown).

    A wrapper that only changes how its command runs (`timeout 60 pytest`,
    `env CI=1 npm test`, `nice make`) is looked through: the output is the command's.
    """
    selection = rules.select(command_argv(argv))
    return selection.rule if selection.outcome == "reduce" else None


#: Wrappers whose output is their command's, with the options each takes before
#: it: the number of values an option consumes (options not listed take none).
_WRAPPERS: dict[str, dict[str, int]] = {
    "timeout": {"-s": 1, "--signal": 1, "-k": 1, "--kill-after": 1},
    "nice": {"-n": 1, "--adjustment": 1},
    "nohup": {},
    "stdbuf": {"-i": 1, "-o": 1, "-e": 1},
    "env": {"-u": 1, "--unset": 1, "-C": 1, "--chdir": 1},
    "time": {"-f": 1, "--format": 1, "-o": 1, "--output": 1},
    "ionice": {"-c": 1, "-n": 1, "-p": 1},
}


def command_argv(argv: Sequence[str]) -> Sequence[str]:
    """`argv` without the leading wrappers of `_WRAPPERS` (and their options and operands)."""
    index = 0
    while index < len(argv):
        name = os.path.basename(argv[index])
        wrapper = _WRAPPERS.get(name)
        if wrapper is None:
            break
        index += 1
        while index < len(argv) and argv[index].startswith("-") and argv[index] != "-":
            option = argv[index]
            index += 1 + (wrapper.get(option, 0) if "=" not in option else 0)
            if option == "--":
                break
        if name == "env":
            while index < len(argv) and "=" in argv[index]:
                index += 1
        elif name == "timeout":
            index += 1  # the duration
    return argv[index:] if index < len(argv) else argv


# --- loading ---------------------------------------------------------------------

_RULE_KEYS = {
    "id", "program", "argv_prefix", "required_args", "action", "reducer",
    "transform", "keep", "drop", "search_hint", "success", "failure",
}


def _fail(where: str, problem: str) -> UsageError:
    return UsageError(f"invalid rule file ({where}): {problem}")


def _words(value, where: str, name: str, limit: int, *, allow_empty: bool) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, f"{name} must be a list of strings")
    if len(value) > limit:
        raise _fail(where, f"{name} has more than {limit} entries")
    if not allow_empty and not value:
        raise _fail(where, f"{name} must not be empty")
    for word in value:
        if not word or len(word) > MAX_WORD_CHARS or "\x00" in word:
            raise _fail(where, f"{name} entries must be 1 to {MAX_WORD_CHARS} characters")
    return tuple(value)


def _patterns(value, where: str, name: str) -> tuple[str, ...]:
    """Validate a list of regular expressions; return them as written (compiled on use)."""
    import re

    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(where, f"{name} must be a list of regular expressions")
    if len(value) > MAX_PATTERNS_PER_RULE:
        raise _fail(where, f"{name} has more than {MAX_PATTERNS_PER_RULE} patterns")
    for pattern in value:
        if not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise _fail(where, f"{name} patterns must be 1 to {MAX_PATTERN_CHARS} characters")
        try:
            re.compile(pattern.encode("utf-8"), re.MULTILINE)
        except re.error:
            raise _fail(where, f"{name} holds a pattern that is not a valid regular expression") from None
    patterns = tuple(value)
    try:
        # The patterns are used as one alternation, where a global inline flag
        # such as "(?i)" is no longer at the start and does not compile.
        re.compile(_joined(patterns), re.MULTILINE)
    except re.error:
        raise _fail(where, f"{name} patterns do not combine: write inline flags scoped, as (?i:...)") from None
    return patterns


def _limits(value, base: Limits, where: str, name: str) -> Limits:
    if value is None:
        return base
    if not isinstance(value, dict):
        raise _fail(where, f"{name} must be a table")
    changes: dict[str, int] = {}
    for key, number in value.items():
        bounds = LIMIT_BOUNDS.get(key)
        if bounds is None:
            raise _fail(where, f"{name} has an unknown key")
        if not isinstance(number, int) or isinstance(number, bool) or not bounds[0] <= number <= bounds[1]:
            raise _fail(where, f"{name}.{key} must be an integer from {bounds[0]} to {bounds[1]}")
        changes[key] = number
    return base.replace(**changes)


def _compile_rule(raw, where: str, origin: str) -> Rule:
    if not isinstance(raw, dict):
        raise _fail(where, "a rule must be a table")
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise _fail(where, "unknown key in rule")
    rule_id = raw.get("id")
    if (not isinstance(rule_id, str) or not 0 < len(rule_id) <= MAX_ID_CHARS or rule_id[0] not in _ID_FIRST
            or rule_id.translate(_ID_CHARS)):
        raise _fail(where, "id must be 1 to 64 characters of a-z 0-9 _ . / -, starting with a letter or digit")
    action = raw.get("action")
    if action not in ACTIONS:
        raise _fail(where, "action must be reduce, transform or passthrough")
    programs = _words(raw.get("program"), where, "program", MAX_PROGRAMS_PER_RULE, allow_empty=False)
    if any("/" in p for p in programs):
        raise _fail(where, "program entries are base names without '/'")
    prefix = _words(raw.get("argv_prefix", []), where, "argv_prefix", MAX_PREFIX_ARGS, allow_empty=True)
    required = _words(raw.get("required_args", []), where, "required_args", MAX_REQUIRED_ARGS, allow_empty=True)
    reducer = raw.get("reducer")
    transform = raw.get("transform")
    reduce_only = ("reducer", "keep", "drop", "search_hint", "success", "failure")
    if action == "reduce":
        if reducer not in REDUCER_KINDS:
            raise _fail(where, "reducer must be one of " + ", ".join(REDUCER_KINDS))
        if transform is not None:
            raise _fail(where, "a reduce rule must not name a transform")
    else:
        if any(key in raw for key in reduce_only):
            raise _fail(where, f"a {action} rule takes no reducer, patterns or limits")
        if action == "transform" and transform not in TRANSFORM_KINDS:
            raise _fail(where, "transform must be one of " + ", ".join(TRANSFORM_KINDS))
        if action == "passthrough" and transform is not None:
            raise _fail(where, "a passthrough rule takes no transform")
    keep = _patterns(raw.get("keep"), where, "keep")
    drop = _patterns(raw.get("drop"), where, "drop")
    if reducer == "filter" and not keep and not drop:
        raise _fail(where, "a filter reducer needs keep or drop patterns")
    hint = raw.get("search_hint")
    if hint is not None and (
        not isinstance(hint, str) or not 0 < len(hint) <= MAX_SEARCH_HINT_CHARS
        or "'" in hint or not hint.isprintable()
    ):
        raise _fail(where, f"search_hint must be 1 to {MAX_SEARCH_HINT_CHARS} printable characters without quotes")
    return Rule(
        id=rule_id,
        programs=programs,
        argv_prefix=prefix,
        required_args=required,
        action=action,
        reducer=reducer if action == "reduce" else None,
        transform=transform if action == "transform" else None,
        keep_patterns=keep,
        drop_patterns=drop,
        search_hint=hint,
        success=_limits(raw.get("success"), DEFAULT_SUCCESS, where, "success"),
        failure=_limits(raw.get("failure"), DEFAULT_FAILURE, where, "failure"),
        origin=origin,
    )


#: Classes a pack's `[[salience]]` entry may name (see `salience.py`).
SALIENCE_CLASSES = ("failure", "exit", "traceback", "summary", "header", "location", "warning", "noise")
MAX_SALIENCE_ENTRIES = 256
_SALIENCE_KEYS = {"class", "pattern", "triggers"}


def _salience_entry(raw, where: str) -> tuple[str, str, tuple[str, ...]]:
    """One validated `[[salience]]` table as (class, pattern, triggers)."""
    if not isinstance(raw, dict) or set(raw) - _SALIENCE_KEYS:
        raise _fail(where, "a salience entry is a table of class, pattern and triggers")
    cls = raw.get("class")
    if cls not in SALIENCE_CLASSES:
        raise _fail(where, "salience class must be one of " + ", ".join(SALIENCE_CLASSES))
    (pattern,) = _patterns([raw.get("pattern")] if isinstance(raw.get("pattern"), str) else None, where, "pattern") \
        or (None,)
    if pattern is None:
        raise _fail(where, "a salience entry needs a pattern")
    triggers = _words(raw.get("triggers", []), where, "triggers", MAX_PATTERNS_PER_RULE, allow_empty=cls == "noise")
    if not all(t.isascii() or not any(c.isupper() for c in t) for t in triggers):
        raise _fail(where, "triggers are matched case-insensitively: write them in lower case")
    return cls, pattern, tuple(t.lower() for t in triggers)


def parse_rules(data: bytes, origin: str) -> list[Rule]:
    """Parse and strictly validate one rule file's bytes; raise `UsageError` on any problem."""
    return parse_file(data, origin)[0]


def parse_file(data: bytes, origin: str) -> tuple[list[Rule], list[tuple[str, str, tuple[str, ...]]]]:
    """One rule file's rules and its `[[salience]]` entries, strictly validated."""
    if len(data) > MAX_PACK_FILE_BYTES:
        raise _fail(origin, f"file is larger than {MAX_PACK_FILE_BYTES} bytes")
    import tomllib

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise _fail(origin, "file is not UTF-8") from None
    except tomllib.TOMLDecodeError:
        raise _fail(origin, "file is not valid TOML") from None
    if set(doc) - {"version", "rule", "salience"}:
        raise _fail(origin, "unknown top-level key (expected version, [[rule]] and [[salience]])")
    if doc.get("version") != RULE_SCHEMA_VERSION:
        raise _fail(origin, f"version must be {RULE_SCHEMA_VERSION}")
    raw_rules = doc.get("rule", [])
    if not isinstance(raw_rules, list):
        raise _fail(origin, "rule must be an array of tables ([[rule]])")
    if len(raw_rules) > MAX_RULES_PER_FILE:
        raise _fail(origin, f"more than {MAX_RULES_PER_FILE} rules")
    rules = [_compile_rule(raw, f"{origin}, rule {number}", origin) for number, raw in enumerate(raw_rules, 1)]
    seen: set[str] = set()
    for number, rule in enumerate(rules, 1):
        if rule.id in seen:
            raise _fail(f"{origin}, rule {number}", "id repeats an earlier rule in the same file")
        seen.add(rule.id)
    raw_salience = doc.get("salience", [])
    if not isinstance(raw_salience, list) or len(raw_salience) > MAX_SALIENCE_ENTRIES:
        raise _fail(origin, f"salience must be an array of at most {MAX_SALIENCE_ENTRIES} tables ([[salience]])")
    salience = [_salience_entry(raw, f"{origin}, salience {number}") for number, raw in enumerate(raw_salience, 1)]
    return rules, salience


def _read_bounded(path: str, origin: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_PACK_FILE_BYTES + 1)
    except FileNotFoundError:
        raise _fail(origin, "file does not exist") from None
    except IsADirectoryError:
        raise _fail(origin, "path is a directory") from None
    except OSError as exc:
        raise _fail(origin, f"cannot read file: {exc.strerror}") from None
    return data


def builtin_rule_files() -> list[str]:
    """Paths of the shipped rule files, in a stable order."""
    directory = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules")
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".toml"))
    except FileNotFoundError:
        return []
    return [os.path.join(directory, name) for name in names]


def builtin_sources() -> list[tuple[str, str]]:
    """(path, origin) of each shipped rule file, in load order."""
    return [(path, "shipped " + os.path.basename(path)) for path in builtin_rule_files()]


def builtin_rules() -> list[Rule]:
    """The shipped rules, parsed from their files."""
    rules: list[Rule] = []
    for path, origin in builtin_sources():
        rules.extend(parse_rules(_read_bounded(path, origin), origin))
    return rules


def load_rules(packs: Sequence[str] = (), *, include_builtin: bool = True, environ=os.environ) -> RuleSet:
    """The shipped rules extended and overridden (by id) by each user pack, in order.

    Every file is read (bounded) once. A warm load then comes from the parse
    cache (`yarp.parse_cache`), keyed by those bytes; otherwise they are parsed
    and validated, and the result is cached for the next call.
    """
    from yarp import parse_cache

    if len(packs) > MAX_PACKS:
        raise UsageError(f"rules.packs lists more than {MAX_PACKS} packs")
    sources = builtin_sources() if include_builtin else []
    for position, path in enumerate(packs):
        origin = f"rules.packs[{position}]"
        if not isinstance(path, str) or not path:
            raise _fail(origin, "pack path must be a non-empty string")
        sources.append((os.path.expanduser(path), origin))
    from yarp.view import salience

    files = [(origin, _read_bounded(path, origin)) for path, origin in sources]
    key = parse_cache.cache_key("rules", files)
    stored = parse_cache.load("rules", key, environ)
    if stored is not None:
        # Rule rows alone, or (rows, salience entries) when a file adds salience entries.
        paired = len(stored) == 2 and type(stored[0]) is tuple and (not stored[0] or type(stored[0][0]) is tuple)
        rows, entries = stored if paired else (stored, ())
        try:
            ruleset = RuleSet(_rule_from(row) for row in rows)
            salience.use_pack_entries(tuple((c, p, tuple(t)) for c, p, t in entries))
            return ruleset
        except (TypeError, ValueError):
            pass  # not what we store: parse instead, and overwrite it
    rules: list[Rule] = []
    entries: list[tuple[str, str, tuple[str, ...]]] = []
    for origin, data in files:
        file_rules, file_entries = parse_file(data, origin)
        rules.extend(file_rules)
        entries.extend(file_entries)
    rows = tuple(_row_of(rule) for rule in rules)
    parse_cache.store("rules", key, (rows, tuple(entries)) if entries else rows, environ)
    # The packs' salience entries join the shipped classifier for the views this process writes.
    salience.use_pack_entries(tuple(entries))
    return RuleSet(rules)


def _row_of(rule: Rule) -> tuple:
    """A rule as plain data for the parse cache."""
    values = list(rule._values())
    for index in _LIMIT_FIELDS:
        values[index] = values[index]._values()
    return tuple(values)


def _rule_from(row) -> Rule:
    values = list(row)
    if len(values) != len(Rule._fields):
        raise ValueError("cached rule has the wrong shape")
    for index in _LIMIT_FIELDS:
        values[index] = Limits(*values[index])
    return Rule(*values)


#: Positions of the two `Limits` fields in a rule.
_LIMIT_FIELDS = (Rule._fields.index("success"), Rule._fields.index("failure"))
