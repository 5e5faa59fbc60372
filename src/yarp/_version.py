"""The one place the YARP version lives (read by packaging and `yarp --version`)."""

__version__ = "0.1.0"
