"""Salience: which lines of a command's output an engineer must see, as plain data.

Every view (a reducer's summary, the global cap, an adapter's view) spends
its bytes by the classes this module gives lines:

    failure, exit, traceback   errors, failures, exceptions, panics, assertion lines,
                               compiler diagnostics, exit lines, the start of a trace
    summary, header            test and build summaries, a tally of counts anywhere; diff file
                               headers, commit lines, test section headers
    location                   a ` --> file:line:col` line with the finding above it
                               (linters such as ruff print no severity word)
    finding                    a `file:line: KIND …` line of a kind rare among many such lines
                               (`yarp.view.rarity.rare_findings`): two `F821` among 300 `F401`
    rare                       a line that stands out from those around it, shown alone
                               (`yarp.view.rarity`): a first word, a shape or a field's value
                               rare in repetitive output (`deleted by them:` among 220
                               `modified:` lines, the one deleted file of a `diff --stat`); a
                               line of one of the largest values of a table of sizes or counts
    warning                    warnings
    note                       a line labelled `note:` or `help:` (after its location), or a line
                               of quoted source behind its number (`5<tab>assert x`, `  10 |   f();`):
                               it explains a finding, and a word such as `failed` or `assert` in it
                               does not make it one; classed plain
    plain                      everything else; `noise` marks plain lines not worth
                               showing even as context (PASSED/ok lines, progress bars)

The patterns live in `yarp/rules/salience.json` (compiled once and kept in the
parse cache, so a warm run imports neither `json` nor `re`); packs add entries with `[[salience]]` tables (see `rules.py`). A line is
matched against the patterns only when it holds one of the data's trigger
literals (ASCII case-insensitive), and an entry is tried only when the line
holds one of its own triggers: finding literals is a C-speed scan over a whole
buffer, so the regular expressions run on a few lines, never on every byte.
Among the entries tried the match that starts leftmost wins, ties going to the
earlier entry (the same rule in Python and JavaScript).

The blocks built around salient lines, with the data's block patterns and
limits, are `yarp.view.blocks`.
"""

from __future__ import annotations

import os
from collections import deque
from itertools import repeat

from yarp.view.matching import Literals, Plan, gate_literals, holds, leftmost
from yarp.view.scan import trigger_line_numbers, trigger_lines
from yarp.view.templates import masked_paths, places

#: Classes in the order a view spends its budget on them (see `RANK`).
CLASSES = ("failure", "exit", "traceback", "summary", "header", "location", "finding", "rare", "warning", "noise")
FAILURE_CLASSES = frozenset({"failure", "exit", "traceback"})
RANK = {"failure": 0, "exit": 0, "traceback": 0, "summary": 1, "header": 1, "location": 2, "finding": 2, "rare": 2, "warning": 3,
        "plain": 4, "noise": 5}

DATA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules", "salience.json")


#: The single patterns of the data's `block` table, plus the two the hint builder uses.
BLOCK_PATTERNS = ("continuation", "lead", "caret", "header_continuation")
HINT_PATTERNS = {"word": "[A-Za-z_][A-Za-z0-9_]{2,}", "location": "^[ \\t]*([^ \\t:]+:\\d+(:\\d+)?:?[ \\t]*)?",
                 "finding": "(?m)^[ \\t]*(?:[^ \\t:\\n]{1,256}:\\d+(?::\\d+)?:?|\\d{1,9}:(?=[ \\t]))[ \\t]*([^ \\t\\n]{1,40})(?:[^\\n]*[ \\t]([(\\[][\\w/@.:-]{1,60}[)\\]])[ \\t\\r]*$)?",
                 "first_word": "(?m)^[ \\t]*(?:[^\\sA-Za-z]{1,32}[ \\t]+)*([^ \\t\\n]{0,32})",
                 # A log record at debug level: its level among the first words, bracketed or followed by `:`.
                 "debug_level": "^(?:[^ \\t]+[ \\t]+){0,4}?(?:\\[(?:dbg|debug|DEBUG|Debug)\\]"
                                "|(?:dbg|debug|DEBUG|Debug):|DEBUG[ \\t])"}
#: The classes a word inside a path does not give a line, and the longest line classed again with its paths
#: masked (the entries are tried twice on it; a longer line keeps its class).
PATH_BLIND = FAILURE_CLASSES | {"warning"}
#: Lines holding the same triggers classed at once (`entry_classes`), when there are this many; and the most
#: sets of triggers whose lines are each picked out of all by a compiled pass (`places`), which asks each run
#: of one tuple object once (the scan makes one per set): borg's 2,000 records hold seven sets.
JOINED_LINES = 32
FEW_TRIGGER_SETS = 16
MASKED_BYTES = 4096


