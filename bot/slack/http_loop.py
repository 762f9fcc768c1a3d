"""The event loop of `serve --http`: waitress's loop, asking only the connections that may have changed.

waitress asks every open connection whether it wants to read or write on every
turn of its loop, and a client sending one byte makes a turn. With 1,000 slow
clients that is a thousand questions for each byte any of them sends, and the
loop falls behind everything else. This loop keeps one selector (epoll on Linux)
from turn to turn, and asks again only the connections that had an event, have
a request being handled, or were just opened or marked for closing; a connection
waiting for the rest of its request (readable, nothing to write) is left as it
is until one of those happens. The listening socket is asked on every turn: its
question runs waitress's maintenance (idle connections, late requests).
"""
from __future__ import annotations

import contextlib
import selectors
from select import POLLIN, POLLOUT
from typing import Any

from waitress.wasyncore import readwrite

_SETTLED = selectors.EVENT_READ  # waiting for request bytes: nothing changes it but its own events


class Turns:
    """Runs the dispatchers of `map` (waitress's socket map: the listening socket, its trigger, the connections)."""

    def __init__(self, map: dict[int, Any]) -> None:
        self.map = map
        self.selector = selectors.DefaultSelector()
        self._look: set[int] = set(map)  # to ask on the next turn
        self._unsettled: set[int] = set()  # to ask on every turn until settled

    def touch(self, fd: int) -> None:
        """Ask this connection on the next turn: it was opened, or marked for closing, outside its own events."""
        self._look.add(fd)

    def forget(self, fd: int) -> None:
        """A connection is closing: its descriptor may be reused by the next one accepted."""
        self._look.discard(fd)
        self._unsettled.discard(fd)
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
                    self._look.add(key.fd)
        finally:
            self.selector.close()

    def _ask(self, listener: int) -> None:
        """What each connection to ask wants (to read, to write), registered for the next wait."""
        asked, self._look = self._look | self._unsettled, set()
        for fd in (listener, *asked):
            dispatcher = self.map.get(fd)
            if dispatcher is None:
                continue
            wanted = (selectors.EVENT_READ if dispatcher.readable() else 0) | \
                     (selectors.EVENT_WRITE if dispatcher.writable() and not dispatcher.accepting else 0)
            self._register(fd, wanted)
            if wanted == _SETTLED:
                self._unsettled.discard(fd)
            else:
                self._unsettled.add(fd)

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
