"""Errors as one line for a person: what a server or library said, folded and bounded."""
from __future__ import annotations

import errno
import socket
import ssl

from store.text.safe import neutralize

MAX_CHARS = 300


def one_line(value: object, limit: int = MAX_CHARS) -> str:
    """`value`'s text on one line, at most `limit` characters, with no secret (a server may echo its key)
    and nothing that drives a terminal: every error is both stored and printed."""
    return neutralize(" ".join(str(value).split()))[:limit]


def network_problem(exc: BaseException) -> str | None:
    """Why a request never reached its server ("its name does not resolve (DNS)", "the connection was refused"),
    read from the chain of causes that httpx, urllib and the clients on them raise; None when it reached one
    (an answer such as a refused token is then the server's, and says so itself)."""
    seen: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in seen:
        seen.append(cause)
        reason = getattr(cause, "reason", None)  # urllib's URLError holds the socket's error as its reason
        for found in (cause, reason):
            if isinstance(found, socket.gaierror):
                return "its name does not resolve (DNS): check the network, or the URL's host name"
            if isinstance(found, ConnectionRefusedError):
                return "the connection was refused: nothing listens at that address and port"
            if isinstance(found, TimeoutError):
                return "it did not answer in time"
            if isinstance(found, ssl.SSLError):
                return f"the TLS handshake failed ({one_line(found, 120)})"
            if isinstance(found, OSError) and found.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH):
                return "there is no route to it: check the network"
        cause = cause.__cause__ or cause.__context__
    return None
