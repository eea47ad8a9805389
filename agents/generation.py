"""Sampling from a local Hugging Face causal LM: chat rendering, batched generation, and the
token ids and log-probs of every sampled token. Shared by the HF policy and the trainers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass
class Sample:
    """One sampled continuation of one prompt, at the token level."""

    prompt_ids: list[int]
    completion_ids: list[int]  # sampled tokens up to and including EOS; no padding
    logprobs: list[float]  # log-prob of each completion token under the sampling distribution
    text: str  # completion decoded without special tokens
    finish_reason: str  # "stop" (EOS) | "length"


def render_prompt(tokenizer: Any, messages: Sequence[dict[str, Any]],
                  tools: Sequence[dict[str, Any]] | None = None) -> str:
    """The chat as the model sees it, ending with the assistant's generation prompt; `tools`
    (function schemas) go to the chat template, which renders them its own way."""
    return tokenizer.apply_chat_template(list(messages), tools=list(tools) if tools else None,
                                         tokenize=False, add_generation_prompt=True)


def encode(tokenizer: Any, text: str) -> list[int]:
    """Token ids of rendered text; the chat template already placed every special token."""
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def sample_from_ids(model: Any, tokenizer: Any, prompts: Sequence[Sequence[int]], *, n: int = 1,
                    max_completion_length: int = 64, temperature: float = 1.0, top_p: float = 1.0,
                    ) -> list[list[Sample]]:
    """`n` samples per prompt (token-id lists); temperature 0 means greedy."""
    import torch

    device = next(model.parameters()).device
    pad_id = tokenizer.pad_token_id
    eos_id = tokenizer.eos_token_id
    width = max(len(p) for p in prompts)
    input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, ids in enumerate(prompts):  # left padding: generation continues every row's end
        input_ids[row, width - len(ids):] = torch.tensor(list(ids), dtype=torch.long)
        attention[row, width - len(ids):] = 1
    greedy = temperature == 0
    # rows repeated n times (not num_return_sequences, which greedy decoding refuses)
    input_ids = input_ids.repeat_interleave(n, dim=0)
    attention = attention.repeat_interleave(n, dim=0)
    kwargs: dict[str, Any] = dict(max_new_tokens=max_completion_length, do_sample=not greedy,
                                  return_dict_in_generate=True,
                                  output_scores=True, pad_token_id=pad_id, eos_token_id=eos_id)
    if not greedy:
        kwargs.update(temperature=temperature, top_p=top_p, top_k=0)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device),
                             **kwargs)
    if was_training:
        model.train()
    new_tokens = out.sequences[:, width:]
    # log-softmax of the processed scores = log-prob under the distribution actually sampled
    scores = torch.stack(out.scores, dim=1).float().log_softmax(-1)
    token_logprobs = scores.gather(-1, new_tokens.unsqueeze(-1)).squeeze(-1)
    results: list[list[Sample]] = []
    for row in range(len(prompts)):
        group = []
        for j in range(n):
            k = row * n + j
            ids = new_tokens[k].tolist()
            finish = "length"
            if eos_id in ids:
                ids = ids[: ids.index(eos_id) + 1]
                finish = "stop"
            lps = token_logprobs[k, : len(ids)].tolist()
            text = tokenizer.decode(ids, skip_special_tokens=True)
            group.append(Sample(list(prompts[row]), ids, lps, text, finish))
        results.append(group)
    return results


def fit_chat(tokenizer: Any, messages: Sequence[dict[str, Any]], max_tokens: int
             ) -> list[dict[str, Any]]:
    """The conversation cut to at most `max_tokens` prompt tokens, as a long multi-turn
    episode must be for a model with a short context: the system message and the first user
    message (the task) stay, the oldest later turns go first, a note says how many were left
    out; if the task and the latest turn alone are too long, the latest turn keeps its tail."""
    chat = [dict(m) for m in messages]

    def length(candidate: Sequence[dict[str, Any]]) -> int:
        return len(encode(tokenizer, render_prompt(tokenizer, candidate)))

    if length(chat) <= max_tokens:
        return chat
    head = 0
    while head < len(chat) and chat[head].get("role") != "user":
        head += 1
    head = min(head + 1, len(chat))  # the system message(s) and the task
    kept, dropped = chat[head:], 0
    while len(kept) > 1:
        note = [{"role": "user", "content": f"[{dropped} earlier message(s) left out]"}] \
            if dropped else []
        if length(chat[:head] + note + kept) <= max_tokens:
            return chat[:head] + note + kept
        kept, dropped = kept[1:], dropped + 1
    note = [{"role": "user", "content": f"[{dropped} earlier message(s) left out]"}] \
        if dropped else []
    last = dict(kept[0]) if kept else {"role": "user", "content": ""}
    text = str(last.get("content", ""))
    while text and length(chat[:head] + note + [last | {"content": text}]) > max_tokens:
        text = text[len(text) // 4 or 1:]  # keep the tail: the newest output is at the end
    return chat[:head] + note + [last | {"content": text}]


def sample_chats(model: Any, tokenizer: Any, chats: Sequence[Sequence[dict[str, Any]]], *,
                 batch_size: int = 16, max_prompt_tokens: int | None = None,
                 **kwargs: Any) -> list[list[Sample]]:
    """`sample_from_ids` for chat conversations, in batches of `batch_size` prompts; with
    `max_prompt_tokens`, each conversation is first cut to fit (`fit_chat`)."""
    if max_prompt_tokens is not None:
        chats = [fit_chat(tokenizer, chat, max_prompt_tokens) for chat in chats]
    prompts = [encode(tokenizer, render_prompt(tokenizer, chat)) for chat in chats]
    results: list[list[Sample]] = []
    for start in range(0, len(prompts), batch_size):
        results.extend(sample_from_ids(model, tokenizer, prompts[start:start + batch_size],
                                       **kwargs))
    return results