class Classifier:
    """The compiled salience data: triggers, one alternation of entries, noise and block patterns."""

    __slots__ = ("triggers", "entries", "noise_start", "noise_any", "noise_lines_start", "noise_lines_any",
                 "continuation", "lead", "caret", "header_continuation", "word", "location", "finding", "first_word",
                 "debug_level", "max_lines", "max_lead", "header_max_lines", "candidates",
                 "failure_triggers", "plans", "digit_readers", "blind", "noise_blind", "past_literals")

    def __init__(self, bundle: tuple) -> None:
        entries, regexes, limits, digit_readers, noise_blind = bundle
        #: Whether no noise pattern tells one digit from another (`_reads_digits`): a line is noise when
        #: it is with each digit read as `0` (`noise_key`).
        self.noise_blind = noise_blind
        #: (class, its triggers, compiled pattern) per entry, in data order.
        self.entries = tuple((cls, tuple(triggers), _compile(args)) for cls, triggers, args in entries)
        #: The entries whose pattern or triggers tell one digit from another (`_reads_digits`), by identity.
        self.digit_readers = frozenset(id(self.entries[number]) for number in digit_readers)
        #: Per set of triggers found on one line, whether its class is that of its digits all read as `0`.
        self.blind: dict[tuple, bool] = {}
        unique = list(dict.fromkeys(t for _, triggers, _ in self.entries for t in triggers))
        # A trigger that holds another adds no line the shorter one misses: one scan less.
        self.triggers = tuple(t for t in unique if not any(o != t and o in t for o in unique))
        #: Per scanned trigger, the entries (data order) that a line found by it may match: those
        #: with a trigger containing it. Only they are tried, with the same result as trying all.
        self.candidates = {t: tuple(entry for entry in self.entries if any(t in u for u in entry[1]))
                           for t in self.triggers}
        #: The scanned triggers that can find a failure, exit or traceback line.
        self.failure_triggers = tuple(t for t in self.triggers
                                      if any(entry[0] in FAILURE_CLASSES for entry in self.candidates[t]))
        for name, args in regexes:
            setattr(self, name, None if args is None else _compile(args))
        self.max_lines, self.max_lead, self.header_max_lines = limits
        #: Per set of triggers found on one line, or of entries tried, how to class the line (`_plan`).
        self.plans: dict[tuple, tuple] = {}
        #: What a line holds one of when `read_past` may change its class: a path's `/`, or a literal every
        #: debug level's match holds (None when they are not known: every line is read); False until asked
        #: (`_read_past_may_change`: finding them parses the pattern, which a hook's cap may never need).
        self.past_literals: tuple[bytes, ...] | None | bool = False

    def triggered(self, line: bytes) -> bool:
        """Whether the line holds any of the scanned triggers, case-insensitively."""
        low = line.lower()
        return any(t in low for t in self.triggers)

    def classify(self, line: bytes, found: tuple[bytes, ...] | None = None) -> str:
        """The class of one line (without its newline): a salience class, `noise` or `plain`.

        Only entries whose triggers the line holds are tried; the leftmost match
        wins, ties going to the earlier entry. `found`, the scanned triggers a
        buffer scan saw on this line (`salient_lines`), narrows the entries
        looked at without changing the result.
        """
        # The entries read a line's end before a CRLF's carriage return (`entry_class`); noise, the line whole.
        text = line[:-1] if line[-1:] == b"\r" else line
        if found is not None:
            best_class = self.entry_class(text, found)
        else:
            best_class = self.read_past(text, self._leftmost(text), self._leftmost)
        if best_class is not None:
            # A line labelled a note or help (`file:3: note: … failed`) explains a finding: plain.
            return "plain" if best_class == "note" else best_class
        return "noise" if self.is_noise(line) else "plain"

    def _leftmost(self, line: bytes) -> str | None:
        """The class of the entry whose match starts leftmost among those whose triggers `line` holds."""
        low = line.lower()
        return leftmost([entry for entry in self.entries if any(t in low for t in entry[1])], line, 0)

    def entry_class(self, line: bytes, found: tuple[bytes, ...]) -> str | None:
        """The class of the entry that matches a line first (`note` included), None when none does:
        `classify` with the scanned triggers `found` on the line, short of asking about noise. A carriage
        return that ends the line ends it, as a newline does: the entries' `$` (pytest's `=== 1 failed in
        0.2s ===` between its `=`) reads a Windows tool's CRLF lines as it reads the others."""
        if line[-1:] == b"\r":
            line = line[:-1]
        plan = self.plans.get(found) or self._plan(found)
        if plan.__class__ is Literals:  # an entry reached only by a longer trigger of its own: test it on the line
            held = plan.held(line)
            plan = self.plans.get((found, held)) or self._plan(found, held)
        cls = plan.entry_class(line)
        return cls if cls not in PATH_BLIND else self.read_past(line, cls, plan.entry_class)

    def entry_classes(self, lines: list[bytes], founds: list[tuple[bytes, ...]]) -> list[str | None]:
        """`[self.entry_class(line, found) for line, found in zip(lines, founds)]`: the lines that hold the same
        triggers, when there are `JOINED_LINES` of them, classed at once by their plan (`Plan.entry_classes`);
        a CR line, or a plan of `Literals`, each line alone."""
        if len(lines) < JOINED_LINES:
            return list(map(self.entry_class, lines, founds))
        by_found: dict[tuple[bytes, ...], list[int]] = dict.fromkeys(founds)  # each set in the order first held
        if len(by_found) <= FEW_TRIGGER_SETS:  # the usual case: a pass at C speed picks out each set's lines
            for found in by_found:
                by_found[found] = places(founds, {found})
        else:
            by_found = {}
            for number, found in enumerate(founds):
                by_found.setdefault(found, []).append(number)
        classes: list[str | None] = [None] * len(lines)
        for found, numbers in by_found.items():
            group = lines if len(numbers) == len(lines) else list(map(lines.__getitem__, numbers))
            plan = self.plans.get(found) or self._plan(found)
            text = b"\n".join(group) if len(group) >= JOINED_LINES and plan.__class__ is not Literals else b""
            # A carriage return ends a line before the entries read it (`entry_class`): such lines one by one.
            if not text or b"\r" in text:
                answers = [self.entry_class(line, found) for line in group]
            else:
                answers = plan.entry_classes(group, text)
                # Lines holding no path and no debug level keep their classes: 2,000 records, one search.
                if not PATH_BLIND.isdisjoint(answers) and self._read_past_may_change(text):
                    answers = [cls if cls not in PATH_BLIND else self.read_past(line, cls, plan.entry_class)
                               for line, cls in zip(group, answers)]
            if len(numbers) == len(lines):
                return answers  # one set of triggers for all
            deque(map(classes.__setitem__, numbers, answers), maxlen=0)  # each in its place, at C speed
        return classes

    def digit_blind(self, found: tuple[bytes, ...]) -> bool:
        """Whether a line whose scanned triggers are `found` gets the class it would get with each digit
        read as `0`: no entry they reach tells one digit from another (`_reads_digits`; four do: an exit
        status from 1, a leak of 1 byte or more, a checker's `E1` codes, a 0 % coverage row). The
        expressions then read every digit alike, and so does what `read_past` asks: lines that differ
        only in their numbers (4,000 `Checked 8 records of 'customer0100.example', 0 errors`) are one
        class, asked once."""
        known = self.blind.get(found)
        if known is None:
            reached = {id(entry) for trigger in found for entry in self.candidates[trigger]}
            known = self.blind[found] = not reached & self.digit_readers
        return known

    def _read_past_may_change(self, text: bytes) -> bool:
        """Whether `read_past` may change the class of a line of `text` (lines joined): where it holds a path's
        `/` or a literal every match of `debug_level` holds, or those literals are not known."""
        if self.past_literals is False:
            debug = set() if self.debug_level is None else gate_literals([self.debug_level.pattern])
            self.past_literals = None if debug is None else (b"/", *sorted(debug))
        return self.past_literals is None or any(literal in text for literal in self.past_literals)

    def read_past(self, line: bytes, cls: str | None, again) -> str | None:
        """`cls`, the class the entries give `line`, unless what gave it is not what the line reports: a
        failure in a log record at debug level (`[15353] dbg: diag: … ('require' failed)`) is a
        detail the program logs, not a failure; and a failure or warning word inside a path or a URL
        (`FILE: /work/one-error-among-warnings/src/Rule.php`) says where, so the line (up to
        `MASKED_BYTES`) is classed by `again` (the entries' rule) with its paths' words masked."""
        if cls not in PATH_BLIND:
            return cls
        level = self.debug_level.match(line) if cls in FAILURE_CLASSES else None
        if level is not None and again(line[:level.end()]) not in FAILURE_CLASSES:
            return None  # the failure is said after the level (`Error: DEBUG build failed` stays one)
        if b"/" in line and len(line) <= MASKED_BYTES:
            masked = masked_paths(line)
            if masked is not line:
                return again(masked)
        return cls

    def _plan(self, found: tuple[bytes, ...], held: int | None = None) -> tuple:
        """How to class a line whose scanned triggers are `found`: the plan of the entries they reach
        (a `yarp.view.matching.Plan`), all of which the line's triggers make tried; or, when some
        reached entry holds none of them (only its own longer trigger, `fatal error` beside `error`,
        decides), the `Literals` of their triggers (one bit per such entry), and with `held`, the bits
        of those whose trigger the line holds, the plan of the entries tried.

        A longer trigger can be on the line only if every scanned trigger inside it is: `fatal error` is
        not where `fatal` is not, so an entry none of whose triggers can be there is not tried. Every
        scan looks for the failure triggers at least (`salient_lines`; a big stream's later chunks
        look for those only), so `found` lacking one of them says the line lacks it."""
        reached = self.candidates[found[0]] if len(found) == 1 else tuple(
            e for e in self.entries if any(e in self.candidates[t] for t in found))
        scanned = self.failure_triggers
        reached = tuple(e for e in reached if any(all(t in found for t in scanned if t in u) for u in e[1]))
        unsure = [e for e in reached if not any(t in found for t in e[1])]
        if held is None and unsure:
            bits: dict[bytes, int] = {}
            for i, entry in enumerate(unsure):
                for trigger in entry[1]:
                    bits[trigger] = bits.get(trigger, 0) | 1 << i
            plan = self.plans[found] = Literals(bits, fold=True)
            return plan
        skipped = {id(e) for i, e in enumerate(unsure) if not (held or 0) & (1 << i)}
        tried = tuple(e for e in reached if id(e) not in skipped)
        plan = self.plans.get(tried)
        if plan is None:
            plan = self.plans[tried] = Plan(tried)
        self.plans[found if held is None else (found, held)] = plan
        return plan

    def noise_key(self, line: bytes) -> bytes:
        """What `is_noise` says of a line follows from: the line with each digit read as `0` where no noise
        pattern reads digits (2,400 test lines of one redrawn progress line, numbered), else the line."""
        return line.translate(_DIGITS_AS_ZERO) if self.noise_blind else line

    def noise_keys(self, lines: list[bytes]) -> list[bytes]:
        """`noise_key` of each of `lines`, at C speed."""
        return list(map(bytes.translate, lines, repeat(_DIGITS_AS_ZERO))) if self.noise_blind else lines

    def is_noise(self, line: bytes) -> bool:
        """Whether a noise pattern matches the line: those anchored at its start are tried
        there only, the others searched for (see `_noise_regexes`)."""
        return self.noise_start.match(line) is not None or self.noise_any.search(line) is not None

    def salient_offsets(self, buf: bytes) -> list[int]:
        """Start offsets of every line of `buf` that holds a trigger, ascending."""
        return sorted(self.salient_lines(buf))

    def salient_lines(self, buf: bytes, triggers: tuple[bytes, ...] | None = None) -> dict[int, tuple[bytes, ...]]:
        """Per start offset of a line of `buf` holding a trigger, the triggers found on it.

        All scanned triggers, or `triggers`; a line's triggers come in their
        order, each once. The scan is `yarp.view.scan.trigger_lines`: one
        C pass over the buffer for every trigger (its twin: one `find` pass
        per trigger over a lowercased copy).
        """
        return trigger_lines(buf, self.triggers if triggers is None else triggers)

    def salient_line_numbers(self, buf: bytes, triggers: tuple[bytes, ...] | None = None
                             ) -> tuple[list[int], list[tuple[bytes, ...]]]:
        """`salient_lines` by line number: (the numbers of the lines of `buf` holding a trigger (all scanned
        triggers, or `triggers`), in line order; beside each, its triggers) (`yarp.view.scan.trigger_line_numbers`)."""
        return trigger_line_numbers(buf, self.triggers if triggers is None else triggers)


