"""Rule files: the shipped set, matching precedence, user packs and strict validation."""

from __future__ import annotations

import pytest

from yarp.errors import EXIT_USAGE, UsageError
from yarp.view import rules as rules_mod
from yarp.view.rules import REDUCER_KINDS, builtin_rules, load_rules, parse_rules, select_rule


@pytest.fixture(scope="module")
def shipped():
    return load_rules()


SELECTIONS = [
    (["pytest", "-x", "tests"], "python/pytest"),
    (["python3", "-m", "pytest", "-q"], "python/pytest-module"),
    (["python3.12", "-m", "pytest"], "python/pytest-module"),
    (["/usr/bin/python", "-m", "unittest", "discover"], "python/unittest"),
    (["jest", "--ci"], "js/jest"),
    (["npx", "jest"], "js/npx-jest"),
    (["npm", "test"], "js/npm-test"),
    (["npm", "run", "test"], "js/npm-run-test"),
    (["cargo", "test", "--offline"], "rust/cargo-test"),
    (["go", "test", "./..."], "go/test"),
    (["pip", "install", "requests"], "python/pip-install"),
    (["python", "-m", "pip", "install", "."], "python/pip-install-module"),
    (["npm", "install"], "js/npm-install"),
    (["npm", "ci"], "js/npm-ci"),
    (["cargo", "build", "--release"], "rust/cargo-build"),
    (["make", "-j4"], "build/make"),
    (["gcc", "-c", "x.c"], "build/c-compilers"),
    (["cc", "x.c"], "build/c-compilers"),
    (["tsc", "-p", "."], "js/tsc"),
    (["/usr/bin/git", "log", "-n", "5"], "git/log"),
    (["git", "diff", "HEAD~1"], "git/diff"),
    (["git", "show", "HEAD"], "git/show"),
    (["git", "status"], "git/status"),
    (["ls", "-laR", "src"], "list/ls-recursive"),
    (["find", ".", "-name", "*.py"], "list/find"),
    (["tree", "src"], "list/tree"),
    (["grep", "-rn", "TODO", "src"], "search/grep"),
    (["rg", "TODO"], "search/rg"),
    (["ruff", "check", "."], "python/ruff-check"),
    (["flake8", "src"], "python/flake8"),
    (["eslint", "src"], "js/eslint"),
    (["mypy", "src"], "python/mypy"),
]

NOT_REDUCED = [
    ["git", "status", "--porcelain"],  # machine-readable guard
    ["git", "status", "-s"],
    ["git", "log", "--format=%H"],  # --opt=value matches a --opt guard
    ["git", "diff", "--name-only"],
    ["rg", "--json", "TODO"],
    ["grep", "-c", "x", "f"],
    ["grep", "-rc", "x", "."],  # a short guard also matches inside a cluster
    ["find", ".", "-print0"],
    ["ls", "-la"],  # not recursive: no rule
    ["frobnicate", "--all"],  # unknown program
    ["head", "-n", "5"],  # transform only: never reduces on its own
    ["git"],
    [],
    [""],
]


@pytest.mark.parametrize("argv, rule_id", SELECTIONS, ids=[" ".join(a) for a, _ in SELECTIONS])
def test_shipped_rule_selected(shipped, argv, rule_id):
    rule = select_rule(argv, shipped)
    assert rule is not None and rule.id == rule_id
    assert rule.action == "reduce" and rule.reducer in REDUCER_KINDS


@pytest.mark.parametrize("argv", NOT_REDUCED, ids=[" ".join(a) or "<empty>" for a in NOT_REDUCED])
def test_guards_unknown_and_transforms_are_not_reduced(shipped, argv):
    assert select_rule(argv, shipped) is None


def test_selection_outcomes_name_why(shipped):
    assert shipped.select(["git", "status", "--porcelain"]).outcome == "passthrough"
    assert shipped.select(["frobnicate"]).outcome == "unknown"
    assert shipped.select(["sort", "-r"]).outcome == "transform"
    assert shipped.select(["git", "log"]).outcome == "reduce"


