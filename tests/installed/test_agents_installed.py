"""The real Claude Code, Codex and Gemini CLI running the hook commands the installed `yarp` writes.

The very tests the checkout runs (tests/test_hooks_claude_code.py,
tests/test_real_codex.py, tests/test_real_gemini.py), in their installed mode
(`YARP_TEST_VENV`): `yarp hook install` is the wheel's, so each agent's
settings name the venv's `yarp`, and every hook process, `yarp run` and
`yarp import` it starts runs the installed package, with no checkout on any
path.
"""

from test_hooks_claude_code import (  # noqa: F401
    claude_bin,
    test_real_claude_code_archives_wrapped_bash_and_read,
    test_real_claude_code_shows_large_outputs_as_yarp_views,
)
from test_real_codex import codex_bin, test_real_codex_archives_exact_output_and_shows_the_capped_view  # noqa: F401
from test_real_gemini import gemini_bin, test_real_gemini_archives_exact_output_and_shows_the_capped_view  # noqa: F401
from test_hooks import world  # noqa: F401
