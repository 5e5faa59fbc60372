"""Operation dispatch: what the broker does with each kind of operation, in one table.

`HANDLERS` maps an operation kind to its `Handler`: the function that turns
the validated operation into prepared work for the writer (`prepare`: canonical
JSON, hashes, compression, file snapshots — everything done before the write
lock), and whether that function reads files named by the request (such work
always goes to the preparation pool, since its cost is not the frame's size).

Adding an operation (docs/broker.md, "Adding an operation"): define its
record, `kind`, `sequence` and replay policy in `yarp.wire.operations`, its JSON
validation in `yarp._validate_py`, its rows in `yarp.archive.store`, and one entry
here with its handler, usually in a module of its own. A kind without an
entry is refused as an unknown operation before anything runs; a test checks
every kind in `ops.OPERATION_TYPES` has one.
"""

from __future__ import annotations

from yarp._record import Record
from yarp.archive.prepare import Prepared, prepare
from yarp.transcripts.batch import prepare_import_calls
from yarp.wire import operations as ops
from yarp.wire.validation import check_operation


class Handler(Record):
    """How the broker prepares one kind of operation, and whether that preparation reads files."""

    __slots__ = ("prepare", "reads_files")
    #: (validated operation) -> Prepared; runs on the loop or in the pool, never under the write lock.
    prepare: object
    #: Whether `prepare` reads files the request names (then it always runs in the pool).
    reads_files: object


def _full_output_named(env) -> bool:
    return env.operation.get("fullOutputPath") is not None


_ALWAYS = lambda env: True  # noqa: E731
_NEVER = lambda env: False  # noqa: E731

HANDLERS: dict[str, Handler] = {
    "begin_call": Handler(prepare, _NEVER),
    "capture_streams": Handler(prepare, _ALWAYS),
    "capture_passthrough_streams": Handler(prepare, _ALWAYS),
    "result_before": Handler(prepare, _full_output_named),
    "result_text": Handler(prepare, _NEVER),
    "stage_result": Handler(prepare, _NEVER),
    "finish_call": Handler(prepare, _NEVER),
    "update_final_result": Handler(prepare, _NEVER),
    "prune_before": Handler(prepare, _NEVER),
    # Reads the approved source-output files its calls name.
    "import_calls": Handler(prepare_import_calls, _ALWAYS),
}


def reads_files(env) -> bool:
    """Whether preparing this envelope's operation reads files the request names (then it runs in the pool)."""
    return HANDLERS[env.kind].reads_files(env)


def prepare_operation(env, operation: ops.ArchiveOperation) -> Prepared:
    """Turn a validated operation into prepared work for the writer, using its kind's handler."""
    return HANDLERS[env.kind].prepare(operation)


def prepare_request(env) -> Prepared:
    """Validate the envelope's operation, prove its identities, prepare its payloads (pool or loop)."""
    return prepare_operation(env, check_operation(env))
