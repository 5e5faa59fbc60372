"""What the agent is shown of a tool call's output: rules, reducers, markers, the global cap, planning.

Submodules, in the order a run's output passes through them:

- `yarp.view.rules`: the TOML rule format, its strict loader and the argv matcher;
- `yarp.view.families`: what each reducer family treats as evidence, and how it is found;
- `yarp.view.selector`: which lines of a stream a reducer keeps, chunk by chunk;
- `yarp.view.reducers`: streaming, bounded-memory stream pruning; returns its markers as records;
- `yarp.view.markers`: the text of every marker a view carries, and which lines are markers;
- `yarp.view.salience`: the line classes every view spends its budget by;
- `yarp.view.streams`: the texts the cap reads as classified lines, big files in bounded memory;
- `yarp.view.cap`: the contract's global cap for block lists and stream files;
- `yarp.view.visible`: the runner's view, made in the broker: the reducers, then the cap over both streams;
- `yarp.view.plan`: tree-sitter-bash planning for `yarp plan` / `yarp rewrite`.

This package never runs commands, opens the archive or talks to the broker. The
package itself imports nothing: the broker imports `rules`, `visible` and
`cap` directly and must never pay for `plan` (which loads the tree-sitter grammar).
"""
