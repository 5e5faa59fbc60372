"""What YARP kept out of the agent's context, net of what it took back (`yarp archive savings`).

Every size comes from snapshot rows and the stored sizes of their payloads;
the only outputs read are a cut wrapped view's first line and, where the host
counts lines, a wrapped output's line count, once per call. The archive is
only read. By part:

- `rule`: what a finished call counts as — its class (counted, not executed,
  imported, host view), its bytes produced and withheld, how its view is
  known (`VIEW_REPLACING_AGENTS`) — as the one statement that projects it;
- `hosts`: what each agent's host would have shown of an output (its own
  limits, one table), which bounds the gross withheld;
- `recalls`: what the agent took back — recoveries (`yarp search|read|restore`
  of a reference) and re-runs — linked to the calls they follow, and each cut
  view's rule;
- `programs`: what a shell call ran (`cargo test`), read from its small input
  payload once, when its row is annotated;
- `projection`: the disposable file beside the archive that keeps each
  finished call's row between reports, and the marks that say which calls
  may still lack one;
- `sums`: the rows summed per day and group (and per day and session), which
  a report reads instead of the rows;
- `window`: which calls a report covers ([since, until)) and whether its
  statements walk the start-time index or every call;
- `parallel`: half of a first report's missing rows on a second connection;
- `report`: one report — complete the projection and its sums, read them
  per grouping (`GROUPINGS`) — as `compute` and `compute_for`;
- `totals`: the sums per group, per rule and in total (gross, recovered,
  re-run, net), the top commands, the JSON form;
- `render`: the terminal form, with one bar per group.

Importing this package imports nothing.
"""
