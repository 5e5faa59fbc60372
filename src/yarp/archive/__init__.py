"""The archive itself: schema v1, its one writer's store, and everything that reads it.

- `schema`, `sqlite`: the DDL and migrations, and how YARP connects (the writer, read-only readers);
- `prepare`, `codec`, `payload_kernel`: payloads made ready before the write lock (canonical
  JSON, SHA-256, the compression decision);
- `store`: the only code that writes the archive (run by the broker's writer thread);
- `stats`, `verify`, `export`, `recovery`, `savings`: read-only views of it.

Importing this package imports nothing.
"""
