"""Every user command the README shows runs, against the installed wheel, and says what the README says.

The README's user part (from "## Install" to "## Working on YARP") is read
block by block: each line of a ```sh block is a command, run in order by
`sh -c` in one private home; a line that starts with `$ ` is a command whose
output the README shows, and that output must be what the command prints
(the archive reference, the test run's time and the lines naming the
interpreter's and the project's paths aside). A `# or: x, y` comment means
the command is run again with its last word replaced by each alternative.
`pip` lines are what tests/installed/run.py did to make this venv (the wheel
built from the sdist of this tree); they are checked to be the commands it
stands for, not run again.
"""

from __future__ import annotations

import re

from conftest import SOURCE, World

README = SOURCE / "README.md"
REF = re.compile(r"yr_[0-9a-f]{32}")
def _demo_tests() -> str:
    """The test file behind the README's view, one failure among 300 passes: `make demo`'s own."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("yarp_demo", SOURCE / "examples" / "demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    return demo.TESTS


#: Lines of the view that name this machine (interpreter path, project path) or its speed.
VARYING = re.compile(r"^(platform |rootdir: |cachedir: )")


def user_blocks() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    start, end = text.index("\n## Install\n"), text.index("\n## Working on YARP")
    return [block.splitlines() for block in re.findall(r"```sh\n(.*?)```", text[start:end], re.S)]


def commands() -> list[tuple[str, list[str] | None]]:
    """(command line, the output the README shows for it or None), in README order."""
    found: list[tuple[str, list[str] | None]] = []
    for block in user_blocks():
        if block and block[0].startswith("$ "):
            found.append((block[0][2:], block[1:]))
            assert not any(line.startswith("$ ") for line in block[1:]), "one shown command per block"
            continue
        found.extend((line, None) for line in block if line.strip())
    return found


def alternatives(line: str) -> list[str]:
    command, _, comment = line.partition("#")
    command = command.rstrip()
    found = [command]
    match = re.match(r"\s*or: ([a-z-]+(?:, [a-z-]+)*)", comment)
    if match:
        head = command.rsplit(" ", 1)[0]
        found += [f"{head} {word}" for word in match.group(1).split(", ")]
    return found


def normalized(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if VARYING.match(line):
            continue
        line = REF.sub("yr_REF", line)
        out.append(re.sub(r" in \d+\.\d+s ", " in N.NNs ", line))
    return out


def test_every_user_command_in_the_readme_runs_as_shown(world: World):
    project = world.work / "myproject"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_parser.py").write_text(_demo_tests())
    world.work = project
    shown_ref = None
    ref = None
    ran = []
    for line, shown in commands():
        if line.startswith("pip "):
            assert line in ("pip install .", "pip uninstall yarp-archive"), line
            continue
        for command in alternatives(line):
            if shown_ref is not None:
                command = command.replace(shown_ref, ref)
            result = world.shell(command)
            ran.append(command)
            output = result.stdout.decode()
            if command.startswith("yarp run "):
                assert result.returncode == 1, "the failing test's status is kept"
                shown_ref = REF.search("\n".join(shown)).group(0)
                ref = REF.search(output).group(0)
            else:
                assert result.returncode == 0, (command, result.stderr.decode()[-2000:])
            if shown is not None:
                assert normalized(output.splitlines()) == normalized(shown), command
    assert any(c.startswith("yarp hook install pi") for c in ran) and "yarp doctor" in ran
    assert ref is not None and any(c.startswith(f"yarp restore {ref}") for c in ran)
    assert (project / "full-output.txt").read_text().count("PASSED") == 300
    assert not (world.home / ".local" / "share" / "yarp").exists(), "the README's uninstall removes the archive"
    for leftover in (world.home / ".local" / "state" / "yarp", world.home / ".cache" / "yarp"):
        assert not leftover.exists(), f"the README's uninstall leaves {leftover}"
    assert not (world.home / ".pi" / "agent" / "extensions" / "yarp").exists()
