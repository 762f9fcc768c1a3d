"""Where a URL points: its origin (scheme, host and port), the unit a credential is kept to.

Every client that carries a token (GitHub's, the model's, Slack's) sends it only to
the origin it was configured with: a next-page link or a redirect to any other is
refused before a byte goes out.
"""
from __future__ import annotations

from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """`scheme://host:port` of an absolute URL, with the scheme's default port written out,
    so that http://h and http://h:80 are one origin and http://h:8080 another."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port out of range: an origin of its own, equal to no configured one
        return f"{scheme}://{parts.netloc}"
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


def elsewhere(url: str, home: str) -> str | None:
    """The origin of `url` when it is not the origin of `home`, else None."""
    there = origin(url)
    return there if there != origin(home) else None
