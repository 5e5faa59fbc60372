"""The real Cline CLI with the hook files `yarp hook install cline` put in its hooks folder, and the installed yarp.

The very test the checkout runs (tests/test_real_cline.py), in its installed
mode (`YARP_TEST_VENV`): the hook files run the wheel's `yarp hook cline`, and
`yarp import cline` is the wheel's.
"""

from test_real_cline import cline_cli, test_real_cline_calls_are_archived_and_the_model_gets_the_view, world  # noqa: F401
