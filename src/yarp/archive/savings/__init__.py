"""What YARP kept out of the agent's view: bytes produced, shown and withheld (`yarp archive savings`).

Every number comes from snapshot rows and the stored sizes of their payloads;
no output payload is ever decompressed, and the archive is only read. By part:

- `rule`: what a finished call counts as — its class (counted, not executed,
  imported, host view), its bytes produced and withheld, how its view is
  known (`VIEW_REPLACING_AGENTS`) — as the one statement that projects it;
- `programs`: what a shell call ran (`cargo test`), read from its small input
  payload, once per distinct input;
- `projection`: the disposable file beside the archive that keeps each
  finished call's row and each named input's labels between reports;
- `window`: which calls a report covers ([since, until)) and whether its
  statements walk the start-time index or every call;
- `parallel`: half of a first report's missing rows on a second connection;
- `report`: one report — complete the projection, name the inputs, sum per
  grouping (`GROUPINGS`) — as `compute` and `compute_for`;
- `totals`: the sums per group and in total, the top commands, the JSON form;
- `render`: the terminal form, with one bar per group.

Importing this package imports nothing.
"""
