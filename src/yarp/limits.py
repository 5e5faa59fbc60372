"""Every numeric bound of the archive, the broker and the runner, in one place.

Numbers come from the tool-call archive specification and the reference
contract; each constant says where it is enforced. Other modules import these
names instead of repeating literals, so a bound changes in exactly one line.
"""

# --- Frames (ingest stdin, broker socket) -----------------------------------
#: Bytes of the big-endian unsigned length prefix that precedes every frame.
FRAME_HEADER_BYTES = 8
#: Largest frame body accepted anywhere (ingest and broker); 256 MiB.
MAX_FRAME_BYTES = 256 * 1024 * 1024
#: Largest handshake frame in either direction.
MAX_HANDSHAKE_BYTES = 4096
#: Smallest receive buffer a frame splitter hands to a buffered protocol between frames.
MIN_RECEIVE_BUFFER_BYTES = 64 * 1024

# --- Envelope and operation data -------------------------------------------
#: Longest connection correlation id (ASCII, printable).
MAX_CORRELATION_ID_CHARS = 64
#: Longest source identity component (agent, account, session id, call id).
MAX_IDENTITY_CHARS = 1024
#: Calls per `import_calls` operation: enough to amortise a commit, few enough that a
#: refused batch costs little and frames stay far below the frame limit.
MAX_IMPORT_BATCH_CALLS = 2048
#: Longest tool name, provider, model.
MAX_NAME_CHARS = 256
#: Longest working directory recorded for a call.
MAX_WORKING_DIRECTORY_CHARS = 4096
#: Largest integer magnitude JSON carries exactly between languages (2**53 - 1).
MAX_SAFE_INTEGER = 2**53 - 1
#: Deepest JSON nesting accepted for tool inputs and results.
MAX_JSON_DEPTH = 128
#: Relative broker deadline bounds, milliseconds.
MIN_DEADLINE_MS = 1
MAX_DEADLINE_MS = 30_000
#: Deadline used by ingest when an adapter omits `deadlineAtMs`.
DEFAULT_DEADLINE_MS = 30_000
#: Largest agent output file a hook reads into memory as a source output
#: (an agent's saved output; 4 GiB). What the archive stores is bounded
#: by one payload instead (`yarp.archive.file_payload.payload_limit`: 999,999,936
#: bytes stored with SQLite's default limit), so a larger source is refused there.
MAX_STREAM_FILE_BYTES = 4 * 1024 * 1024 * 1024

# --- Errors -------------------------------------------------------------------
#: Longest error text on stderr, in acknowledgements and in broker replies.
MAX_ERROR_CHARS = 1024

# --- Broker admission and batching -------------------------------------------
#: Admitted requests per client connection.
MAX_ADMITTED_PER_CLIENT = 1
#: Admitted requests across all clients.
MAX_ADMITTED_TOTAL = 256
#: Admitted request body bytes across all clients.
MAX_ADMITTED_BODY_BYTES = MAX_FRAME_BYTES
#: Longest a ready request waits for companions before its batch commits.
BATCH_WAIT_MS = 2
#: Requests per batch.
MAX_BATCH_REQUESTS = 32
#: Group commit: when the previous batch held several requests and its commit took at least
#: this long, the next batch waits for the clients it answered to send again (they are in a
#: loop of requests), up to this share of that commit time and at most the cap, and only
#: when the previous batch ended this recently.
GROUP_WAIT_MIN_COMMIT_MS = 1
GROUP_WAIT_SHARE = 0.5
GROUP_WAIT_MAX_MS = 5
GROUP_WAIT_RECENT_MS = 20
#: Prepared payload bytes per batch; a larger legal request runs alone.
MAX_BATCH_PAYLOAD_BYTES = 8 * 1024 * 1024
#: Source keys remembered by the recent-sequence cache.
MAX_SEQUENCE_CACHE_KEYS = 4096
#: Idle grace before the broker shuts down (overridable by YARP_BROKER_IDLE_MS).
BROKER_IDLE_MS = 60_000
#: Longest a client waits for a broker it started to answer the ready handshake,
#: and for a running broker to answer its connection's handshake.
BROKER_START_TIMEOUT_S = 5.0
#: The writer checks that its open database is still the file at the archive
#: path after every commit, and also before a batch when its last check is
#: older than this: a batch after an idle spell is refused unwritten (and
#: replayed to a new broker) rather than committed into a removed file.
ARCHIVE_RECHECK_S = 0.5
#: Longest socket path (platform limit for sun_path, with margin).
MAX_SOCKET_PATH_BYTES = 104
#: Frames up to this size that name no files are prepared on the event loop
#: (cheaper than a pool hop); larger ones go to the worker pool.
INLINE_PREPARE_BYTES = 64 * 1024
#: Time kept between the end of a busy wait and a request's deadline, so a
#: commit that starts after waiting finishes before the client gives up.
COMMIT_MARGIN_S = 0.02
#: A `result_text` view not made this long before its request's deadline is
#: left out of the acknowledgement, which then still arrives in time.
VIEW_DEADLINE_MARGIN_S = 0.1
#: Largest frame probed for a control request (status); controls are tiny.
MAX_CONTROL_FRAME_BYTES = 512
#: Commit latencies kept for the status percentiles.
COMMIT_LATENCY_SAMPLES = 1024
#: WAL size that triggers a passive checkpoint between batches.
WAL_CHECKPOINT_BYTES = 64 * 1024 * 1024
#: What SQLite cuts the WAL file back to when it starts the log again after a
#: complete checkpoint (`journal_size_limit`). Without it the file keeps its
#: largest size, which stays over `WAL_CHECKPOINT_BYTES`, and every later
#: batch would checkpoint again (an extra database sync per commit).
WAL_RESET_BYTES = 16 * 1024 * 1024

