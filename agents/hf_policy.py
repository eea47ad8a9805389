"""A Hugging Face causal LM (local checkpoint or the embedded SmolLM2) as a Policy, with the
token ids and log-probs of every sampled token. torch is imported only when the model loads.

Two limits keep long tool-using episodes bounded on a CPU:

- the prompt: a conversation longer than `max_prompt_tokens` (default: the model's context
  minus the turn's `max_completion_length`) is cut by `generation.fit_chat` (oldest turns first), so
  a model never reads past its trained context however many turns an episode has;
- CPU threads: on a CPU shared with more runnable processes than cores (load average above
  the core count), torch's worker threads wait for each other at every operation and each
  token costs 8-15x more (measured on SmolLM2-135M: 1.8-3.6 s per token with 2 threads,
  0.16-0.3 s with 1, at load 10-14 on 2 cores). Unless `threads` or OMP_NUM_THREADS says
  otherwise, the policy then runs torch on one thread.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from rlvr_envs.core.policy import Completion, Messages, SamplingParams


class HFPolicy:
    """`generate` samples `params.n` completions per conversation with the model's chat
    template. The model loads on first use (or pass `model=` and `tokenizer=` directly)."""

    def __init__(self, name_or_path: str | os.PathLike | None = None, *, model: Any = None,
                 tokenizer: Any = None, device: str = "auto", dtype: str = "auto",
                 batch_size: int = 16, max_prompt_tokens: int | None = None,
                 threads: int | None = None):
        if name_or_path is None and (model is None or tokenizer is None):
            raise ValueError("HFPolicy needs a model name/path, or both model= and tokenizer=")
        self.name = str(name_or_path) if name_or_path is not None else type(model).__name__
        self._source, self._model, self._tokenizer = name_or_path, model, tokenizer
        self._device, self._dtype, self.batch_size = device, dtype, batch_size
        self.max_prompt_tokens, self.threads = max_prompt_tokens, threads
        if name_or_path is not None and model is None:
            from rlvr_envs.agents.models import EMBEDDED_MODELS, resolve_model_path

            if str(name_or_path) not in EMBEDDED_MODELS:
                resolve_model_path(name_or_path)  # fail now on a bad path, not at first use

    def load(self) -> tuple[Any, Any]:
        if self._model is None:
            from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer

            self._model, self._tokenizer = load_model_and_tokenizer(
                self._source, DeviceSettings(self._device, self._dtype))
        self._set_threads()
        return self._model, self._tokenizer

    def _set_threads(self) -> None:
        import torch

        if next(self._model.parameters()).device.type != "cpu":
            return
        threads = self.threads
        if threads is None and not os.environ.get("OMP_NUM_THREADS"):
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
                else (os.cpu_count() or 1)
            if os.getloadavg()[0] > cores:  # oversubscribed: see the module doc
                threads = 1
        if threads is not None and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)

    def prompt_budget(self, max_completion_length: int) -> int | None:
        """The most prompt tokens a turn may have: `max_prompt_tokens`, else the model's
        context (`max_position_embeddings`) minus `max_completion_length`; None when unknown."""
        if self.max_prompt_tokens is not None:
            return self.max_prompt_tokens
        context = getattr(getattr(self._model, "config", None), "max_position_embeddings", None)
        return max(1, int(context) - max_completion_length) if isinstance(context, int) else None

    def generate(self, batch: Sequence[Messages], params: SamplingParams, **_: object
                 ) -> list[list[Completion]]:
        import torch

        from rlvr_envs.agents.generation import sample_chats

        model, tokenizer = self.load()
        if params.seed is not None:
            torch.manual_seed(params.seed)
        groups = sample_chats(model, tokenizer, batch, batch_size=self.batch_size, n=params.n,
                              max_completion_length=params.max_completion_length,
                              max_prompt_tokens=self.prompt_budget(params.max_completion_length),
                              temperature=params.temperature, top_p=params.top_p)
        return [[_to_completion(s, params.stop) for s in group] for group in groups]


def _to_completion(sample: Any, stop: Sequence[str]) -> Completion:
    text, finish = sample.text, sample.finish_reason
    cuts = [text.find(s) for s in stop if s and s in text]
    if cuts:  # the tokens stay as sampled; the text ends before the stop string
        text, finish = text[: min(cuts)], "stop"
    return Completion(text=text, num_tokens=len(sample.completion_ids),
                      token_ids=list(sample.completion_ids), logprobs=list(sample.logprobs),
                      finish_reason=finish, extra={"prompt_ids": list(sample.prompt_ids)})
