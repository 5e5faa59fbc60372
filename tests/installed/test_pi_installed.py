"""The real Pi agent with the extension `yarp hook install pi` put where Pi loads it, and the installed yarp.

The very test the checkout runs (tests/test_pi_agent.py), in its installed
mode (`YARP_TEST_VENV`): no `-e`, no checkout path, Pi discovers the extension
in its own extensions folder and the extension runs the yarp that installed it.
"""

from test_pi_agent import pi_cli, test_real_pi_calls_are_archived_pruned_and_capped, world  # noqa: F401
