# cython: language_level=3, annotation_typing=False, binding=False
"""Compiled request validation: `yarp._validate_py`, the same source, compiled by Cython.

The broker runs this for every request. One source keeps the two from ever
drifting apart: what the twin accepts or refuses, and every error text it
gives, is what this module accepts, refuses and says (tests/test_operations.py
runs each case against both).
"""

include "_validate_py.py"

IMPLEMENTATION = "c"
