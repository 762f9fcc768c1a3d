"""A fixture that fails a test running for minutes: the symptom of a regex backtracking on crafted text."""
from __future__ import annotations

import signal

import pytest


@pytest.fixture
def hang_guard():
    def stop(*_):
        raise TimeoutError("text rules took over 20s on one input")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
