"""The model client, driven through the real openai package against a Chat Completions server on 127.0.0.1."""
from __future__ import annotations

import json
import socket
import threading

import pytest
from servers.openai_api import SCHEMA_REFUSALS, FakeOpenAI, Reply, rate_limited

from bot.config import Settings
from bot.model.client import LLM, LLMError, SchemaRefused, llm_from_settings, unconfigured_reason


@pytest.fixture
def api():
    with FakeOpenAI() as server:
        yield server


def test_a_completion_carries_text_and_usage(api):
    api.script(Reply("All good."))
    with LLM("tiny-model", base_url=api.base_url) as llm:
        done = llm.complete("be brief", "say something", max_tokens=50)
    assert done.text == "All good." and done.model == "tiny-model"
    assert (done.tokens_in, done.tokens_out) == (api.tokens_in, api.tokens_out) and done.tokens_in > 0
    request = api.requests[0]
    assert request.body["model"] == "tiny-model" and request.body["max_tokens"] == 50
    assert (request.system, request.user) == ("be brief", "say something")
    # A local server needs no key; the client still sends a placeholder one.
    assert request.headers["authorization"] == "Bearer EMPTY"


def test_the_key_is_sent_when_given(api):
    with LLM("m", api_key="sk-test-123", base_url=api.base_url) as llm:
        llm.complete("s", "u")
    assert api.requests[0].headers["authorization"] == "Bearer sk-test-123"


def test_missing_usage_is_estimated(api):
    api.script(Reply("x" * 400, usage=False))
    with LLM("m", base_url=api.base_url) as llm:
        done = llm.complete("s" * 40, "u" * 360)
    assert (done.tokens_in, done.tokens_out) == (100, 100)


def test_429_waits_for_retry_after_then_succeeds(api):
    api.script(rate_limited("0.6"), Reply("after the wait"))
    with LLM("m", base_url=api.base_url) as llm:
        done = llm.complete("s", "u")
    assert done.text == "after the wait" and len(api.requests) == 2
    assert api.requests[1].at - api.requests[0].at >= 0.55


def test_a_slow_model_times_out_with_one_line(api):
    never = threading.Event()  # the server answers neither call while the client waits: only its timeout can end it
    api.script(Reply("late", gate=never), Reply("late", gate=never))
    try:
        with LLM("m", base_url=api.base_url, timeout=0.3, max_retries=1) as llm, pytest.raises(LLMError) as caught:
            llm.complete("s", "u")
    finally:
        never.set()
    assert str(caught.value).startswith("model m: no answer from http://127.0.0.1:")
    assert "within 0.3s" in str(caught.value) and "\n" not in str(caught.value)
    assert len(api.requests) == 2  # the client's own retry, then the error


def test_server_errors_are_retried_then_reported(api):
    error = json.dumps({"error": {"message": "engine\noverloaded"}}).encode()
    api.script(Reply(status=503, raw=error), Reply(status=503, raw=error))
    with LLM("m", base_url=api.base_url, max_retries=1) as llm, pytest.raises(LLMError) as caught:
        llm.complete("s", "u")
    assert str(caught.value).endswith("answered HTTP 503: engine overloaded")
    assert len(api.requests) == 2


@pytest.mark.parametrize(
    "reply",
    [Reply(raw=b"{not json"), Reply(""), Reply("   \n"), Reply(raw=b'{"choices": []}')],
    ids=["broken-json", "empty", "blank", "no-choices"],
)
def test_unusable_answers_are_errors(api, reply):
    api.script(reply)
    with LLM("m", base_url=api.base_url, max_retries=0) as llm, pytest.raises(LLMError) as caught:
        llm.complete("s", "u")
    assert str(caught.value).startswith("model m: ") and "\n" not in str(caught.value)


def test_nothing_listening_is_one_line():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with LLM("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0) as llm, pytest.raises(LLMError) as caught:
        llm.complete("s", "u")
    assert f"cannot reach http://127.0.0.1:{port}/v1" in str(caught.value)


def test_switches_to_max_completion_tokens_when_the_model_asks(api):
    refusal = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                    "Use 'max_completion_tokens' instead.", "type": "invalid_request_error"}}
    api.script(Reply(status=400, raw=json.dumps(refusal).encode()), Reply("one"), Reply("two"))
    with LLM("m", base_url=api.base_url) as llm:
        assert llm.complete("s", "u", max_tokens=77).text == "one"
        assert llm.complete("s", "u", max_tokens=77).text == "two"
    first, second, third = (request.body for request in api.requests)
    assert first["max_tokens"] == 77 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 77 and "max_tokens" not in second
    assert third["max_completion_tokens"] == 77


# ---------------------------------------------------------------- reasoning and structured output

THINKING = "The user asks for a summary; the diff shows a scheduler change. " * 4


