"""Build the optional Cython extensions unless YARP_NO_EXTENSIONS asks for a pure build.

The switch is read by `src/yarp/_compat.py`, loaded here by path so that the
build and the runtime honour one definition of the variable.
"""

import importlib.util
import os

from setuptools import Extension, setup

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("_yarp_compat", os.path.join(_here, "src", "yarp", "_compat.py"))
_compat = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_compat)

if _compat.NO_EXTENSIONS:
    print("*** yarp: pure build (YARP_NO_EXTENSIONS is set) ***")
    ext_modules = []
else:
    from Cython.Build import cythonize

    print("*** yarp: accelerated build ***")
    ext_modules = cythonize(
        [Extension(f"yarp.{name}", [f"src/yarp/{name}.pyx"], extra_compile_args=["-O2"])
         for name in ("_fastframe", "_payload_kernel", "_validate", "_scan", "_templates", "_lines", "_shapes")],
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False},
    )

setup(ext_modules=ext_modules)
