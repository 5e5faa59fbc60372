"""`python -m yarp`: the same entry point as the `yarp` console script."""

import sys

from yarp.cli import main

sys.exit(main())
