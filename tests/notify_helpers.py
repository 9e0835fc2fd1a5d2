"""A plain local HTTP receiver for webhook tests (loopback only)."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Receiver:
    """Records every POST (time, path, parsed JSON body); answers ``fail_first`` requests with HTTP 500."""

    def __init__(self, port: int | None = None, fail_first: int = 0, delay: float = 0.0) -> None:
        self.port = port or free_port()
        self.posts: list[tuple[float, str, object]] = []
        self.requests = 0
        self.fail_first = fail_first
        self.delay = delay
        self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> "Receiver":
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.requests += 1
                if rec.delay:
                    time.sleep(rec.delay)
                if rec.requests <= rec.fail_first:
                    self.send_response(500)
                    self.end_headers()
                    return
                rec.posts.append((time.time(), self.path, json.loads(body)))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *a):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def bodies(self, event: str | None = None) -> list:
        return [b for _, _, b in self.posts if event is None or (isinstance(b, dict) and b.get("event") == event)]

    def wait_for(self, pred, timeout: float) -> bool:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if pred():
                return True
            time.sleep(0.05)
        return pred()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
