"""The projection database's identity, versions and ordered migrations.

Owns `APPLICATION_ID` (0x41574631, "AWF1"), `SCHEMA_VERSION`, the migration
list and header validation. Migrations are ordered and monotonic: each runs in
one transaction that also records a `schema_migrations` row and sets
`PRAGMA user_version`. An older supported projection is upgraded in place; a
newer one, a foreign application id or a non-SQLite file is refused. Nothing
here reads or writes source evidence.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from .errors import IndexIncompatible

APPLICATION_ID = 0x41574631
SCHEMA_VERSION = 4

_V1 = """
CREATE TABLE schema_migrations(
    version INTEGER PRIMARY KEY,
    applied_at TEXT NOT NULL,
    description TEXT NOT NULL
);
CREATE TABLE index_metadata(
    key TEXT PRIMARY KEY,
    value TEXT
);
CREATE TABLE runs(
    session_id TEXT PRIMARY KEY,
    source_dir TEXT NOT NULL,
    storage_class TEXT NOT NULL CHECK (storage_class IN ('active', 'archive')),
    index_state TEXT NOT NULL CHECK (index_state IN ('current', 'error', 'historical_artifact')),
    index_error TEXT,
    source_fingerprint TEXT,
    launch_schema TEXT,
    ticket_id TEXT,
    pack_id TEXT,
    workflow_id TEXT,
    workflow_node_id TEXT,
    retry_of_run_id TEXT,
    agent_name TEXT,
    agent_class TEXT,
    tier TEXT,
    executor TEXT,
    model TEXT,
    interactive INTEGER,
    source_revision TEXT,
    branch TEXT,
    created_at TEXT,
    started_at TEXT,
    finished_at TEXT,
    updated_at TEXT,
    durable_status TEXT,
    disposition TEXT,
    failure_category TEXT,
    exit_code INTEGER,
    final_receipt_sha256 TEXT,
    evidence_complete INTEGER NOT NULL DEFAULT 0,
    sealed_artifact_count INTEGER,
    indexed_at TEXT NOT NULL
);
CREATE INDEX runs_state ON runs(index_state, durable_status);
CREATE TABLE source_files(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    mode INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    record_count INTEGER NOT NULL,
    schema_ids_json TEXT NOT NULL,
    PRIMARY KEY (session_id, relative_path)
) WITHOUT ROWID;
CREATE TABLE events(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    source_sequence INTEGER NOT NULL,
    schema_id TEXT,
    event_id TEXT,
    recorded_at TEXT,
    category TEXT,
    state TEXT,
    outcome TEXT,
    record_sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, relative_path, source_sequence)
) WITHOUT ROWID;
CREATE TABLE health_samples(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    source_sequence INTEGER NOT NULL,
    recorded_at TEXT NOT NULL,
    runner_pid INTEGER,
    runner_alive INTEGER,
    executor_pid INTEGER,
    executor_alive INTEGER,
    runner_rss_bytes INTEGER,
    executor_rss_bytes INTEGER,
    rss_bytes INTEGER,
    disk_free_bytes INTEGER,
    seconds_since_semantic_progress REAL,
    last_semantic_progress_source TEXT,
    record_sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, relative_path, source_sequence)
) WITHOUT ROWID;
CREATE TABLE permission_events(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    source_sequence INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    principal TEXT,
    operation TEXT NOT NULL,
    resource_class TEXT NOT NULL,
    target_sha256 TEXT,
    requested_access TEXT,
    state TEXT NOT NULL,
    source TEXT NOT NULL,
    policy_rule_id TEXT,
    evidence_sha256 TEXT NOT NULL,
    remediation_class TEXT NOT NULL,
    record_sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, relative_path, source_sequence)
) WITHOUT ROWID;
CREATE TABLE incident_events(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    source_sequence INTEGER NOT NULL,
    incident_id TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    category TEXT NOT NULL,
    severity TEXT NOT NULL,
    state TEXT NOT NULL,
    summary TEXT NOT NULL,
    record_sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, relative_path, source_sequence)
) WITHOUT ROWID;
CREATE TABLE remediation_events(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    source_sequence INTEGER NOT NULL,
    event_id TEXT,
    incident_id TEXT,
    recorded_at TEXT NOT NULL,
    rule_id TEXT,
    action TEXT,
    outcome TEXT,
    reason_sha256 TEXT,
    record_sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, relative_path, source_sequence)
) WITHOUT ROWID;
CREATE TABLE process_results(
    session_id TEXT PRIMARY KEY REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    returncode INTEGER,
    exit_code INTEGER,
    signal TEXT,
    timed_out INTEGER NOT NULL,
    cancelled INTEGER NOT NULL,
    stdout_truncated INTEGER NOT NULL,
    stderr_truncated INTEGER NOT NULL,
    stdout_bytes INTEGER NOT NULL,
    stderr_bytes INTEGER NOT NULL,
    duration_seconds REAL,
    error_category TEXT,
    runner_pid INTEGER,
    executor_pid INTEGER,
    recorded_at TEXT,
    record_sha256 TEXT NOT NULL
);
CREATE TABLE execution_metrics(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    stage TEXT NOT NULL,
    relative_path TEXT NOT NULL,
    source_sequence INTEGER NOT NULL,
    input_tokens INTEGER,
    cached_input_tokens INTEGER,
    output_tokens INTEGER,
    reasoning_output_tokens INTEGER,
    provider_total_tokens INTEGER,
    provider_billed_cost REAL,
    local_estimated_cost REAL,
    currency TEXT,
    elapsed_seconds REAL,
    first_output_latency_seconds REAL,
    retry_count INTEGER NOT NULL,
    steer_count INTEGER NOT NULL,
    record_sha256 TEXT NOT NULL,
    PRIMARY KEY (session_id, stage)
) WITHOUT ROWID;
CREATE TABLE workflows(
    workflow_id TEXT PRIMARY KEY,
    owner_run_id TEXT NOT NULL UNIQUE REFERENCES runs(session_id) ON DELETE CASCADE,
    pack_id TEXT,
    snapshot_sha256 TEXT,
    workflow_state TEXT,
    event_count INTEGER
);
CREATE TABLE workflow_nodes(
    workflow_id TEXT NOT NULL REFERENCES workflows(workflow_id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    kind TEXT,
    ticket_id TEXT,
    run_id TEXT,
    state TEXT,
    attempt INTEGER,
    executor TEXT,
    model TEXT,
    PRIMARY KEY (workflow_id, node_id)
) WITHOUT ROWID;
CREATE TABLE workflow_edges(
    workflow_id TEXT NOT NULL REFERENCES workflows(workflow_id) ON DELETE CASCADE,
    from_node_id TEXT NOT NULL,
    to_node_id TEXT NOT NULL,
    PRIMARY KEY (workflow_id, from_node_id, to_node_id)
) WITHOUT ROWID;
CREATE TABLE index_errors(
    error_id INTEGER PRIMARY KEY,
    session_id TEXT,
    relative_path TEXT,
    category TEXT NOT NULL,
    detail TEXT NOT NULL,
    detected_at TEXT NOT NULL
);
CREATE INDEX index_errors_session ON index_errors(session_id);
CREATE VIEW incident_latest AS
SELECT * FROM (
    SELECT i.*,
        COUNT(*) OVER w AS event_count,
        MIN(i.recorded_at) OVER w AS first_recorded_at,
        ROW_NUMBER() OVER (PARTITION BY i.session_id, i.incident_id
                           ORDER BY i.recorded_at DESC, i.relative_path DESC, i.source_sequence DESC) AS latest_rank
    FROM incident_events i
    WINDOW w AS (PARTITION BY i.session_id, i.incident_id)
) WHERE latest_rank = 1;
CREATE VIEW permission_latest AS
SELECT * FROM (
    SELECT p.*,
        p.operation || '|' || p.resource_class || '|' || p.source || '|' || COALESCE(p.target_sha256, '')
            || '|' || COALESCE(p.principal, '') AS item_key,
        COUNT(*) OVER w AS event_count,
        ROW_NUMBER() OVER (PARTITION BY p.session_id, p.operation, p.resource_class, p.source,
                                        COALESCE(p.target_sha256, ''), COALESCE(p.principal, '')
                           ORDER BY p.recorded_at DESC, p.relative_path DESC, p.source_sequence DESC) AS latest_rank
    FROM permission_events p
    WINDOW w AS (PARTITION BY p.session_id, p.operation, p.resource_class, p.source,
                              COALESCE(p.target_sha256, ''), COALESCE(p.principal, ''))
) WHERE latest_rank = 1;
CREATE VIEW run_overview AS
SELECT r.*,
    (SELECT COUNT(*) FROM incident_latest i WHERE i.session_id = r.session_id AND i.state = 'open') AS open_incident_count,
    (SELECT COUNT(*) FROM permission_latest p WHERE p.session_id = r.session_id AND p.state = 'pending') AS pending_permission_count
FROM runs r;
CREATE VIEW incident_summary AS
SELECT category, state, COUNT(*) AS incident_count FROM incident_latest GROUP BY category, state;
CREATE VIEW permission_summary AS
SELECT operation, resource_class, state, COUNT(*) AS item_count FROM permission_latest
GROUP BY operation, resource_class, state;
CREATE VIEW performance_summary AS
SELECT r.executor, r.model, m.stage,
    COUNT(*) AS sample_count,
    AVG(m.elapsed_seconds) AS avg_elapsed_seconds,
    AVG(m.first_output_latency_seconds) AS avg_first_output_latency_seconds,
    SUM(m.input_tokens) AS input_tokens,
    SUM(m.output_tokens) AS output_tokens,
    SUM(m.retry_count) AS retry_count,
    SUM(m.steer_count) AS steer_count,
    COUNT(m.provider_billed_cost) AS provider_billed_sample_count,
    CASE WHEN COUNT(m.provider_billed_cost) > 0
          AND COUNT(CASE WHEN m.provider_billed_cost IS NOT NULL THEN m.currency END) = COUNT(m.provider_billed_cost)
          AND COUNT(DISTINCT CASE WHEN m.provider_billed_cost IS NOT NULL THEN m.currency END) = 1
         THEN AVG(m.provider_billed_cost) END AS provider_billed_average,
    CASE WHEN COUNT(CASE WHEN m.provider_billed_cost IS NOT NULL THEN m.currency END) = COUNT(m.provider_billed_cost)
          AND COUNT(DISTINCT CASE WHEN m.provider_billed_cost IS NOT NULL THEN m.currency END) = 1
         THEN MAX(CASE WHEN m.provider_billed_cost IS NOT NULL THEN m.currency END) END AS provider_billed_currency,
    COUNT(m.local_estimated_cost) AS local_estimate_sample_count,
    CASE WHEN COUNT(m.local_estimated_cost) > 0
          AND COUNT(CASE WHEN m.local_estimated_cost IS NOT NULL THEN m.currency END) = COUNT(m.local_estimated_cost)
          AND COUNT(DISTINCT CASE WHEN m.local_estimated_cost IS NOT NULL THEN m.currency END) = 1
         THEN AVG(m.local_estimated_cost) END AS local_estimate_average,
    CASE WHEN COUNT(CASE WHEN m.local_estimated_cost IS NOT NULL THEN m.currency END) = COUNT(m.local_estimated_cost)
          AND COUNT(DISTINCT CASE WHEN m.local_estimated_cost IS NOT NULL THEN m.currency END) = 1
         THEN MAX(CASE WHEN m.local_estimated_cost IS NOT NULL THEN m.currency END) END AS local_estimate_currency
FROM execution_metrics m JOIN runs r ON r.session_id = m.session_id
WHERE r.index_state = 'current'
GROUP BY r.executor, r.model, m.stage;
"""

_V2 = """
ALTER TABLE runs ADD COLUMN executor_result TEXT;
ALTER TABLE runs ADD COLUMN completion_result TEXT;
ALTER TABLE runs ADD COLUMN policy_result TEXT;
ALTER TABLE runs ADD COLUMN acceptance_eligible INTEGER;
ALTER TABLE runs ADD COLUMN attempt_classification TEXT;
ALTER TABLE runs ADD COLUMN score_verdict TEXT;
ALTER TABLE runs ADD COLUMN evaluation_state TEXT;
-- Rows projected before v2 lack the typed outcome columns: force a re-projection.
UPDATE runs SET source_fingerprint = NULL;
DROP VIEW run_overview;
CREATE VIEW run_overview AS
SELECT r.*,
    (SELECT COUNT(*) FROM incident_latest i WHERE i.session_id = r.session_id AND i.state = 'open') AS open_incident_count,
    (SELECT COUNT(*) FROM permission_latest p WHERE p.session_id = r.session_id AND p.state = 'pending') AS pending_permission_count
FROM runs r;
CREATE VIEW attempt_summary AS
SELECT executor, model, attempt_classification, executor_result, completion_result, policy_result,
    score_verdict, COUNT(*) AS run_count, SUM(acceptance_eligible) AS acceptance_eligible_count
FROM runs WHERE index_state = 'current'
GROUP BY executor, model, attempt_classification, executor_result, completion_result, policy_result, score_verdict;
"""

_V3 = """
CREATE TABLE evidence_repairs(
    repair_id TEXT PRIMARY KEY,
    source_session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    source_final_receipt_sha256 TEXT NOT NULL,
    source_artifact_path TEXT NOT NULL,
    source_artifact_sha256 TEXT NOT NULL,
    adapter_id TEXT,
    adapter_version TEXT,
    adapter_sha256 TEXT,
    canonical_sha256 TEXT NOT NULL,
    validation_result TEXT NOT NULL,
    source_mutation_verified INTEGER NOT NULL,
    repair_receipt_sha256 TEXT NOT NULL,
    relative_path TEXT NOT NULL,
    created_at TEXT,
    record_sha256 TEXT NOT NULL,
    indexed_at TEXT NOT NULL
);
CREATE INDEX evidence_repairs_source ON evidence_repairs(source_session_id);
"""

_V4 = """
CREATE TABLE source_dirs(
    session_id TEXT NOT NULL REFERENCES runs(session_id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    PRIMARY KEY (session_id, relative_path)
) WITHOUT ROWID;
-- Covers the probe's choice of runs, so it never reads the wide run rows.
CREATE INDEX runs_probe_order ON runs(index_state, durable_status, indexed_at, session_id, source_dir);
-- Older rows have no directory mtimes and an older fingerprint encoding: re-project them.
UPDATE runs SET source_fingerprint = NULL;
"""

#: (version, description, SQL) in the order they must run.
MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (1, "runs, sources, journals, process, metrics, workflows, errors, views", _V1),
    (2, "typed attempt outcomes on runs; attempt_summary view", _V2),
    (3, "verified evidence-repair linkage", _V3),
    (4, "run directory mtimes for the bounded freshness probe", _V4),
)

#: Every table the projection holds, for verification and export.
TYPED_TABLES = (
    "runs",
    "source_files",
    "source_dirs",
    "events",
    "health_samples",
    "permission_events",
    "incident_events",
    "remediation_events",
    "process_results",
    "execution_metrics",
    "workflows",
    "workflow_nodes",
    "workflow_edges",
    "evidence_repairs",
    "index_errors",
)


def utc_now() -> str:
    """The index's timestamp form: ISO 8601 in UTC with offset, as every `*_at` column stores it."""
    return datetime.now(timezone.utc).isoformat()


def read_header(connection: sqlite3.Connection) -> tuple[int, int]:
    """Return (application_id, user_version); a non-database file is refused."""
    try:
        app_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version = connection.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError:
        raise IndexIncompatible("index database is not a SQLite database") from None
    return app_id, version


def validate_header(connection: sqlite3.Connection, *, allow_empty: bool = False, allow_older: bool = False) -> int:
    """Check application id and version; return the version found.

    An empty new database (id 0, version 0) passes only with `allow_empty`;
    an older supported version only with `allow_older` (the writer upgrades it).
    """
    app_id, version = read_header(connection)
    if app_id == 0 and version == 0:
        has_tables = connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
        if has_tables:
            raise IndexIncompatible("database belongs to another application")
        if not allow_empty:
            raise IndexIncompatible("index database is empty; run: agent-workflow index rebuild")
        return 0
    if app_id != APPLICATION_ID:
        raise IndexIncompatible("database belongs to another application (application_id differs)")
    if version > SCHEMA_VERSION:
        raise IndexIncompatible(f"index schema version {version} is newer than supported {SCHEMA_VERSION}")
    if version < 1:
        raise IndexIncompatible("index schema version is invalid")
    if version < SCHEMA_VERSION and not allow_older:
        raise IndexIncompatible(f"index schema version {version} needs an upgrade; run: agent-workflow index sync")
    return version


def migrate(connection: sqlite3.Connection, target: int = SCHEMA_VERSION) -> list[int]:
    """Apply every pending migration up to `target`, each in its own transaction."""
    current = validate_header(connection, allow_empty=True, allow_older=True)
    applied = []
    for version, description, sql in MIGRATIONS:
        if version <= current or version > target:
            continue
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                connection.execute(statement)
            connection.execute(
                "INSERT INTO schema_migrations(version, applied_at, description) VALUES (?, ?, ?)",
                (version, utc_now(), description),
            )
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {int(version)}")
            connection.execute(
                "INSERT OR REPLACE INTO index_metadata(key, value) VALUES ('schema_version', ?)", (str(version),)
            )
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied


def _statements(sql: str):
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()
