"""A model whose replies are kept in the store: the same request again is answered from there, at no cost.

The key is the model, the prompt version and a digest of the exact request, so a new prompt, model or
question asks afresh. A failure is not kept, except a server's refusal of structured output, which it
gives every time. The model counts what it spent and what the store served.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlite_utils import Database

from bot.config import Settings
from bot.model.client import LLM, Completion, LLMError, SchemaRefused, llm_options, unconfigured_reason
from store.tables.reply_cache import KeptReply, keep_reply, kept_reply, request_key
from store.text.prose import plural


class CachedLLM(LLM):
    def __init__(self, store: Database, prompt_version: str, model: str, **options: Any) -> None:
        super().__init__(model, **options)
        self.store = store
        self.prompt_version = prompt_version
        self.calls = 0  # requests made, failed ones included
        self.failed = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.served = 0  # replies the store gave instead

    def complete(
        self,
        system: str,
        user: str,
        max_tokens: int = 800,
        *,
        json_schema: dict[str, Any] | None = None,
        earlier: Sequence[tuple[str, str]] = (),
    ) -> Completion:
        request = request_key({"system": system, "user": user, "max_tokens": max_tokens, "json_schema": json_schema,
                               "earlier": [list(turn) for turn in earlier]})
        kept = kept_reply(self.store, self.model, self.prompt_version, request)
        if kept is not None:
            self.served += 1
            if kept.refused is not None:
                raise SchemaRefused(kept.refused)
            return Completion(kept.text, kept.tokens_in, kept.tokens_out, kept.reasoning_tokens, self.model, 0.0)
        self.calls += 1
        try:
            completion = super().complete(system, user, max_tokens, json_schema=json_schema, earlier=earlier)
        except SchemaRefused as exc:
            keep_reply(self.store, self.model, self.prompt_version, request, KeptReply("", 0, 0, refused=str(exc)))
            raise
        except LLMError:
            self.failed += 1
            raise
        self.tokens_in += completion.tokens_in
        self.tokens_out += completion.tokens_out
        kept = KeptReply(completion.text, completion.tokens_in, completion.tokens_out, completion.reasoning_tokens)
        keep_reply(self.store, self.model, self.prompt_version, request, kept)
        return completion

    def spent(self) -> str:
        """What this model cost, in one line."""
        failed = f" ({self.failed} failed)" if self.failed else ""
        served = f"{self.served} {'reply' if self.served == 1 else 'replies'}"
        return (f"model {self.model}: {plural(self.calls, 'call')}{failed}, {self.tokens_in:,} tokens in, "
                f"{self.tokens_out:,} out; {served} served from the store")


def cached_llm_from_settings(settings: Settings, store: Database, prompt_version: str) -> CachedLLM | None:
    """The configured model, its replies kept in `store`; None when no model is configured."""
    if unconfigured_reason(settings):
        return None
    return CachedLLM(store, prompt_version, settings.model or "", **llm_options(settings))
