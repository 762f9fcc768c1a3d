"""What the listeners of one kind share: the runtime, the pool their work is handed to after the ack, and the
workspace a request comes from."""
from __future__ import annotations

from collections.abc import Callable

from slack_bolt import App, BoltContext

from bot.runtime import Runtime
from store.tables.teams import Team

Later = Callable[..., None]  # later(job, *args): runs job(*args) on the answer pool, a failure logged


class Listening:
    """One kind of listener; register(app) adds its handlers to the app."""

    def __init__(self, runtime: Runtime, later: Later) -> None:
        self.runtime = runtime
        self.later = later

    def register(self, app: App) -> None:
        raise NotImplementedError


def team_of(context: BoltContext) -> Team:
    """The workspace whose token answers the request: the one bolt authorized it for (auth.test of the token, the
    installation's team), else the one the request names. Its rows are the only ones the request sees."""
    authorized = context.authorize_result
    team_id = (authorized.team_id if authorized else None) or context.team_id
    enterprise_id = (authorized.enterprise_id if authorized else None) or context.enterprise_id
    return Team.of(team_id, enterprise_id)