@pytest.mark.parametrize(
    "reply",
    [Reply("The answer.", reasoning=THINKING), Reply(f"<think>{THINKING}</think>\n\nThe answer."),
     Reply(f"{THINKING}</think>The answer."), Reply(f"<thinking>\n{THINKING}\n</thinking>\nThe answer.")],
    ids=["beside-the-content", "think-block", "template-opened", "thinking-tags"],
)
def test_reasoning_never_reaches_the_text_and_its_tokens_are_counted(api, reply):
    api.script(reply)
    with LLM("m", base_url=api.base_url) as llm:
        done = llm.complete("s", "u")
    assert done.text == "The answer."
    assert abs(done.reasoning_tokens - len(THINKING) / 4) <= 8  # the tags are generated tokens too
    assert done.tokens_out == api.tokens_out and done.call().reasoning_tokens == done.reasoning_tokens


def test_the_servers_own_reasoning_count_is_taken(api):
    api.script(Reply("The answer.", reasoning="short"))
    with LLM("m", base_url=api.base_url) as llm:
        done = llm.complete("s", "u")
    assert done.reasoning_tokens == 1  # the server's count (len // 4, at least 1), not an estimate


@pytest.mark.parametrize("reply", [Reply("", reasoning=THINKING), Reply(f"<think>{THINKING}")], ids=["beside", "unclosed"])
def test_a_reply_of_only_reasoning_is_an_error(api, reply):
    api.script(reply)
    with LLM("m", base_url=api.base_url, max_retries=0) as llm, pytest.raises(LLMError, match="only reasoning, no answer"):
        llm.complete("s", "u")


def test_a_schema_is_sent_as_response_format(api):
    schema = {"name": "x", "strict": True, "schema": {"type": "object"}}
    with LLM("m", base_url=api.base_url) as llm:
        llm.complete("s", "u", json_schema=schema)
        llm.complete("s", "u")
    assert api.requests[0].body["response_format"] == {"type": "json_schema", "json_schema": schema}
    assert "response_format" not in api.requests[1].body


@pytest.mark.parametrize("style", SCHEMA_REFUSALS)
def test_a_refused_schema_is_told_apart_from_other_bad_requests(api, style):
    schema = {"name": "x", "schema": {}}
    with FakeOpenAI(json_schema=style) as refusing, LLM("m", base_url=refusing.base_url) as llm:
        with pytest.raises(SchemaRefused, match=r"answered HTTP 400: .*(response_format|json_object)") as caught:
            llm.complete("s", "u", json_schema=schema)
        assert not caught.value.transient and caught.value.call().outcome == "error"
        assert llm.complete("s", "u").text  # without a schema the same server answers
    api.script(Reply(status=400, raw=json.dumps({"error": {"message": "prompt is too long"}}).encode()))
    with LLM("m", base_url=api.base_url) as llm, pytest.raises(LLMError) as other:
        llm.complete("s", "u", json_schema=schema)
    assert not isinstance(other.value, SchemaRefused)


def test_server_failures_are_transient_and_bad_requests_are_not(api):
    api.script(*[Reply(status=503, raw=b'{"error": {"message": "busy"}}')] * 2,
               Reply(status=404, raw=b'{"error": {"message": "no such model"}}'))
    with LLM("m", base_url=api.base_url, max_retries=1) as llm:
        with pytest.raises(LLMError) as busy:
            llm.complete("s", "u")
        with pytest.raises(LLMError) as missing:
            llm.complete("s", "u")
    assert busy.value.transient and not missing.value.transient
    assert busy.value.call().error == str(busy.value) and busy.value.call().tokens_in == 0


def test_concurrent_calls_are_bounded(api):
    # Held until two are in flight at once, then 0.15 s more: time enough for a third to show if the bound let it.
    api.responder = api.together(2, lambda request: Reply("ok", delay=0.15))
    with LLM("m", base_url=api.base_url, concurrency=2) as llm:
        threads = [threading.Thread(target=llm.complete, args=("s", "u")) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(api.requests) == 6 and api.max_in_flight == 2


@pytest.mark.parametrize(
    ("env", "configured", "reason"),
    [
        ({}, False, "no model configured"),
        ({"OPENAI_API_KEY": "sk-x"}, False, "no model configured"),
        ({"PRDIGEST_MODEL": "gpt-x"}, False, "neither OPENAI_API_KEY nor OPENAI_BASE_URL"),
        ({"PRDIGEST_MODEL": "gpt-x", "OPENAI_API_KEY": "sk-x"}, True, None),
        ({"PRDIGEST_MODEL": "qwen", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, True, None),
    ],
)
def test_what_configured_means(env, configured, reason):
    settings = Settings.from_env({"PRDIGEST_DB": "/tmp/unused.db", **env})
    llm = llm_from_settings(settings)
    assert (llm is not None) == configured
    if reason:
        assert reason in unconfigured_reason(settings)
    else:
        assert unconfigured_reason(settings) is None
    if llm:
        assert llm.model == env["PRDIGEST_MODEL"]
        llm.close()