def test_shipped_set_covers_every_family_and_has_unique_ids():
    rules = builtin_rules()
    ids = [rule.id for rule in rules]
    assert len(ids) == len(set(ids))
    kinds = {rule.reducer for rule in rules if rule.action == "reduce"}
    assert kinds >= {"search", "diff", "test", "build", "log", "status", "list"}
    assert sum(rule.action == "passthrough" for rule in rules) >= 20
    for rule in rules:
        assert rule.success.max_output_bytes <= rule.failure.max_output_bytes


def test_user_pack_overrides_by_id_and_adds(tmp_path):
    pack = tmp_path / "mine.toml"
    pack.write_text(
        'version = 1\n'
        '[[rule]]\nid = "git/log"\nprogram = ["git"]\nargv_prefix = ["log"]\naction = "reduce"\n'
        'reducer = "filter"\nkeep = ["^commit "]\n[rule.success]\nhead_lines = 3\n'
        '[[rule]]\nid = "local/deploy"\nprogram = ["deploy"]\naction = "reduce"\nreducer = "build"\n'
    )
    rules = load_rules([str(pack)])
    log = select_rule(["git", "log"], rules)
    assert log.reducer == "filter" and log.success.head_lines == 3 and log.origin == "rules.packs[0]"
    assert log.success.tail_lines == rules_mod.DEFAULT_SUCCESS.tail_lines  # unspecified keys keep defaults
    assert select_rule(["deploy", "--prod"], rules).id == "local/deploy"
    assert len(rules) == len(load_rules()) + 1


def test_two_matching_reduce_rules_mean_not_reduced(tmp_path):
    pack = tmp_path / "dup.toml"
    pack.write_text('version = 1\n[[rule]]\nid = "mine/git-log"\nprogram = ["git"]\nargv_prefix = ["log"]\n'
                    'action = "reduce"\nreducer = "log"\n')
    rules = load_rules([str(pack)])
    assert rules.select(["git", "log"]).outcome == "ambiguous"
    assert select_rule(["git", "log"], rules) is None


def test_user_passthrough_guard_wins(tmp_path):
    pack = tmp_path / "guard.toml"
    pack.write_text('version = 1\n[[rule]]\nid = "mine/no-pytest"\nprogram = ["pytest"]\n'
                    'required_args = ["--lf"]\naction = "passthrough"\n')
    rules = load_rules([str(pack)])
    assert select_rule(["pytest", "--lf"], rules) is None
    assert select_rule(["pytest"], rules).id == "python/pytest"


BAD_FILES = {
    "not toml": "version = = 1",
    "no version": '[[rule]]\nid = "a"\nprogram = ["x"]\naction = "passthrough"\n',
    "wrong version": 'version = 2\n',
    "unknown top key": 'version = 1\nsecret_word = 1\n',
    "unknown rule key": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "passthrough"\nsecret_word = 1\n',
    "bad action": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "delete"\n',
    "bad reducer": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "magic"\n',
    "bad regex": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "filter"\nkeep = ["secret_word("]\n',
    "global flag": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "filter"\nkeep = ["(?i)secret_word"]\n',
    "filter without patterns": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "filter"\n',
    "limit out of range": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "test"\n[rule.success]\nmax_line_bytes = 1\n',
    "unknown limit": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "test"\n[rule.failure]\nsecret_word = 3\n',
    "bool limit": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "test"\n[rule.failure]\nhead_lines = true\n',
    "passthrough with reducer": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "passthrough"\nreducer = "test"\n',
    "transform without kind": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "transform"\n',
    "empty program": 'version = 1\n[[rule]]\nid = "a"\nprogram = []\naction = "passthrough"\n',
    "program path": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["/bin/secret_word"]\naction = "passthrough"\n',
    "bad id": 'version = 1\n[[rule]]\nid = "Secret_Word!"\nprogram = ["x"]\naction = "passthrough"\n',
    "duplicate id": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "passthrough"\n[[rule]]\nid = "a"\nprogram = ["y"]\naction = "passthrough"\n',
    "too many prefix args": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\nargv_prefix = ["1","2","3","4","5","6","7","8","9"]\naction = "passthrough"\n',
    "quote in hint": 'version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "test"\nsearch_hint = "a\'b"\n',
}


@pytest.mark.parametrize("text", BAD_FILES.values(), ids=list(BAD_FILES))
def test_invalid_rule_files_are_usage_errors(tmp_path, text):
    pack = tmp_path / "bad.toml"
    pack.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_rules([str(pack)])
    assert caught.value.exit_code == EXIT_USAGE
    assert "secret_word" not in str(caught.value).lower()  # errors never echo file content
    assert "rules.packs[0]" in str(caught.value)


