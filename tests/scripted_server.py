"""The loopback HTTP server under every scripted model server the real-agent tests use.

A subclass (a dataclass holding its script) answers one JSON `POST` with
`answer(path, body) -> (status, content type, payload)`; this base parses the
body, replies with a `Content-Length`, answers `HEAD` with 200 and other `GET`s
with 404, and runs the server on a daemon thread for the `with` block. It binds
127.0.0.1 only; the real-agent tests also start it inside a loopback-only
network namespace (netns.py).

Standard library only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

ERROR = b'{"type": "error"}'


class ScriptedServer:
    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        raise NotImplementedError

    def record(self, body: dict, into: list) -> None:
        with self._lock:
            into.append(body)

    def __enter__(self) -> Self:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                return

            def _reply(self, status: int, content_type: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_HEAD(self) -> None:  # noqa: N802 (http.server naming)
                self._reply(200, "text/plain", b"")

            def do_GET(self) -> None:  # noqa: N802
                self._reply(404, "application/json", ERROR)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._reply(400, "application/json", ERROR)
                    return
                self._reply(*owner.answer(self.path.split("?", 1)[0].rstrip("/"), body))

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:PORT`."""
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"
