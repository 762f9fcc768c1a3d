"""Any OpenAI-compatible chat model (OpenAI, vLLM, llama.cpp, Ollama...) behind one small interface.

Retries (429 with Retry-After, 5xx, timeouts, dropped connections) are the openai
client's own; this module bounds how many calls run at once, reports usage, keeps
reasoning out of the reply, and turns every failure into one LLMError line.
The key goes to the origin of the base URL only: the client's httpx follows
redirects, so a redirect elsewhere is refused before it is sent.
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.config import LLM_TIMEOUT_SECONDS, Settings
from store.tables.model_calls import ModelCall
from store.text.errors import one_line
from store.text.origins import elsewhere, origin
from store.text.safe import mask_secrets

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam

# Local servers (vLLM, llama.cpp) accept any key, but the client insists on one.
NO_KEY = "EMPTY"
MAX_RETRIES = 2
# What a 400 says when the server does not take a JSON schema for the reply: OpenAI names the
# parameter, vLLM and SGLang echo pydantic's path to it, others call it an unsupported parameter.
_SCHEMA_REFUSAL = re.compile(r"response_format|json_schema|json schema|structured output|unsupported parameter", re.I)


@dataclass
class Completion:
    text: str  # the answer alone: reasoning, in the content or beside it, is left out
    tokens_in: int
    tokens_out: int  # reasoning included
    reasoning_tokens: int
    model: str
    seconds: float

    def call(self, outcome: str = "ok", error: str | None = None) -> ModelCall:
        """This completion as a ledger entry (`outcome` unparsed when its text could not be used)."""
        return ModelCall(outcome, self.tokens_in, self.tokens_out, self.seconds, error, self.reasoning_tokens)


class LLMError(Exception):
    """A model call failed; str() is one line naming the model and what went wrong.

    `transient` is True when the server, not the request, is at fault (unreachable, timed
    out, rate-limited, 5xx): the same request may well succeed later.
    """

    def __init__(self, message: str, *, transient: bool = False, seconds: float = 0.0) -> None:
        super().__init__(message)
        self.transient = transient
        self.seconds = seconds

    def call(self) -> ModelCall:
        """This failure as a ledger entry."""
        return ModelCall("error", 0, 0, self.seconds, str(self))


class SchemaRefused(LLMError):
    """The server does not take `response_format` with a JSON schema; ask for text instead."""


def estimate_tokens(text: str) -> int:
    """Tokens in `text` without a tokenizer: about four characters a token for English and code.

    Real tokenizers land within roughly 20% of this on PR text, which is close
    enough for a budget that leaves room for the reply.
    """
    return (len(text) + 3) // 4


class LLM:
    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = LLM_TIMEOUT_SECONDS,
        max_retries: int = MAX_RETRIES,
        concurrency: int = 4,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        # Imported here: the client takes most of a second to load, and only a configured model needs it.
        import openai

        self._openai = openai
        # openai's own httpx client, with its defaults, and a hook that sees every request before it is sent.
        http = openai.DefaultHttpxClient(event_hooks={"request": [self._only_own_origin]})
        self._client = openai.OpenAI(
            api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout, max_retries=max_retries, http_client=http
        )
        # One bound for every caller sharing this model: summaries, answers, Slack threads.
        self._slots = threading.BoundedSemaphore(concurrency)
        # OpenAI's reasoning models take only max_completion_tokens; most other
        # servers know only max_tokens. Start with the common one, switch once if refused.
        self._limit_param = "max_tokens"

    @property
    def endpoint(self) -> str:
        """The base URL calls go to, also when the client's default (OpenAI) is used."""
        return mask_secrets(str(self._client.base_url).rstrip("/"))

    def complete(
        self,
        system: str,
        user: str,
        max_tokens: int = 800,
        *,
        json_schema: dict[str, Any] | None = None,
        earlier: Sequence[tuple[str, str]] = (),
    ) -> Completion:
        """One chat completion; raises LLMError on any failure, including a reply with no answer in it.

        `json_schema` ({"name", "schema", "strict"}) asks for structured output; a server
        that refuses it raises SchemaRefused. `earlier` holds (user, assistant) turns that
        come before `user`, for a follow-up in the same conversation.
        """
        messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": system}]
        for asked, answered in earlier:
            messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": answered}]
        messages.append({"role": "user", "content": user})
        extra = {"response_format": {"type": "json_schema", "json_schema": json_schema}} if json_schema else {}
        started = time.monotonic()
        with self._slots:
            try:
                response = self._create(messages, max_tokens, extra)
            except self._openai.OpenAIError as exc:
                seconds = time.monotonic() - started
                if json_schema and self._refuses_schema(exc):
                    raise SchemaRefused(f"model {self.model}: {self._describe(exc)}", seconds=seconds) from None
                raise LLMError(
                    f"model {self.model}: {self._describe(exc)}", transient=self._transient(exc), seconds=seconds
                ) from None
            except ValueError as exc:  # a body that is not the JSON the API promises
                raise LLMError(
                    f"model {self.model}: unreadable answer: {one_line(exc)}", seconds=time.monotonic() - started
                ) from None
        seconds = time.monotonic() - started
        choices = getattr(response, "choices", None) or []
        message = choices[0].message if choices else None
        content = (getattr(message, "content", None) or "") if message else ""
        text = without_reasoning(content)
        # vLLM and SGLang put parsed reasoning beside the content (reasoning_content, newer: reasoning).
        reasoning = _reasoning_field(message) + content.replace(text, "", 1)
        if not text:
            said = "only reasoning, no answer" if reasoning.strip() else "an empty reply"
            raise LLMError(f"model {self.model}: {said}", seconds=seconds)
        usage = getattr(response, "usage", None)
        details = getattr(usage, "completion_tokens_details", None)
        reported = getattr(details, "reasoning_tokens", None)
        return Completion(
            text=text,
            tokens_in=getattr(usage, "prompt_tokens", None) or estimate_tokens(system + user),
            tokens_out=getattr(usage, "completion_tokens", None) or estimate_tokens(text + reasoning),
            # Some servers report 0 beside reasoning they did send; then the text seen is the better count.
            reasoning_tokens=reported or estimate_tokens(reasoning.strip()),
            model=self.model,
            seconds=seconds,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _only_own_origin(self, request: Any) -> None:
        """A request to another origin than the base URL's (a redirect) is refused. The server is at fault,
        so the error is a connection error; being an OpenAIError, the client raises it as it is, without retrying."""
        home = str(self._client.base_url)
        there = elsewhere(str(request.url), home)
        if there:
            raise self._openai.APIConnectionError(
                message=f"redirected to {there}; only {origin(home)} gets the key, so it was not followed",
                request=request,
            )

    def _create(self, messages: list[ChatCompletionMessageParam], max_tokens: int, extra: dict[str, Any]):
        try:
            # One mapping: the limit's name is known only at run time, so its value is no typed keyword.
            return self._client.chat.completions.create(
                model=self.model, messages=messages, **{self._limit_param: max_tokens, **extra}
            )
        except self._openai.BadRequestError as exc:
            if self._limit_param == "max_tokens" and "max_completion_tokens" in str(exc):
                self._limit_param = "max_completion_tokens"
                return self._create(messages, max_tokens, extra)
            raise

    def _describe(self, exc: openai.OpenAIError) -> str:
        where = mask_secrets(self.base_url or "the OpenAI API")
        if isinstance(exc, self._openai.APITimeoutError):
            return f"no answer from {where} within {self.timeout:g}s (after retries)"
        if isinstance(exc, self._openai.APIConnectionError):
            return f"cannot reach {where}: {one_line(exc.__cause__ or exc)}"
        if isinstance(exc, self._openai.APIStatusError):
            return f"{where} answered HTTP {exc.status_code}: {one_line(_error_message(exc))}"
        return f"unexpected answer from {where}: {one_line(exc)}"

    def _refuses_schema(self, exc: openai.OpenAIError) -> bool:
        if not isinstance(exc, (self._openai.BadRequestError, self._openai.UnprocessableEntityError)):
            return False
        return bool(_SCHEMA_REFUSAL.search(f"{_error_message(exc)} {exc.body}"))

    def _transient(self, exc: openai.OpenAIError) -> bool:
        # Timeouts are connection errors too.
        if isinstance(exc, (self._openai.APIConnectionError, self._openai.RateLimitError)):
            return True
        return isinstance(exc, self._openai.APIStatusError) and exc.status_code >= 500


def _reasoning_field(message: Any) -> str:
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


# A reasoning block's tags; not when quoted in backticks, as a summary of a PR about them may be.
_REASONING_TAG = re.compile(r"(?<!`)<(/?)(think|thinking|reasoning)>(?!`)", re.IGNORECASE)
# gpt-oss served without a reasoning parser writes its channels into the content.
_FINAL_CHANNEL = "<|channel|>final<|message|>"
_HARMONY_END = re.compile(r"<\|(?:return|end)\|>\s*$")


def without_reasoning(text: str) -> str:
    """`text` without reasoning blocks: <think>...</think> (or thinking, reasoning) anywhere,
    everything before a closing tag that has no opening one (the chat template opened it),
    an unclosed block to the end, and gpt-oss's analysis channel."""
    final = text.rfind(_FINAL_CHANNEL)
    if final >= 0:
        text = _HARMONY_END.sub("", text[final + len(_FINAL_CHANNEL):])
    kept: list[str] = []
    inside = False
    position = 0
    for tag in _REASONING_TAG.finditer(text):
        closing = bool(tag.group(1))
        if not closing and not inside:
            kept.append(text[position:tag.start()])
            inside = True
        elif closing:
            if not inside:
                kept = []  # all so far was reasoning
            inside = False
            position = tag.end()
    if not inside:
        kept.append(text[position:])
    return "".join(kept).strip()


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return exc.message


def unconfigured_reason(settings: Settings) -> str | None:
    """Why no model is configured, as advice; None when one is.

    A model counts as configured when PRDIGEST_MODEL names it and there is
    somewhere to send it: an OPENAI_API_KEY (OpenAI itself) or an
    OPENAI_BASE_URL (any compatible server; local ones need no key).
    """
    if not settings.model:
        return "no model configured: set PRDIGEST_MODEL, plus OPENAI_API_KEY or OPENAI_BASE_URL"
    if not (settings.openai_api_key or settings.openai_base_url):
        return f"PRDIGEST_MODEL is {settings.model!r} but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set"
    return None


def llm_from_settings(settings: Settings) -> LLM | None:
    """The configured model, or None: then every feature works without one (extractive summaries)."""
    if unconfigured_reason(settings):
        return None
    return LLM(settings.model or "", **llm_options(settings))


def llm_options(settings: Settings) -> dict[str, Any]:
    """How the configured model is reached: its key, base URL, timeout and how many calls run at once."""
    return {
        "api_key": settings.openai_api_key,
        "base_url": settings.openai_base_url,
        "timeout": float(settings.llm_timeout),
        "concurrency": settings.llm_concurrency,
    }
