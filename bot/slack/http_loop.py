"""The event loop of `serve --http`: waitress's loop, asking only the connections that changed.

waitress asks every open connection whether it wants to read or write on every
turn of its loop, and each byte a client sends makes a turn. With 1,000 slow
clients that is a thousand questions for every byte any of them sends, and with
300 requests queued for the threads, 300 for every one answered: the loop falls
behind everything else. This loop keeps one selector (epoll on Linux) from turn
to turn and asks only the connections that changed since: those that had an
event, and those the server touched (a request thread done with one, or one
marked for closing). The listening socket is asked on every turn: its question
runs waitress's maintenance (idle connections, late requests), which also
touches every connection once a second, so none can wait longer for a look.
"""
from __future__ import annotations

import contextlib
import selectors
from collections import deque
from select import POLLIN, POLLOUT
from typing import Any

from waitress.wasyncore import readwrite


class Turns:
    """Runs the dispatchers of `map` (waitress's socket map: the listening socket, its trigger, the connections)."""

    def __init__(self, map: dict[int, Any]) -> None:
        self.map = map
        self.selector = selectors.DefaultSelector()
        # Descriptors to ask on the next turn. Request threads append too: a deque takes that without a lock.
        self._touched: deque[int] = deque(map)

    def touch(self, fd: int) -> None:
        """Ask this connection on the next turn: it changed outside its own events (any thread may call this)."""
        self._touched.append(fd)

    def forget(self, fd: int) -> None:
        """A connection is closing: its descriptor may be reused by the next one accepted."""
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(fd)

    def run(self, timeout: float, listener: int) -> None:
        """Turn until the map is empty (waitress's close_all at shutdown); `listener` is asked on every turn."""
        try:
            while self.map:
                self._ask(listener)
                for key, events in self.selector.select(timeout):
                    dispatcher = self.map.get(key.fd)
                    if dispatcher is not None:
                        flags = (POLLIN if events & selectors.EVENT_READ else 0) | \
                                (POLLOUT if events & selectors.EVENT_WRITE else 0)
                        readwrite(dispatcher, flags)  # waitress's own handling, errors included
                    self._touched.append(key.fd)
        finally:
            self.selector.close()

    def _ask(self, listener: int) -> None:
        """What each connection to ask wants (to read, to write), registered for the next wait."""
        self._ask_one(listener)  # first: its maintenance touches connections, asked in this same turn
        asked = set()
        while self._touched:
            asked.add(self._touched.popleft())
        for fd in asked:
            self._ask_one(fd)

    def _ask_one(self, fd: int) -> None:
        dispatcher = self.map.get(fd)
        if dispatcher is not None:
            self._register(fd, (selectors.EVENT_READ if dispatcher.readable() else 0) |
                           (selectors.EVENT_WRITE if dispatcher.writable() and not dispatcher.accepting else 0))

    def _register(self, fd: int, wanted: int) -> None:
        try:
            registered = self.selector.get_key(fd).events
        except KeyError:
            registered = 0
        if wanted == registered:
            return
        if not wanted:
            self.selector.unregister(fd)
        elif registered:
            self.selector.modify(fd, wanted)
        else:
            self.selector.register(fd, wanted)
