"""A loopback events endpoint for the events-on runners: answers every POST with 202 and keeps
nothing. Runs in its own process (`python -m bench.eval.sink`, prints its port, stops when its
stdin closes) so serving requests never competes for the benchmark process's GIL.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Accept(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


class EventSinkProcess:
    """The sink in a child process; `uri` is its base URI (events post to `{uri}/bulk`)."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.eval.sink"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.strip().isdigit():
            self.close()
            raise RuntimeError(f"event sink did not start (said {line!r})")
        self.uri = f"http://127.0.0.1:{int(line)}"

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def serve() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Accept)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # returns when the parent closes our stdin (or exits)
    server.shutdown()


if __name__ == "__main__":
    serve()
