"""Waiting on a condition instead of for a fixed time: a test waits for what it needs, and no longer.

The deadline is generous on purpose. It is reached only when the condition never comes (a bug),
so a busy machine, where everything takes several times longer, still passes.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEADLINE = 30.0  # seconds; only a failing test waits this long
EVERY = 0.01  # seconds between two looks at the condition


def wait_until(condition: Callable[[], T], what: str, timeout: float = DEADLINE, every: float = EVERY) -> T:
    """Poll `condition` until it returns something true, and return that; AssertionError naming `what` if it never does."""
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up after {timeout:g}s waiting for {what}")
        time.sleep(every)


def wait_past(moment: float, what: str) -> None:
    """Wait until the wall clock (time.time()) is past `moment`, such as the end of a lease read from the store."""
    wait_until(lambda: time.time() > moment, what, timeout=max(DEADLINE, moment - time.time() + DEADLINE))
