"""What the listeners of one kind share: the runtime, and the pool their work is handed to after the ack."""
from __future__ import annotations

from collections.abc import Callable

from slack_bolt import App

from bot.runtime import Runtime

Later = Callable[..., None]  # later(job, *args): runs job(*args) on the answer pool, a failure logged


class Listening:
    """One kind of listener; register(app) adds its handlers to the app."""

    def __init__(self, runtime: Runtime, later: Later) -> None:
        self.runtime = runtime
        self.later = later

    def register(self, app: App) -> None:
        raise NotImplementedError
