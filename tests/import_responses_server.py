"""A minimal scripted Responses-API server on 127.0.0.1 for the Codex import test.

`python import_responses_server.py PORT CMD...`: the n-th request (n = number of
`function_call` items already in its input) is answered with an
`exec_command` call of the n-th CMD, and once the commands are used up with
the text "done". Server-sent events as Codex reads them; standard library only.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


def make_handler(commands: list[str]):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            n = sum(1 for item in body.get("input", []) if item.get("type") == "function_call")
            if n < len(commands):
                item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "exec_command",
                        "arguments": json.dumps({"cmd": commands[n]}), "status": "completed"}
            else:
                item = {"type": "message", "id": "msg_done", "role": "assistant",
                        "content": [{"type": "output_text", "text": "done", "annotations": []}]}
            events = [("response.created", {"response": {"id": "resp"}}),
                      ("response.output_item.added", {"output_index": 0, "item": item}),
                      ("response.output_item.done", {"output_index": 0, "item": item}),
                      ("response.completed", {"response": {"id": "resp", "usage": {
                          "input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})]
            data = "".join(f"event: {name}\ndata: {json.dumps({'type': name, **fields})}\n\n"
                           for name, fields in events).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(sys.argv[1])), make_handler(sys.argv[2:])).serve_forever()
