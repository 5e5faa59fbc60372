"""How a line is matched against the salience entries its triggers reach: the rule, fast.

`yarp.view.salience.Classifier` tries on a line only the entries whose
triggers it holds; of those, the match that starts leftmost wins, ties going
to the earlier entry. A `Plan` applies that rule to one set of entries: entry
by entry at first, and once the set has classed a few lines, as one
alternation matched at the line's start and, past it, one alternation of only
those entries whose literals the line holds (`needs`: the literals one of which
every match of a pattern contains, read from its parsed form). A set that has
found no match on a few lines is gated (`gate`): a line holding none of the
literals one of which any of its entries' matches holds is matched by none.
Each form gives the same answer as searching the entries one by one.
"""

from __future__ import annotations


#: The shortest literal worth a scan before the one entry's search over many lines (`Plan.entry_classes`):
#: a shorter one (`0`, `%`) is on most lines, and the scan would leave the search as many to read.
SCANNED_LITERAL_BYTES = 3
#: The lines sampled to tell whether most lines hold the gate's literals (`Plan._mostly_held`).
SAMPLED_LINES = 16
#: Lines a set of entries classes one entry at a time before its alternation is compiled (with
#: `re`, about a millisecond): the sets an output reaches only a few times never pay for one.
COMBINE_AFTER = 16
#: What `Plan.literals` holds until the gate's literals are first asked.
_UNASKED = object()


def leftmost(entries, line: bytes, pos: int) -> str | None:
    """The class of the entry whose match in `line` from `pos` starts leftmost, ties to the earlier."""
    cls, best_start = None, -1
    for entry_class, _, pattern in entries:
        match = pattern.search(line, pos)
        if match is not None and (cls is None or match.start() < best_start):
            cls, best_start = entry_class, match.start()
    return cls


