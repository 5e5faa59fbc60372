"""The real Droid with the hooks `yarp hook install droid` put in its settings, and the installed yarp.

The very test the checkout runs (tests/test_real_droid.py), in its installed
mode (`YARP_TEST_VENV`): the hooks run the wheel's `yarp hook droid`, and
`yarp import droid` is the wheel's.
"""

from test_real_droid import droid_cli, test_real_droid_calls_are_archived_and_the_model_gets_the_view, world  # noqa: F401
