"""`index export --format parquet DIR`: each typed table as one Parquet file.

Reads through the read-only connection and writes only into DIR (created
0700 when absent). pyarrow is an optional extra (`agent-workflow[export]`);
without it the command fails with `ExportUnavailable`. Raw payloads are not in
the projection, so they cannot reach an export.
"""

from __future__ import annotations

import os
import sqlite3

from .errors import ExportUnavailable, UsageError
from .index_schema import TYPED_TABLES


def export_parquet(conn: sqlite3.Connection, directory: str) -> dict:
    """Write each projection table to `directory` as a private Parquet file; return the rows per table."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        from yarp.errors import pyarrow_missing

        raise ExportUnavailable(pyarrow_missing()) from None
    directory = os.path.abspath(directory)
    if os.path.islink(directory):
        raise UsageError("export directory is a symbolic link")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    tables = {}
    for name in TYPED_TABLES:
        cursor = conn.execute(f"SELECT * FROM {name}")
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        declared = {r[1]: (r[2] or "").upper() for r in conn.execute(f"PRAGMA table_info({name})")}
        arrays = []
        for index, column in enumerate(columns):
            values = [row[index] for row in rows]
            kind = declared.get(column, "")
            if kind == "INTEGER":
                arrow_type = pa.int64()
            elif kind == "REAL":
                arrow_type = pa.float64()
            else:
                arrow_type = pa.string()
            arrays.append(pa.array(values, type=arrow_type))
        table = pa.Table.from_arrays(arrays, names=columns)
        path = os.path.join(directory, f"{name}.parquet")
        pq.write_table(table, path)
        tables[name] = {"rows": len(rows), "file": f"{name}.parquet"}
    return {"schema": "agent-workflow/index-export/v1", "directory": directory, "format": "parquet", "tables": tables}