class Plan:
    """How a line reaching the entries `tried` (data order) is classed.

    Once it has classed `COMBINE_AFTER` lines, with three entries or more, `at_start` is one
    alternation of them all, matched at the line's start, and the entries that can match past it
    (not all `^`-anchored) are searched from position 1 (`past`, a `_Past`); each entry is a
    capturing group, so a match's `lastindex` names its entry. An alternation tries its branches
    in order at each position, so this is the entries' rule (leftmost match, ties to the earlier
    entry). Entries that do not fit an alternation (global flags, named groups, back references)
    keep the entry-by-entry search."""

    __slots__ = ("tried", "at_start", "start_classes", "past", "pending", "misses", "gate", "only", "joined",
                 "scanned", "needed", "literals")

    def __init__(self, tried: tuple) -> None:
        self.tried = tried
        #: A set of one entry: its class and its pattern's search, asked without the rule's loop (a digit's
        #: trigger, ` 0%`, reaches one entry on 3,000 lines of a zip's listing, each classed alone).
        self.only = (tried[0][0], tried[0][2].search) if len(tried) == 1 else None
        self.at_start = self.start_classes = self.past = None
        self.pending = COMBINE_AFTER if len(tried) >= 3 else 0
        #: Lines left to find matching no entry before the gate is compiled; then the gate (`gate`), a
        #: search for the literals one of which any entry's match holds, or None when they are not known.
        self.misses, self.gate = COMBINE_AFTER, None
        #: For classing many lines at once (`entry_classes`), each made when first asked (`joined` False till
        #: then): the one entry's search over lines joined (`joined_search`), None where it reads them
        #: otherwise than one by one; the gate's literals in lower case, for a scan, None when not known.
        self.joined: object = False
        self.scanned: tuple[bytes, ...] | None = None
        #: The sets of literals one of each of which every match of the joined search holds (`_needed`).
        self.needed: list[set[bytes]] = []
        #: The gate's literals (`gate_literals` of the entries' patterns), parsed once when first asked.
        self.literals: set[bytes] | None | object = _UNASKED

    def entry_classes(self, lines: list[bytes], text: bytes | None = None) -> list[str | None]:
        """`[self.entry_class(line) for line in lines]`, the lines read at once: joined with newlines, those
        holding none of the gate's literals are left out by one scan at C speed (any case: a superset of
        the lines holding them; none left out when a literal is short, `SCANNED_LITERAL_BYTES`, and one
        search follows, or when most lines hold one, `_mostly_held`), and the others are searched by the
        one entry's pattern over them joined (`joined_search`), or else classed one by one (`entry_class`,
        its gate first). 2,000 `not found` index records cost one scan, not 2,000 searches; a zip's 3,000
        `(stored 0%)` lines, one search, not 3,000 calls. `text` is the lines joined, when the caller has
        joined them."""
        text = b"\n".join(lines) if text is None else text
        if self.joined is False:
            self.joined = joined_search(self.tried[0][2]) if self.only is not None else None
            if self.joined is not None:
                from re import _constants as c, _parser

                self.needed = _needed(_parser.parse(self.joined.pattern, 0).data, c)
            literals = self._gate_literals()
            if literals and not any(b"\n" in literal for literal in literals) and (
                    self.joined is None or min(map(len, literals)) >= SCANNED_LITERAL_BYTES):
                self.scanned = tuple(sorted({literal.lower() for literal in literals}))
        if self.scanned is None or self._mostly_held(lines):
            numbers: list[int] | range = range(len(lines))
        else:
            from yarp.view.scan import trigger_line_numbers

            numbers = trigger_line_numbers(text, self.scanned)[0]
        classes: list[str | None] = [None] * len(lines)
        if self.joined is not None:
            held = lines
            if len(numbers) < len(lines):
                held = list(map(lines.__getitem__, numbers))
                text = b"\n".join(held)
            # A literal every match needs and the text lacks (`%` in a log of `:0.` times) answers for all.
            if all(any(literal in text for literal in literals) for literals in self.needed):
                for number in lines_holding(self.joined, held, text):
                    classes[numbers[number]] = self.only[0]
        else:
            for number in numbers:
                classes[number] = self.entry_class(lines[number])  # the gate, once made, asked first
        return classes

    def _mostly_held(self, lines: list[bytes]) -> bool:
        """Whether most of a sample of `lines` hold one of the gate's literals: then a scan for them would
        leave out few lines and cost more than it saves (400 audit records, each `exit=`, scanned for
        `exit`: 15 M instructions)."""
        sample = lines[::max(1, len(lines) // SAMPLED_LINES)][:SAMPLED_LINES]
        held = sum(1 for line in sample if any(literal in line.lower() for literal in self.scanned))
        return 2 * held > len(sample)

    def entry_class(self, line: bytes) -> str | None:
        """The class of the entry that matches `line` first, None when none does."""
        if self.gate is not None and self.gate.search(line) is None:
            return None  # no entry can match: 2,000 lines `not found` reaches, of no `Command not found`
        cls = self._entry_class(line)
        if cls is None and self.misses:
            self.misses -= 1
            if not self.misses:
                self.gate = gate(self._gate_literals())
        return cls

    def _gate_literals(self) -> set[bytes] | None:
        """The literals one of which any entry's match holds (`gate_literals`), or None when not known: asked
        by the gate and by the scan of lines classed at once, each of which once parsed every pattern."""
        if self.literals is _UNASKED:
            self.literals = gate_literals([entry[2].pattern for entry in self.tried])
        return self.literals

    def _entry_class(self, line: bytes) -> str | None:
        if self.only is not None:
            return self.only[0] if self.only[1](line) is not None else None
        if self.at_start is None:
            if not self.pending:
                return leftmost(self.tried, line, 0)
            self.pending -= 1
            if self.pending:
                return leftmost(self.tried, line, 0)
            self._combine()
            if self.at_start is None:
                return leftmost(self.tried, line, 0)
        match = self.at_start.match(line)
        if match is not None:
            return self.start_classes[match.lastindex]
        return None if self.past is None else self.past.search(line)

    def _combine(self) -> None:
        tried = self.tried
        combined = _alternations([entry[2].pattern for entry in tried])
        if combined is not None:
            at_start, start_groups, later, required = combined
            self.start_classes = {group: tried[branch][0] for group, branch in start_groups.items()}
            self.past = _Past([tried[branch] for branch in later], required) if later else None
            self.at_start = at_start


class Literals:
    """Which of some literals a line holds, as the bits they stand for (`held`).

    A literal stands for the bits given with it and those of every literal inside it. Once asked
    about `COMBINE_AFTER` lines (before, `in` tests), one search for all of them, longest first at
    a place and searched again from the byte after each place one starts, finds every literal a
    line holds: one starting at the same place is inside the one found. With `fold`, the line is
    lowercased first (the literals are lower case): ASCII letters match either case."""

    __slots__ = ("bits", "closure", "fold", "pending", "finder")

    def __init__(self, bits: dict[bytes, int], fold: bool = False) -> None:
        self.bits, self.fold, self.pending, self.finder = tuple(bits.items()), fold, COMBINE_AFTER, None
        self.closure = {found: 0 for found in bits}
        for found in bits:
            for literal, literal_bits in bits.items():
                if literal in found:
                    self.closure[found] |= literal_bits

    def held(self, line: bytes) -> int:
        """The bits of the literals `line` holds."""
        held = 0
        text = line.lower() if self.fold else line
        if self.finder is None:
            if self.pending or not self.bits:
                self.pending = max(0, self.pending - 1)
                for literal, bits in self.bits:
                    if literal in text:
                        held |= bits
                return held
            import re

            self.finder = re.compile(b"|".join(re.escape(literal) for literal in sorted(self.closure, key=len,
                                                                                              reverse=True)))
        closure, search = self.closure, self.finder.search
        found = search(text)
        while found is not None:
            held |= closure[found.group()]
            found = search(text, found.start() + 1)
        return held


class _Past:
    """The search past a line's start for entries of a plan (`Plan`): among those
    whose literals (`needs`) the line holds, the one whose match starts leftmost, ties to the
    earlier entry. An entry whose literal the line lacks cannot match it, so leaving it out leaves
    the answer as it was. The literals are found by one search for all of them (`Literals`)."""

    __slots__ = ("entries", "always", "literals", "searches")

    def __init__(self, entries: list, required: list) -> None:
        self.entries = entries
        bits: dict[bytes, int] = {}
        self.always = 0
        for number, literals in enumerate(required):
            if literals is None:
                self.always |= 1 << number
            for literal in literals or ():
                bits[literal] = bits.get(literal, 0) | 1 << number
        self.literals = Literals(bits)
        #: Per set of entries held (bits): [lines left to class before their alternation is compiled,
        #: the alternation (or the one entry's pattern) once it is, the entries].
        self.searches: dict[int, list] = {}

    def search(self, line: bytes) -> str | None:
        """The class of the entry that matches `line` first past its first byte, None when none does."""
        held = self.always | self.literals.held(line)
        found = self.searches.get(held)
        if found is None:
            found = self.searches[held] = [COMBINE_AFTER, None,
                                           [entry for number, entry in enumerate(self.entries) if held >> number & 1]]
        pending, pattern, chosen = found
        if pattern is None:
            if len(chosen) > 1 and pending:
                found[0] -= 1
                return leftmost(chosen, line, 1)
            if not chosen:
                return None
            pattern = found[1] = self._alternation(chosen)
        match = pattern.search(line, 1)
        if match is None:
            return None
        if len(chosen) == 1:
            return chosen[0][0]
        start = match.start()  # the alternation took the first entry that matches here
        return next(cls for cls, _, entry in chosen if entry.match(line, start) is not None)

    @staticmethod
    def _alternation(chosen: list):
        if len(chosen) == 1:
            return chosen[0][2]
        import re

        return re.compile(b"|".join(b"(?:" + entry[2].pattern + b")" for entry in chosen))


def needs(items, c) -> set[bytes] | None:
    """Literals one of which every match of a parsed pattern holds (the most telling such set: its
    shortest literal longest), or None when none is known: runs of literal characters, a group's,
    every branch's of an alternation (with the run of literals just before it, each branch's leading
    ones), a repeat's taken at least once. Case-insensitive parts give none."""
    best: set[bytes] | None = None
    for candidate in _needed(items, c):
        if best is None or (min(map(len, candidate)), -len(candidate)) > (min(map(len, best)), -len(best)):
            best = candidate
    return best


def _needed(items, c) -> list[set[bytes]]:
    """Every set of literals `needs` weighs: a match holds one of each."""
    found: list[set[bytes]] = []

    def consider(candidate: set[bytes] | None) -> None:
        if candidate and all(candidate):
            found.append(candidate)

    run = bytearray()
    for op, arg in items:
        if op is c.LITERAL:
            run.append(arg)
            continue
        if op is c.BRANCH and run:
            # A run the parser took out of the branches before it (`E(?:rror|xception)` for
            # `Error|Exception`): with each branch's own leading literals, it is what a match holds.
            consider({bytes(run) + _leading(branch, c) for branch in arg[1]})
        consider({bytes(run)} if run else None)
        run = bytearray()
        if op is c.SUBPATTERN and not arg[1] and not arg[2]:
            consider(needs(arg[3], c))
        elif op is c.BRANCH:
            branches = [needs(branch, c) for branch in arg[1]]
            if all(branches):
                consider(set().union(*branches))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and arg[0] >= 1:
            consider(needs(arg[2], c))
    consider({bytes(run)} if run else None)
    return found


def gate(held: set[bytes] | None):
    """A search for any of the literals `held` (`gate_literals`: one of them is in every match of a set of
    patterns), the longest first, or None when they are not known. A trigger says a line may be salient,
    and an entry's expression (`^[A-Za-z][\\w.+-]{0,40}: (.*[ :])?(…|[Cc]ommand not found|…)`, tried from
    each `[ :]` of the line) takes about three microseconds to say it is not; the search, under one."""
    import re

    if held is None:
        return None
    return re.compile(b"|".join(re.escape(literal) for literal in sorted(held, key=lambda text: (-len(text), text))))


def gate_literals(patterns: list[bytes]) -> set[bytes] | None:
    """The literals one of which every match of any of `patterns` holds (`needs`), or None when a
    pattern's are not known (or it has global flags: a case-insensitive literal is no literal). A line
    holding none of them matches none of the patterns."""
    from re import _constants as c, _parser

    held: set[bytes] = set()
    for source in patterns:
        tree = _parser.parse(source, 0)
        literals = None if tree.state.flags else needs(tree.data, c)
        if literals is None:
            return None
        held |= literals
    return held


def _leading(items, c) -> bytes:
    """The literal characters a parsed pattern starts with."""
    lead = bytearray()
    for op, arg in items:
        if op is not c.LITERAL:
            break
        lead.append(arg)
    return bytes(lead)


def _past_the_start(items, c):
    """A parsed pattern less the branches of its top-level alternation that begin with `^`: what can
    match past a line's start, where only `_Past` searches."""
    if len(items) == 1 and items[0][0] is c.BRANCH:
        branches = [branch for branch in items[0][1][1]
                    if not (len(branch) and branch[0][0] is c.AT and branch[0][1] in (c.AT_BEGINNING,
                                                                                    c.AT_BEGINNING_STRING))]
        return [(c.BRANCH, (None, branches))]
    return items


def lines_holding(search, lines: list[bytes], text: bytes | None = None) -> list[int]:
    """The numbers of the lines where a match of `search` starts in `text`, `lines` joined with newlines,
    ascending and each once."""
    text = b"\n".join(lines) if text is None else text
    numbers: list[int] = []
    number = at = 0
    for match in search.finditer(text):
        number += text.count(b"\n", at, match.start())  # the newlines before it: its line
        at = match.start()
        if not numbers or numbers[-1] != number:
            numbers.append(number)
    return numbers


#: Sets of characters that match no newline, alone or in brackets (`joined_search`).
_NO_NEWLINE_CATEGORIES = ("CATEGORY_DIGIT", "CATEGORY_NOT_SPACE", "CATEGORY_WORD", "CATEGORY_NOT_LINEBREAK")


def joined_search(pattern):
    """`pattern` compiled to search lines joined with newlines as it searches each line alone, or None when
    that is not known to hold: a match starts in a line of the joined text if and only if the pattern
    matches that line. It holds when nothing in the pattern can match a newline (no newline, no `\\s`,
    no negated set that lets one through, no flag), its `^` and `$` are read at each line's ends
    (`re.MULTILINE`), and nothing reads the text's own ends (`\\A`, `\\Z`) or a `\\B` (which an empty line
    alone never matches). A lookaround that reads past a line's end then meets a newline, which it
    cannot match, as it would meet the line's end. A pattern that starts with a set of characters is
    searched from the literal after it (`_from_its_literal`)."""
    import re
    from re import _constants as c, _parser

    tree = _parser.parse(pattern.pattern, 0) if isinstance(pattern.pattern, bytes) and not pattern.flags else None
    if tree is None or tree.state.flags or holds(tree.data, c, lambda op, arg: _may_read_lines(op, arg, c)):
        return None
    return re.compile(_from_its_literal(pattern.pattern, tree.data, c), re.MULTILINE)


#: What follows a character in a pattern's source and makes it other than one literal.
_QUANTIFIERS = (b"*", b"+", b"?", b"{")


def _from_its_literal(source: bytes, items, c) -> bytes:
    """`source`, when it starts with a set of characters then a plain literal (`[ \\t|:]0(\\.0+)?%…`), as the
    literal with the set behind it (`0(?<=[ \\t|:]0)(\\.0+)?%…`): the same matches, each starting a byte
    later on the same line (the set matches no newline), found by a search for the literal, where a
    set of common characters (a space) has the search try the whole pattern at each (4 times the
    instructions over a zip's listing). Any other source is left as it is."""
    import re

    if len(items) < 2 or items[0][0] is not c.IN or items[1][0] is not c.LITERAL or source[:1] != b"[":
        return source
    end = _set_end(source)
    literal = source[end:end + 1] if end is not None else b""
    if not literal or re.escape(literal) != literal or source[end + 1:end + 2] in _QUANTIFIERS:
        return source
    return literal + b"(?<=" + source[:end] + literal + b")" + source[end + 1:]


def _set_end(source: bytes) -> int | None:
    """Where the set of characters `source` starts with ends (past its `]`), or None when it holds a nested
    bracket (a class like `[:alpha:]`)."""
    at = 1 + (source[1:2] == b"^")
    at += source[at:at + 1] == b"]"  # a `]` first is one of the set's characters
    while at < len(source):
        byte = source[at:at + 1]
        if byte == b"\\":
            at += 2
        elif byte == b"]":
            return at + 1
        elif byte == b"[":
            return None
        else:
            at += 1
    return None


def _may_read_lines(op, arg, c) -> bool:
    """Whether a parsed item may read a pattern's match across lines (`joined_search`)."""
    if op is c.LITERAL:
        return arg == 10
    if op is c.NOT_LITERAL:
        return arg != 10
    if op is c.IN:
        items = [item for item in arg if item[0] is not c.NEGATE]
        newline = [_in_set_newline(item_op, item_arg, c) for item_op, item_arg in items]
        if len(items) < len(arg):  # negated: lets a newline through unless it names one
            return not any(answer is True for answer in newline)
        return any(answer is not False for answer in newline)
    if op is c.AT:
        return arg not in (c.AT_BEGINNING, c.AT_END, c.AT_BOUNDARY)
    if op is c.SUBPATTERN:
        return bool(arg[1] or arg[2])  # a group's own flags (`(?s:…)`)
    return op not in (c.ANY, c.BRANCH, c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT, c.ASSERT, c.ASSERT_NOT,
                      c.ATOMIC_GROUP)


def _in_set_newline(op, arg, c) -> bool | None:
    """Whether an item of a set of characters matches a newline: True, False, or None when not known."""
    if op is c.LITERAL:
        return arg == 10
    if op is c.RANGE:
        return arg[0] <= 10 <= arg[1]
    if op is c.CATEGORY:
        return False if str(arg) in _NO_NEWLINE_CATEGORIES else None
    return None


def holds(items, c, test) -> bool:
    """Whether a parsed pattern holds an item `test(op, arg)` says yes of, at its top or inside any group,
    branch, repeat or lookaround."""
    for op, arg in items:
        if test(op, arg):
            return True
        if op is c.BRANCH:
            inner = arg[1]
        elif op is c.SUBPATTERN:
            inner = (arg[3],)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            inner = (arg[2],)
        elif op in (c.ASSERT, c.ASSERT_NOT):
            inner = (arg[1],)
        elif op is c.ATOMIC_GROUP:
            inner = (arg,)
        else:
            continue
        if any(holds(part, c, test) for part in inner):
            return True
    return False


def _refers_back(items, c) -> bool:
    """Whether a parsed pattern holds a back reference (its numbers would move in an alternation)."""
    return holds(items, c, lambda op, _: op in (c.GROUPREF, c.GROUPREF_EXISTS))


def _alternations(patterns: list[bytes]):
    """(an alternation of `patterns` matched at a line's start, {its groups: branch}, the branches
    that can match past the start, the literals one of which each of those holds in any match or
    None (`needs`)), or None when a pattern cannot stand in an alternation (global flags, named
    groups, back references).

    Compiled with `re` when first needed: a classifier reaches a few sets of entries per output."""
    import re
    from re import _constants as c, _parser

    start_groups: dict[int, int] = {}
    later: list[int] = []
    required: list[set[bytes] | None] = []
    number = 1
    for branch, source in enumerate(patterns):
        tree = _parser.parse(source, 0)
        if tree.state.flags or tree.state.groupdict or _refers_back(tree.data, c):
            return None
        start_groups[number] = branch
        number += tree.state.groups  # its own groups and the one around it
        first = tree.data[0] if len(tree.data) else None
        if not (first is not None and first[0] is c.AT and first[1] in (c.AT_BEGINNING, c.AT_BEGINNING_STRING)):
            later.append(branch)
            required.append(needs(_past_the_start(tree.data, c), c))
    try:
        at_start = re.compile(b"|".join(b"(" + source + b")" for source in patterns))
    except re.error:
        return None
    return at_start, start_groups, later, required
