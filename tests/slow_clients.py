"""Clients that send their requests slowly, many at once, on one thread: what a slow network or an attacker does.

Each connection sends its request a piece at a time, one piece every few seconds, and
starts again from the top once it is all sent (on the same connection while the server
keeps it open). A connection the server closes is counted and opened again, so the number
open stays `count`. Used by the tests and by bench/http_front.py; traffic goes to 127.0.0.1 only.
"""
from __future__ import annotations

import contextlib
import random
import resource
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field


@dataclass
class _Connection:
    sock: socket.socket
    opened: float
    due: float  # when the next piece goes
    sent: int = 0  # bytes of the request sent so far


@dataclass
class SlowClients:
    """`count` connections to 127.0.0.1:`port`, each sending `request` `piece` bytes every `every` seconds.
    Use as a context manager: the connections are open and sending while inside it."""

    port: int
    count: int
    request: bytes
    piece: int
    every: float
    opened: int = 0  # connections made, counting those opened again
    closed: list[float] = field(default_factory=list)  # how long each connection the server closed had been open
    answered: set[int] = field(default_factory=set)  # which of the `count` places got an answer at least once
    _stop: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> SlowClients:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < self.count + 256:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(self.count + 256, hard), hard))
        self._selector = selectors.DefaultSelector()
        self._thread = threading.Thread(target=self._run, name="slow-clients", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _open(self, place: int, now: float) -> None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
        except OSError:  # the listen queue is full: try again on the next turn
            self._pending.append(place)
            return
        sock.setblocking(False)
        self.opened += 1
        self._selector.register(sock, selectors.EVENT_READ, place)
        # The first piece at a random point of the period, so that pieces arrive evenly rather than in waves.
        self._connections[place] = _Connection(sock, now, now + random.uniform(0, self.every))

    def _run(self) -> None:
        self._connections: dict[int, _Connection] = {}
        self._pending: list[int] = []
        now = time.monotonic()
        for place in range(self.count):
            self._open(place, now)
        while not self._stop.is_set():
            now = time.monotonic()
            for place in self._pending[:]:
                self._pending.remove(place)
                self._open(place, now)
            for key, _ in self._selector.select(timeout=0.05):
                self._read(key.data, now)
            for place, connection in list(self._connections.items()):
                if connection.due <= now:
                    self._send(place, connection, now)
        for connection in self._connections.values():
            connection.sock.close()
        self._selector.close()

    def _read(self, place: int, now: float) -> None:
        connection = self._connections[place]
        try:
            data = connection.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.answered.add(place)
            return
        self._close(place, now)

    def _send(self, place: int, connection: _Connection, now: float) -> None:
        piece = self.request[connection.sent:connection.sent + self.piece]
        try:
            connection.sent += connection.sock.send(piece)
        except BlockingIOError:
            pass
        except OSError:
            self._close(place, now)
            return
        if connection.sent >= len(self.request):
            connection.sent = 0
        connection.due = now + self.every

    def _close(self, place: int, now: float) -> None:
        connection = self._connections.pop(place)
        self.closed.append(now - connection.opened)
        self._selector.unregister(connection.sock)
        with contextlib.suppress(OSError):
            connection.sock.close()
        self._open(place, now)
