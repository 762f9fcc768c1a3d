"""The part every fake remote service shares: an HTTP server on a free 127.0.0.1 port, in a thread."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

# How often the serving thread checks whether it was asked to stop; closing waits at most this long.
POLL_SECONDS = 0.01


class LoopbackServer:
    """Serve `handler` on 127.0.0.1 for the life of a `with` block."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # a test may leave a slow request hanging; closing must not wait for it
        self._server.block_on_close = False
        # serve_forever looks for shutdown() once per poll interval: socketserver's default of 0.5 s made every
        # `with` block end up to half a second late (about a second per test that used two fakes).
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": POLL_SECONDS},
                                        daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
