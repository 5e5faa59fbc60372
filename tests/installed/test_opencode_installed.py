"""The real opencode with the plugin `yarp hook install opencode` put where opencode loads it, and the installed yarp.

The very test the checkout runs (tests/test_real_opencode.py), in its installed
mode (`YARP_TEST_VENV`): the plugin copied from the wheel runs the yarp that
installed it, and `yarp import opencode` is the wheel's.
"""

from test_real_opencode import opencode_cli, test_real_opencode_calls_are_archived_capped_and_imported, world  # noqa: F401
