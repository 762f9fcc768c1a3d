"""What every reply needs, shared by all requests of one process: settings, the store and the model."""
from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING

from sqlite_utils import Database

from bot.config import Settings
from store.db import open_db

if TYPE_CHECKING:
    from bot.model.client import LLM

log = logging.getLogger(__name__)


class Runtime:
    """Settings, one store connection per thread, and the model client made on first use.

    Slack listeners run on a thread pool; a connection per thread keeps sqlite's
    transactions from interleaving between requests.
    """

    def __init__(self, settings: Settings, create: bool = True) -> None:
        self.settings = settings
        self.create = create  # a missing store is made, not refused (`serve` makes one, `run` and `shell` read)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._llm_made = False
        self._llm: LLM | None = None

    @property
    def db(self) -> Database:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = open_db(self.settings.db_path, self.settings.busy_timeout, self.create)
        return db

    @property
    def llm(self) -> LLM | None:
        """The configured model, or None; made on first use because the client takes a second to import."""
        with self._lock:
            if not self._llm_made:
                from bot.model.client import llm_from_settings

                try:
                    self._llm = llm_from_settings(self.settings)
                except Exception as exc:  # answers without a model beat no answers
                    log.warning("model unavailable, answering without it: %s", exc)
                self._llm_made = True
            return self._llm

    def now(self) -> datetime:
        return datetime.now(self.settings.timezone)

    def close(self) -> None:
        """Close this thread's connection (other threads' close with their thread)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