# --- Prune (yarp.archive.prune, yarp.broker.maintenance) ----------------------------
#: Time a prune's step (one transaction) aims to stay under; captures commit between steps
#: (overridable by YARP_BROKER_PRUNE_STEP_MS).
PRUNE_STEP_MS = 100
#: Most call ids one step judges (overridable by YARP_BROKER_PRUNE_CALLS).
PRUNE_STEP_CALLS = 4096
#: The broker tells a prune's client how it stands at least this often ...
PRUNE_PROGRESS_INTERVAL_S = 1.0
#: ... and the client waits this long after each word before it gives up on the answer.
PRUNE_PROGRESS_WAIT_S = 30.0
#: The writer connection's page cache while a prune runs (KiB; SQLite's default is 2 MiB).
PRUNE_CACHE_KIB = 64 * 1024
#: WAL size that triggers a passive checkpoint while a prune runs (more than WAL_RESET_BYTES): at
#: 1,000,000 calls a 64 MiB checkpoint took up to 1.1 s, a 32 MiB one up to 0.37 s, for about the
#: same total.
PRUNE_CHECKPOINT_BYTES = 32 * 1024 * 1024

# --- Payload preparation ---------------------------------------------------------
#: Below this many bytes compression is never tried: the zstd frame overhead
#: (~9-13 bytes) and the call cost outweigh any saving a row could gain.
MIN_COMPRESS_BYTES = 256
#: Compressed output is kept only when it saves at least this fraction ...
MIN_SAVING_RATIO = 0.10
#: ... and at least this many bytes.
MIN_SAVING_BYTES = 64
#: Inputs at least this large are probed on a sample before compressing them all.
PROBE_THRESHOLD_BYTES = 256 * 1024
#: Bytes taken from each of three places (start, middle, end) of a probed input.
PROBE_SLICE_BYTES = 8 * 1024
#: A probe that saves less than this fraction marks the input incompressible.
PROBE_MIN_SAVING_RATIO = 0.05
#: zstandard level for stored payloads.
COMPRESSION_LEVEL = 3
#: Deepest nesting the canonical-JSON fast path takes; deeper values go through rfc8785.
FAST_PATH_MAX_DEPTH = 64
#: Payloads at least this large are hashed on a helper thread while they are
#: compressed (hashlib and zstandard both release the GIL on large buffers).
PARALLEL_HASH_BYTES = 8 * 1024 * 1024
#: A stream or source-output file at least this large is hashed, compressed and
#: stored in chunks from the file instead of being read whole
#: (`yarp.archive.file_payload`; overridable by YARP_BROKER_CHUNKED_BYTES).
CHUNKED_FILE_BYTES = 16 * 1024 * 1024
#: Bytes such a file is read (and its body copied into SQLite) per step
#: (overridable by YARP_BROKER_CHUNK_BYTES).
FILE_CHUNK_BYTES = 1024 * 1024
#: Compressed output of a chunked payload kept in memory before it moves to an
#: anonymous temporary file beside its source.
SPILL_BYTES = 8 * 1024 * 1024
#: Bytes of a payload row besides its body (digest, compression, length and the
#: record header: 47 to 53), with a margin. SQLite refuses a row longer than
#: SQLITE_LIMIT_LENGTH, so the largest payload is that limit minus this
#: (999,999,936 bytes with SQLite's default limit; lowered, never raised, by
#: YARP_BROKER_PAYLOAD_LIMIT).
PAYLOAD_ROW_OVERHEAD_BYTES = 64
#: A stream larger than this is not tried whole: hashing, compressing and
#: viewing it all may not end within the capture's 30 s deadline (1 GiB of log
#: text took 15 s, 1.5 GiB over 30 s on the shared 2-core machine), so `yarp
#: run` archives (and views) its first bytes, as it does for a stream whose
#: body does not fit in one payload; other files larger than this are refused.
MAX_WHOLE_FILE_BYTES = 1024 * 1024 * 1024