def _sre_args(pattern: str) -> tuple:
    """What `re` hands the `_sre` engine for a bytes pattern: plain data the parse cache can keep."""
    from re import _compiler, _parser

    source = pattern.encode("utf-8")
    parsed = _parser.parse(source, 0)
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, number in groupindex.items():
        indexgroup[number] = name
    code = [int(op) for op in _compiler._code(parsed, 0)]  # named opcode ints are not plain data
    return (source, int(parsed.state.flags), code, parsed.state.groups - 1, groupindex,
            tuple(indexgroup))


def _compile(args: tuple):
    """A compiled pattern straight from cached engine data (no `re` import), else through `re`."""
    try:
        import _sre

        return _sre.compile(*args)
    except Exception:  # another engine layout: compile the source again
        import re

        return re.compile(args[0])


def build_bundle(data: dict, extra: tuple = ()) -> tuple:
    """Validate and compile the salience data (and pack entries) into cacheable plain data."""
    entries = [(e["class"], tuple(t.lower().encode("utf-8") for t in e["triggers"]), e["pattern"])
               for e in data["entries"]]
    from re import _constants, _parser

    noise = list(data["noise"])
    for cls, pattern, extra_triggers in extra:
        if cls == "noise":
            noise.append(pattern)
        else:
            entries.append((cls, tuple(t.lower().encode("utf-8") for t in extra_triggers), pattern))
    block = data["block"]
    regexes = _noise_regexes(noise)
    regexes += [(name, _sre_args(block[name])) for name in BLOCK_PATTERNS]
    regexes += [(name, _sre_args(pattern)) for name, pattern in HINT_PATTERNS.items()]
    return (
        tuple((cls, triggers, _sre_args(pattern)) for cls, triggers, pattern in entries),
        tuple(regexes),
        (int(block["max_lines"]), int(block["max_lead"]), int(block["header_max_lines"])),
        tuple(number for number, (_, triggers, pattern) in enumerate(entries)
              if any(c in b"0123456789" for trigger in triggers for c in trigger)
              or _reads_digits(_parser.parse(pattern.encode("utf-8"), 0).data, _constants)),
        not any(_reads_digits(_parser.parse(pattern.encode("utf-8"), 0).data, _constants) for pattern in noise),
    )


