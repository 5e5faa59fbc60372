"""The pure, streaming pieces behind `yarp run`: rules, reducers, the global cap, planning.

Submodules:

- `yarp.view.rules`: the TOML rule format, its strict loader and the argv matcher;
- `yarp.view.reducers`: streaming, bounded-memory stream pruning with markers;
- `yarp.view.families`: what each reducer family treats as evidence, and how it is found;
- `yarp.view.selector`: which lines of a stream a reducer keeps, chunk by chunk;
- `yarp.view.cap`: the contract's global cap for block lists and stream files;
- `yarp.view.markers`: the text of every marker a view carries, and which lines are markers;
- `yarp.view.streams`: the texts the cap reads as classified lines, big files in bounded memory;
- `yarp.view.plan`: tree-sitter-bash planning for `yarp plan` / `yarp rewrite`.

This package never runs commands, opens the archive or talks to the broker. The
package itself imports nothing: `yarp run` imports `rules`, `reducers` and `cap`
directly and must never pay for `plan` (which loads the tree-sitter grammar).
"""
