"""Human-readable output: the freshness summary line and plain-text tables.

Cells are cut to a fixed width and control characters replaced, so a hostile
value in the projection cannot garble a terminal. Formatting only.
"""

from __future__ import annotations

from .freshness import summary_line

CELL_WIDTH = 40

HUMAN_COLUMNS = {
    "runs": ("session_id", "index_state", "durable_status", "executor", "model", "attempt_classification",
             "open_incident_count", "pending_permission_count", "storage_class"),
    "incidents": ("session_id", "incident_id", "category", "severity", "state", "event_count", "last_recorded_at"),
    "permissions": ("session_id", "operation", "resource_class", "source", "state", "event_count", "last_recorded_at"),
    "performance": ("executor", "model", "stage", "sample_count", "avg_elapsed_seconds",
                    "provider_billed_sample_count", "provider_billed_average", "provider_billed_currency",
                    "local_estimate_sample_count", "local_estimate_average", "local_estimate_currency"),
    "workflows": ("workflow_id", "owner_run_id", "pack_id", "workflow_state", "node_count", "event_count"),
    "workflow-nodes": ("workflow_id", "node_id", "state", "run_id", "attempt", "executor", "model", "depends_on"),
    "repairs": ("repair_id", "source_session_id", "source_artifact_path", "adapter_id", "validation_result",
                "source_mutation_verified"),
    "errors": ("error_id", "session_id", "category", "relative_path", "detail"),
}


def cell(value) -> str:
    """One value as a table cell: `-` for null, six significant digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = str(value)
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= CELL_WIDTH else text[: CELL_WIDTH - 1] + "\u2026"


def table(columns, rows) -> str:
    """Rows as left-aligned columns under a header line."""
    cells = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    for r in cells:
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    return "\n".join(lines)


def query_text(report: dict) -> str:
    """A query report for a terminal: its summary line, then its rows as a table."""
    columns = HUMAN_COLUMNS[report["kind"]]
    body = table(columns, report["rows"]) if report["rows"] else "(no rows)"
    return summary_line(report) + "\n" + body