def _noise_regexes(noise: list[str]) -> list[tuple[str, tuple | None]]:
    """The noise patterns as expressions for one line and, where that is exact, for many.

    A line is noise when any pattern matches it. As one alternation, `search`
    tries every pattern at every position of every line (about 1.4 µs for a
    five-byte line, 15 µs for a log line); a pattern that begins with `^` or
    `\\A` can only match at position 0, so `noise_start` (used with `match`)
    tries those there once and `noise_any` searches for the others, which
    begin with a literal or a class it skips ahead by: the same answer in a
    third of the time, and the cap asks it of every context line it keeps.

    `noise_lines_start` (searched with a newline before the run) and
    `noise_lines_any` ask it of a run of lines joined by newlines at once: if
    any line of the run is noise, one of them finds a match (it may also find
    one spanning lines; the caller then settles the run line by line). That
    holds when every pattern reads nothing past its line's ends: built from
    characters, classes, groups, repeats and `^`, `$`, `\\b`, `\\B` (which
    see a newline where a line ends, and match there as at a line's ends);
    any other construct (lookarounds, `\\A`, `\\Z`, atomic groups,
    possessive repeats, inline flags) leaves them out (None).

    The patterns are still compiled as one expression first, so a pattern that
    could not stand in the alternation is refused as before; a leading inline
    flag, which would govern the whole alternation, keeps it whole.
    """
    from re import _constants, _parser

    _sre_args("|".join(f"(?:{pattern})" for pattern in noise))
    start: list[str] = []
    anywhere: list[str] = []
    parsed = [_parser.parse(pattern.encode("utf-8"), 0) for pattern in noise]
    for pattern, tree in zip(noise, parsed):
        first = tree.data[0] if len(tree.data) else None
        anchored = first is not None and first[0] is _constants.AT and first[1] in (
            _constants.AT_BEGINNING, _constants.AT_BEGINNING_STRING)
        (start if anchored else anywhere).append(pattern)
    flagged = any(tree.state.flags for tree in parsed)
    if flagged:
        start, anywhere = [], list(noise)  # a leading inline flag governs the whole alternation: keep it whole
    never = "(?!)"  # an empty group matches nothing
    joined_start = "|".join(f"(?:{pattern})" for pattern in start)
    joined_any = "|".join(f"(?:{pattern})" for pattern in anywhere)
    regexes: list[tuple[str, tuple | None]] = [
        ("noise_start", _sre_args(joined_start or never)), ("noise_any", _sre_args(joined_any or never))]
    if not flagged and all(_line_local(tree.data, _constants) for tree in parsed):
        regexes += [("noise_lines_start", _sre_args(f"(?m)\\n(?:{joined_start})" if start else never)),
                    ("noise_lines_any", _sre_args(f"(?m)(?:{joined_any})" if anywhere else never))]
    else:
        regexes += [("noise_lines_start", None), ("noise_lines_any", None)]
    return regexes


