"""The real Kilo Code with the plugin `yarp hook install kilo-code` put where Kilo loads it, and the installed yarp.

The very test the checkout runs (tests/test_real_kilo_code.py), in its installed
mode (`YARP_TEST_VENV`): the plugin (and the opencode plugin it is built on)
copied from the wheel runs the yarp that installed it, and `yarp import
kilo-code` is the wheel's.
"""

from test_real_kilo_code import kilo_cli, test_real_kilo_code_calls_are_archived_capped_and_imported, world  # noqa: F401
