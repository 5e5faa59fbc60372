"""The archive's calls as people browse them: `yarp calls` (the list) and `yarp show REF` (one call).

By concept:

- `selection`: which calls a listing shows (`CallFilter`), resolved into SQL
  conditions and the index that walks them (`select`); which calls are not
  the user's (`yarp doctor`'s probe, `PROBE_AGENT`);
- `listing`: one row per call, newest first, with its gist, status, duration,
  output size and whether the view cut it (`iter_calls`, `calls_by_id`);
- `record`: one call's whole record: input, output sources, view, snapshots (`call_record`);
- `render`: the list's lines and JSON Lines, and the record's text and JSON.

Importing this package imports nothing: `yarp calls` loads what the list
needs and no more (the record and its payload reader stay out).
"""
