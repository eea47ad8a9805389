"""A client for OpenAI-compatible chat endpoints (vLLM, SGLang, llama.cpp servers) as a Policy.

Requests run concurrently (an asyncio semaphore bounds how many are in flight) and are retried
with exponential backoff on connection errors, timeouts, 429 and 5xx answers. Needs `httpx`.
"""

from __future__ import annotations

import asyncio
import random
import threading
from typing import Any, Sequence

from rlvr_envs.agents.policy import Completion, Messages, SamplingParams

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class EndpointError(RuntimeError):
    """The endpoint refused or failed a request after every retry."""


class OpenAIChatPolicy:
    """`generate` posts one /chat/completions request per conversation (with `n`)."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None,
                 concurrency: int = 8, max_retries: int = 4, timeout: float = 120.0,
                 backoff: float = 0.5, extra_body: dict[str, Any] | None = None):
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if concurrency < 1 or max_retries < 0:
            raise ValueError("concurrency must be >= 1 and max_retries >= 0")
        self.base_url = base_url.rstrip("/")
        self.model, self.api_key = model, api_key
        self.concurrency, self.max_retries = concurrency, max_retries
        self.timeout, self.backoff = timeout, backoff
        self.extra_body = dict(extra_body or {})
        self.name = f"openai:{self.base_url}#{model}"

    def _payload(self, messages: Messages, params: SamplingParams) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "n": params.n,
                                "temperature": params.temperature, "top_p": params.top_p,
                                "max_tokens": params.max_new_tokens, **self.extra_body}
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        return body

    async def _post(self, client: Any, semaphore: asyncio.Semaphore, body: dict[str, Any]
                    ) -> dict[str, Any]:
        import httpx

        last_error = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1) * (1 + random.random() / 4))
            async with semaphore:
                try:
                    response = await client.post("/chat/completions", json=body)
                except (httpx.TransportError, httpx.TimeoutException) as err:
                    last_error = f"{type(err).__name__}: {err}"
                    continue
            if response.status_code in RETRY_STATUS:
                last_error = f"HTTP {response.status_code}: {response.text[:200]}"
                continue
            if response.status_code != 200:
                raise EndpointError(f"{self.base_url}/chat/completions answered HTTP "
                                    f"{response.status_code}: {response.text[:300]}")
            return response.json()
        raise EndpointError(f"{self.base_url}/chat/completions failed after "
                            f"{self.max_retries + 1} attempts; last error: {last_error}")

    async def agenerate(self, batch: Sequence[Messages], params: SamplingParams
                        ) -> list[list[Completion]]:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        semaphore = asyncio.Semaphore(self.concurrency)
        async with httpx.AsyncClient(base_url=self.base_url, headers=headers,
                                     timeout=self.timeout) as client:
            answers = await asyncio.gather(*(self._post(client, semaphore,
                                                        self._payload(m, params)) for m in batch))
        return [self._completions(a, params.n) for a in answers]

    def _completions(self, answer: dict[str, Any], n: int) -> list[Completion]:
        choices = sorted(answer.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != n:
            raise EndpointError(f"asked for n={n} choices, the endpoint returned {len(choices)}")
        usage = answer.get("usage") or {}
        tokens = usage.get("completion_tokens") if n == 1 else None
        return [Completion(text=(c.get("message") or {}).get("content") or "",
                           num_tokens=tokens, finish_reason=c.get("finish_reason") or "stop")
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
