"""A model whose replies are kept in the store: the same request again is answered from there, over the real openai
client and a Chat Completions server on 127.0.0.1."""
from __future__ import annotations

import json

import pytest
from servers.openai_api import SCHEMA_REFUSALS, FakeOpenAI, Reply

from bot.model.cached import CachedLLM
from bot.model.client import LLMError, SchemaRefused

SCHEMA = {"name": "answer_choice", "schema": {"type": "object"}, "strict": False}


@pytest.fixture
def api():
    with FakeOpenAI(lambda request: Reply(f"Reply to: {request.last}")) as server:
        yield server


def _model(db, api, model: str = "m1", prompt: str = "answer-3") -> CachedLLM:
    return CachedLLM(db, prompt, model, base_url=api.base_url, max_retries=0)


def test_the_same_request_again_is_answered_from_the_store(db, api):
    with _model(db, api) as first:
        asked = first.complete("system", "why?", 100)
    with _model(db, api) as again:  # a later run: a new client over the same store
        kept = again.complete("system", "why?", 100)
    assert api.calls == 1
    assert (kept.text, kept.tokens_in, kept.tokens_out) == (asked.text, asked.tokens_in, asked.tokens_out) == (
        "Reply to: why?", api.tokens_in, api.tokens_out)
    assert (first.calls, first.served, again.calls, again.served) == (1, 0, 0, 1)
    assert first.spent() == f"model m1: 1 call, {api.tokens_in:,} tokens in, {api.tokens_out:,} out; 0 replies served from the store"
    assert again.spent() == "model m1: 0 calls, 0 tokens in, 0 out; 1 reply served from the store"


@pytest.mark.parametrize("change", [
    {"model": "m2"}, {"prompt": "answer-4"}, {"user": "why not?"}, {"system": "other"}, {"max_tokens": 200},
    {"json_schema": SCHEMA}, {"earlier": [("before?", "yes")]},
], ids=lambda change: next(iter(change)))
def test_another_model_prompt_version_or_request_asks_again(db, api, change):
    with _model(db, api) as model:
        model.complete("system", "why?", 100)
    request = {"system": "system", "user": "why?", "max_tokens": 100, "json_schema": None, "earlier": ()} | {
        key: value for key, value in change.items() if key not in ("model", "prompt")}
    with _model(db, api, change.get("model", "m1"), change.get("prompt", "answer-3")) as model:
        model.complete(request.pop("system"), request.pop("user"), **request)
    assert api.calls == 2


def test_a_refusal_of_structured_output_is_kept_other_failures_are_not(db, api):
    api.json_schema = "openai"
    for _ in range(2):
        with _model(db, api) as model, pytest.raises(SchemaRefused, match="not supported with this model"):
            model.complete("system", "pick", 100, json_schema=SCHEMA)
    assert api.calls == 1
    api.script(Reply(status=400, raw=json.dumps({"error": {"message": "context too long"}}).encode()))
    with _model(db, api) as model:
        with pytest.raises(LLMError, match="context too long"):
            model.complete("system", "long", 100)
        assert model.complete("system", "long", 100).text == "Reply to: long"  # asked again, then kept
        assert (model.calls, model.failed, model.served) == (2, 1, 0)
    assert api.calls == 3
    assert SCHEMA_REFUSALS["openai"]["error"]["message"] in db.execute("select refused from reply_cache").fetchall()[0][0]