def _line_local(items, constants) -> bool:
    """Whether a parsed pattern reads nothing past the ends of the line it matches (see `_noise_regexes`)."""
    c = constants
    for op, arg in items:
        if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.GROUPREF):
            continue
        if op is c.AT and arg in (c.AT_BEGINNING, c.AT_END, c.AT_BOUNDARY, c.AT_NON_BOUNDARY):
            continue
        if op is c.BRANCH and all(_line_local(branch, c) for branch in arg[1]):
            continue
        if op is c.SUBPATTERN and not arg[1] and not arg[2] and _line_local(arg[3], c):
            continue
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) and _line_local(arg[2], c):
            continue
        return False
    return True


#: Each ASCII digit as `0` (`Classifier.noise_key`).
_DIGITS_AS_ZERO = bytes(48 if 48 <= byte <= 57 else byte for byte in range(256))


def _reads_digits(items, constants) -> bool:
    """Whether a parsed pattern tells one ASCII digit from another: a digit of its own (`0`, `[1-9]`, `[^0]`),
    a range holding some digits but not all, or a back reference (`(\\d)\\1`). Without these a digit is
    read only as `\\d`, `\\w`, a class holding every digit or none, so every digit alike."""
    c = constants

    def tells(op, arg) -> bool:
        if op in (c.LITERAL, c.NOT_LITERAL):
            return 48 <= arg <= 57
        if op is c.IN:
            return any(kind in (c.LITERAL, c.NOT_LITERAL) and 48 <= value <= 57 or kind is c.RANGE
                       and value[0] <= 57 and value[1] >= 48 and not (value[0] <= 48 and value[1] >= 57)
                       for kind, value in arg)
        return op in (c.GROUPREF, c.GROUPREF_EXISTS)

    return holds(items, c, tells)


