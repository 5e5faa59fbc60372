"""One module per `yarp` command: argument wiring over the library, nothing more.

Each module defines ``SUMMARY``, ``configure(parser)`` and ``run(args) -> int``;
`yarp.cli.COMMANDS` maps command paths to these modules.
"""
