"""A Hugging Face causal LM (local checkpoint or the embedded SmolLM2) as a Policy, with the
token ids and log-probs of every sampled token. torch is imported only when the model loads."""

from __future__ import annotations

import os
from typing import Any, Sequence

from rlvr_envs.core.policy import Completion, Messages, SamplingParams


class HFPolicy:
    """`generate` samples `params.n` completions per conversation with the model's chat
    template. The model loads on first use (or pass `model=` and `tokenizer=` directly)."""

    def __init__(self, name_or_path: str | os.PathLike | None = None, *, model: Any = None,
                 tokenizer: Any = None, device: str = "auto", dtype: str = "auto",
                 batch_size: int = 16):
        if name_or_path is None and (model is None or tokenizer is None):
            raise ValueError("HFPolicy needs a model name/path, or both model= and tokenizer=")
        self.name = str(name_or_path) if name_or_path is not None else type(model).__name__
        self._source, self._model, self._tokenizer = name_or_path, model, tokenizer
        self._device, self._dtype, self.batch_size = device, dtype, batch_size
        if name_or_path is not None and model is None:
            from rlvr_envs.agents.models import EMBEDDED_MODELS, resolve_model_path

            if str(name_or_path) not in EMBEDDED_MODELS:
                resolve_model_path(name_or_path)  # fail now on a bad path, not at first use

    def load(self) -> tuple[Any, Any]:
        if self._model is None:
            from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer

            self._model, self._tokenizer = load_model_and_tokenizer(
                self._source, DeviceSettings(self._device, self._dtype))
        return self._model, self._tokenizer

    def generate(self, batch: Sequence[Messages], params: SamplingParams, **_: object
                 ) -> list[list[Completion]]:
        import torch

        from rlvr_envs.agents.generation import sample_chats

        model, tokenizer = self.load()
        if params.seed is not None:
            torch.manual_seed(params.seed)
        groups = sample_chats(model, tokenizer, batch, batch_size=self.batch_size, n=params.n,
                              max_completion_length=params.max_completion_length,
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