def test_scoped_inline_flags_work(tmp_path):
    pack = tmp_path / "flags.toml"
    pack.write_text('version = 1\n[[rule]]\nid = "a"\nprogram = ["x"]\naction = "reduce"\nreducer = "filter"\n'
                    'keep = ["^ok", "(?i:error)"]\n')
    rule = load_rules([str(pack)]).select(["x"]).rule
    assert rule.keep.search(b"an ERROR here") and rule.keep.search(b"ok\n") and not rule.keep.search(b"fine")


def test_pack_bounds(tmp_path):
    many = "version = 1\n" + "".join(
        f'[[rule]]\nid = "r{i}"\nprogram = ["x"]\naction = "passthrough"\n' for i in range(rules_mod.MAX_RULES_PER_FILE + 1)
    )
    with pytest.raises(UsageError, match="more than"):
        parse_rules(many.encode(), "test")
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (rules_mod.MAX_PACK_FILE_BYTES + 10))
    with pytest.raises(UsageError, match="larger than"):
        load_rules([str(big)])
    with pytest.raises(UsageError, match="does not exist"):
        load_rules([str(tmp_path / "missing.toml")])
    with pytest.raises(UsageError, match="more than"):
        load_rules([str(big)] * (rules_mod.MAX_PACKS + 1))


def test_short_and_long_required_argument_forms(shipped):
    assert select_rule(["ls", "-R"], shipped).id == "list/ls-recursive"
    assert select_rule(["ls", "--recursive"], shipped).id == "list/ls-recursive-long"
    assert select_rule(["git", "log", "--pretty=oneline"], shipped) is None
    # A long option never matches as a cluster of short ones.
    assert select_rule(["ls", "--color=auto"], shipped) is None


def test_a_pack_adds_salience_entries_that_the_cap_uses(tmp_path, monkeypatch):
    from yarp.view import salience
    from yarp.view.cap import cap_text

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pack = tmp_path / "pack.toml"
    pack.write_text('version = 1\n[[salience]]\nclass = "failure"\npattern = "^DEPLOY halted "\n'
                    'triggers = ["deploy halted"]\n')
    # Every line starts alike, its second word is seldom anywhere, it has one shape and ends in a number,
    # so the halted one is not rare: only its class can surface it.
    def word(i: int) -> str:
        return "w" + chr(97 + i % 26) + chr(97 + i // 26 % 26)

    data = ("".join(f"DEPLOY {word(i)} at stage {i}\n" for i in range(600)) + "DEPLOY halted at stage 3\n"
            + "".join(f"DEPLOY {word(i + 600)}x at stage {i}\n" for i in range(600))).encode()
    try:
        salience.use_pack_entries(())
        assert b"DEPLOY halted at stage 3" not in cap_text(data, cap=1024, archive_ref="yr_" + "0" * 32)
        for _ in range(2):  # parsed, then from the parse cache
            salience.use_pack_entries(())
            load_rules([str(pack)], environ={"XDG_CACHE_HOME": str(tmp_path / "cache")})
            assert b"DEPLOY halted at stage 3\n" in cap_text(data, cap=1024, archive_ref="yr_" + "0" * 32)
    finally:
        salience.use_pack_entries(())


@pytest.mark.parametrize("body, problem", [
    ('[[salience]]\nclass = "bogus"\npattern = "x"\ntriggers = ["x"]\n', "salience class"),
    ('[[salience]]\nclass = "failure"\npattern = "("\ntriggers = ["x"]\n', "not a valid regular expression"),
    ('[[salience]]\nclass = "failure"\npattern = "x"\n', "triggers must not be empty"),
    ('[[salience]]\nclass = "failure"\npattern = "x"\ntriggers = ["x"]\nextra = 1\n', "a salience entry is a table"),
])
def test_bad_salience_entries_are_usage_errors(tmp_path, body, problem):
    pack = tmp_path / "pack.toml"
    pack.write_text("version = 1\n" + body)
    with pytest.raises(UsageError) as caught:
        load_rules([str(pack)], environ={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert problem in caught.value.message
