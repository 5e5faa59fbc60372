"""The real Qwen Code with the hooks `yarp hook install qwen-code` put in its settings, and the installed yarp.

The very test the checkout runs (tests/test_real_qwen_code.py), in its installed
mode (`YARP_TEST_VENV`): the hooks run the wheel's `yarp hook qwen-code`, and
`yarp import qwen-code` is the wheel's.
"""

from test_real_qwen_code import qwen_cli, test_real_qwen_code_calls_are_archived_and_the_model_gets_the_view, world  # noqa: F401
