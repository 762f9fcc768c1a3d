"""Model replies kept by the exact request (`reply_cache`): the same request to the same model, under the same
prompt version, is answered from the store instead of by another call."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sqlite_utils import Database

from store.days import now_text
from store.db import write_transaction


@dataclass(frozen=True)
class KeptReply:
    text: str  # the reply without its reasoning; empty when refused
    tokens_in: int
    tokens_out: int
    reasoning_tokens: int = 0
    refused: str | None = None  # the server's refusal of structured output, in one line


def request_key(request: Mapping[str, Any]) -> str:
    """A digest of everything a request sends: its messages, limits and the schema asked for."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def kept_reply(db: Database, model: str, prompt_version: str, request: str) -> KeptReply | None:
    row = db.execute(
        "select text, tokens_in, tokens_out, reasoning_tokens, refused from reply_cache "
        "where model = ? and prompt_version = ? and request = ?",
        [model, prompt_version, request],
    ).fetchone()
    return KeptReply(*row) if row else None


def keep_reply(db: Database, model: str, prompt_version: str, request: str, reply: KeptReply) -> None:
    with write_transaction(db):
        db.table("reply_cache").upsert(
            {"model": model, "prompt_version": prompt_version, "request": request, **asdict(reply), "at": now_text()},
            pk=("model", "prompt_version", "request"),
        )
