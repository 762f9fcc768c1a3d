"""Any OpenAI-compatible chat model (OpenAI, vLLM, llama.cpp, Ollama...) behind one small interface.

Retries (429 with Retry-After, 5xx, timeouts, dropped connections) are the openai
client's own; this module bounds how many calls run at once, reports usage, and turns
every failure into one LLMError line.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config import Settings

if TYPE_CHECKING:
    import openai

# Local servers (vLLM, llama.cpp) accept any key, but the client insists on one.
NO_KEY = "EMPTY"
MAX_RETRIES = 2


@dataclass
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    model: str


class LLMError(Exception):
    """A model call failed; str() is one line naming the model and what went wrong."""


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
        timeout: float = 120.0,
        max_retries: int = MAX_RETRIES,
        concurrency: int = 4,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        # Imported here: the client takes most of a second to load, and only a configured model needs it.
        import openai

        self._openai = openai
        self._client = openai.OpenAI(
            api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        # One bound for every caller sharing this model: summaries, answers, Slack threads.
        self._slots = threading.BoundedSemaphore(concurrency)
        # OpenAI's reasoning models take only max_completion_tokens; most other
        # servers know only max_tokens. Start with the common one, switch once if refused.
        self._limit_param = "max_tokens"

    def complete(self, system: str, user: str, max_tokens: int = 800) -> Completion:
        """One chat completion; raises LLMError on any failure, including an empty reply."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        with self._slots:
            try:
                response = self._create(messages, max_tokens)
            except self._openai.OpenAIError as exc:
                raise LLMError(f"model {self.model}: {self._describe(exc)}") from None
            except ValueError as exc:  # a body that is not the JSON the API promises
                raise LLMError(f"model {self.model}: unreadable answer: {_one_line(exc)}") from None
        choices = getattr(response, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        if not text.strip():
            raise LLMError(f"model {self.model}: empty reply")
        usage = getattr(response, "usage", None)
        tokens_in = getattr(usage, "prompt_tokens", None) or estimate_tokens(system + user)
        tokens_out = getattr(usage, "completion_tokens", None) or estimate_tokens(text)
        return Completion(text=text, tokens_in=tokens_in, tokens_out=tokens_out, model=self.model)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self, messages: list[dict[str, str]], max_tokens: int):
        try:
            return self._client.chat.completions.create(
                model=self.model, messages=messages, **{self._limit_param: max_tokens}
            )
        except self._openai.BadRequestError as exc:
            if self._limit_param == "max_tokens" and "max_completion_tokens" in str(exc):
                self._limit_param = "max_completion_tokens"
                return self._create(messages, max_tokens)
            raise

    def _describe(self, exc: openai.OpenAIError) -> str:
        where = self.base_url or "the OpenAI API"
        if isinstance(exc, self._openai.APITimeoutError):
            return f"no answer from {where} within {self.timeout:g}s (after retries)"
        if isinstance(exc, self._openai.APIConnectionError):
            return f"cannot reach {where}: {_one_line(exc.__cause__ or exc)}"
        if isinstance(exc, self._openai.APIStatusError):
            return f"{where} answered HTTP {exc.status_code}: {_one_line(_error_message(exc))}"
        return f"unexpected answer from {where}: {_one_line(exc)}"


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return exc.message


def _one_line(value: object) -> str:
    return " ".join(str(value).split())[:200]


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
    return LLM(
        settings.model or "",
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        timeout=float(settings.llm_timeout),
        concurrency=settings.llm_concurrency,
    )