# --- SQLite -------------------------------------------------------------------
SQLITE_BUSY_TIMEOUT_MS = 250

# --- Agent-visible output -----------------------------------------------------
#: Default global cap on visible text, UTF-8 bytes (0 disables the cap).
DEFAULT_CAP_BYTES = 5120
MIN_CAP_BYTES = 1024
MAX_CAP_BYTES = 16 * 1024 * 1024
#: Bounds for direct recovery commands (`yarp search`, `yarp read`).
DEFAULT_RECOVERY_CAP_BYTES = 32 * 1024
DEFAULT_RECOVERY_CAP_LINES = 1900

# --- Recovery commands --------------------------------------------------------
MAX_SEARCH_PATTERNS = 8
MAX_SEARCH_CONTEXT = 50
DEFAULT_SEARCH_CONTEXT = 2
MAX_SEARCH_MATCHES = 100
DEFAULT_SEARCH_MATCHES = 20
#: Longest line printed by `yarp search` before it is cut at a UTF-8 boundary.
MAX_SEARCH_LINE_BYTES = 512

# --- Shell rules, reducers and planning (yarp.view) ----------------------------
#: User rule packs listed in `rules.packs`.
MAX_PACKS = 16
#: Largest rule file read.
MAX_PACK_FILE_BYTES = 1024 * 1024
MAX_RULES_PER_FILE = 1024
MAX_PROGRAMS_PER_RULE = 16
MAX_PREFIX_ARGS = 8
MAX_REQUIRED_ARGS = 8
MAX_PATTERNS_PER_RULE = 32
MAX_PATTERN_CHARS = 256
MAX_WORD_CHARS = 128
MAX_SEARCH_HINT_CHARS = 64
#: Bytes a reducer reads per chunk; chunks are cut at the last newline.
REDUCER_CHUNK_BYTES = 1 << 20
#: Longest partial line a reducer holds; longer lines keep only a prefix (truncated).
MAX_CARRY_BYTES = 1 << 20
#: Budget a reducer charges for each omission marker when planning what to keep.
MARKER_COST = 240
#: Largest command text `yarp plan` parses; longer text runs unchanged.
MAX_COMMAND_BYTES = 64 * 1024
#: Deepest syntax tree `yarp plan` accepts; deeper text runs unchanged.
MAX_TREE_DEPTH = 64
#: Most syntax nodes `yarp plan` accepts; more run unchanged.
MAX_TREE_NODES = 8192

# --- Recovery commands: scanning ----------------------------------------------
#: Bytes pulled from SQLite (and out of the decompressor) per step.
RECOVERY_CHUNK_BYTES = 1024 * 1024
#: Longest single search pattern, UTF-8 bytes (the reference's bound).
MAX_PATTERN_BYTES = 1024
#: A line longer than this is matched on its first this-many bytes only, so one
#: huge line cannot make search hold a whole payload in memory.
MAX_SCAN_LINE_BYTES = 1024 * 1024
#: `yarp search --text` reads a payload body this size or smaller (stored and
#: uncompressed) in one piece with its row; a larger one streams from its row.
MAX_INLINE_SCAN_PAYLOAD_BYTES = 4 * 1024 * 1024

# --- yarp archive verify ---------------------------------------------------------
#: Problem lines reported per check; the rest are summarised in one line.
MAX_PROBLEMS_PER_CHECK = 20
#: Rows returned by `PRAGMA integrity_check(N)`.
MAX_INTEGRITY_ROWS = 20
#: Payload rows read per statement by verify (each statement is its own short read snapshot).
PAYLOAD_BATCH_ROWS = 1024
#: Payloads up to this size (stored and uncompressed) come with their row and are checked whole;
#: larger ones stream.
VERIFY_INLINE_BYTES = 8 * 1024 * 1024
#: Bytes read from a payload (or out of its decompressor) per step. Larger
#: steps cost fewer SQLite blob reads and Python round trips per byte hashed:
#: 4 MiB reads blobs at about twice the speed of 1 MiB.
VERIFY_CHUNK_BYTES = 4 * 1024 * 1024
#: Bytes of the database SQLite may memory-map in a long read-only scan
#: (verify, savings). Page reads become copies from the page cache instead of
#: one pread per 4 KiB page: integrity_check runs ~20x and blob reads ~3x
#: faster, and savings' payload-size lookups about 1.7x. Read-only mapping;
#: the part of a larger file beyond it is read as before.
READER_MMAP_BYTES = 1024 * 1024 * 1024
