"""A client for OpenAI-compatible chat endpoints (vLLM, SGLang, llama.cpp servers) as a Policy.

Built on the `openai` package's async client, which retries connection errors, timeouts, 408,
409, 429 and 5xx answers with exponential backoff (honouring `Retry-After`); an asyncio
semaphore bounds how many requests are in flight.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Sequence

from rlvr_envs.core.policy import Completion, Messages, SamplingParams

#: statuses the openai client retries before giving up (its own rule, restated for the message)
RETRY_STATUS = {408, 409, 429} | set(range(500, 600))


class EndpointError(RuntimeError):
    """The endpoint refused or failed a request after every retry."""


class OpenAIChatPolicy:
    """`generate` sends one chat.completions request per conversation (with `n`)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 concurrency: int = 8, max_retries: int = 4, timeout: float = 120.0,
                 extra_body: dict[str, Any] | None = None):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if concurrency < 1 or max_retries < 0:
            raise ValueError("concurrency must be >= 1 and max_retries >= 0")
        self.base_url = base_url.rstrip("/")
        self.model, self.api_key = model, api_key
        self.concurrency, self.max_retries, self.timeout = concurrency, max_retries, timeout
        self.extra_body = dict(extra_body or {})
        self.name = f"openai:{self.base_url}#{model}"

    def _request(self, messages: Messages, params: SamplingParams) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": list(messages), "n": params.n,
                                   "temperature": params.temperature, "top_p": params.top_p,
                                   "max_tokens": params.max_completion_length}
        if params.seed is not None:
            request["seed"] = params.seed
        if params.stop:
            request["stop"] = list(params.stop)
        if self.extra_body:
            request["extra_body"] = self.extra_body
        return request

    async def _create(self, client: Any, semaphore: asyncio.Semaphore,
                      request: dict[str, Any]) -> Any:
        import openai

        where = f"{self.base_url}/chat/completions"
        async with semaphore:
            try:
                return await client.chat.completions.create(**request)
            except openai.APIStatusError as err:
                detail = f"HTTP {err.status_code}: {str(err.message)[:200]}"
                if err.status_code in RETRY_STATUS:
                    raise EndpointError(f"{where} failed after {self.max_retries + 1} attempts; "
                                        f"last error: {detail}") from None
                raise EndpointError(f"{where} answered {detail}") from None
            except (openai.APIConnectionError, openai.APITimeoutError) as err:
                raise EndpointError(f"{where} failed after {self.max_retries + 1} attempts; "
                                    f"last error: {type(err).__name__}: {err}") from None

    async def agenerate(self, batch: Sequence[Messages], params: SamplingParams
                        ) -> list[list[Completion]]:
        from openai import AsyncOpenAI

        semaphore = asyncio.Semaphore(self.concurrency)
        async with AsyncOpenAI(base_url=self.base_url, api_key=self.api_key or "unused",
                               max_retries=self.max_retries, timeout=self.timeout) as client:
            answers = await asyncio.gather(*(self._create(client, semaphore,
                                                          self._request(m, params))
                                             for m in batch))
        return [self._completions(a, params.n) for a in answers]

    def _completions(self, answer: Any, n: int) -> list[Completion]:
        choices = sorted(answer.choices or [], key=lambda c: c.index or 0)
        if len(choices) != n:
            raise EndpointError(f"asked for n={n} choices, the endpoint returned {len(choices)}")
        tokens = answer.usage.completion_tokens if (answer.usage and n == 1) else None
        return [Completion(text=(c.message.content if c.message else None) or "",
                           num_tokens=tokens, finish_reason=c.finish_reason or "stop")
                for c in choices]

    def generate(self, batch: Sequence[Messages], params: SamplingParams, **_: object
                 ) -> list[list[Completion]]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.agenerate(batch, params))
        result: list[Any] = []  # called from inside an event loop: run ours on a thread
        thread = threading.Thread(target=lambda: result.append(
            _capture(lambda: asyncio.run(self.agenerate(batch, params)))))
        thread.start()
        thread.join()
        outcome = result[0]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def _capture(fn: Any) -> Any:
    try:
        return fn()
    except BaseException as err:  # re-raised in the caller's thread
        return err