#: Bumped whenever `build_bundle` changes what it stores.
BUNDLE_FORMAT = b"11"
_CLASSIFIER: Classifier | None = None
_PACK_ENTRIES: tuple = ()


def read_data() -> bytes:
    """The bytes of the packaged salience data (`rules/salience.json`)."""
    with open(DATA_PATH, "rb") as handle:
        return handle.read()


def use_pack_entries(entries: tuple[tuple[str, str, tuple[str, ...]], ...]) -> None:
    """Make the packs' `[[salience]]` entries part of this process's classifier.

    `load_rules` calls it with every loaded pack's entries, so the views that
    run after it (reducers, the cap) see the classes the rules were loaded with.
    """
    global _PACK_ENTRIES, _CLASSIFIER
    entries = tuple(entries)
    if entries != _PACK_ENTRIES:
        _PACK_ENTRIES = entries
        _CLASSIFIER = None


def classifier(environ=os.environ) -> Classifier:
    """The shipped classifier extended by the loaded packs' entries, compiled once per process.

    The compiled form is kept in the parse cache keyed by the data's bytes and
    the pack entries, so a warm `yarp run` imports neither `json` nor `re`.
    """
    global _CLASSIFIER
    if _CLASSIFIER is None:
        from yarp import parse_cache

        data = read_data()
        key = parse_cache.cache_key("salience", [("salience.json", data), ("packs", repr(_PACK_ENTRIES).encode()),
                                                 ("hints", repr(HINT_PATTERNS).encode()), ("bundle", BUNDLE_FORMAT)])
        bundle = parse_cache.load("salience", key, environ)
        classifier_ = None
        if bundle is not None:
            try:
                classifier_ = Classifier(bundle)
            except (TypeError, ValueError, AttributeError):
                classifier_ = None
        if classifier_ is None:
            import json

            bundle = build_bundle(json.loads(data), _PACK_ENTRIES)
            classifier_ = Classifier(bundle)
            parse_cache.store("salience", key, bundle, environ)
        _CLASSIFIER = classifier_
    return _CLASSIFIER


def is_blank(line: bytes) -> bool:
    """Whether a line holds nothing but spaces, tabs and carriage returns."""
    return not line.strip(b" \t\r")
