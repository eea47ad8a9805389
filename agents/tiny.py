"""A tiny random chat model built entirely offline, for tests and smoke runs.

The tokenizer is a byte-level BPE trained in-process with `tokenizers` on a few strings (plus
the ChatML special tokens and a ChatML chat template); the model is a small Qwen2 config with
random weights. Nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
DEFAULT_CORPUS = (
    "Say the magic word. The magic word is yes. yes yes yes.",
    "Compute 1 + 2. The answer is 3. \\boxed{3}",
    "system user assistant tool: the answer, a number or a word; no, maybe, ok.",
    "<tool_call>{\"name\": \"submit\", \"arguments\": {}}</tool_call>",
    "line one\nline two\n",
)


def train_tiny_tokenizer(corpus: Iterable[str] = DEFAULT_CORPUS, vocab_size: int = 96,
                         chat_template: str | None = CHATML_TEMPLATE):
    """A PreTrainedTokenizerFast with a byte-level BPE learned from `corpus` (its alphabet is
    the corpus's characters only, which keeps the vocabulary, and so a random model's
    chance of saying any one word, small and large)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  show_progress=False)
    backend.train_from_iterator(list(corpus), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>", bos_token=None,
                                        additional_special_tokens=["<|im_start|>"])
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    return tokenizer


def build_tiny_model(path: str | Path, *, seed: int = 0, hidden_size: int = 32,
                     num_layers: int = 2, corpus: Sequence[str] = DEFAULT_CORPUS,
                     vocab_size: int = 96, chat_template: str | None = CHATML_TEMPLATE) -> Path:
    """Write a random Qwen2 checkpoint with its tokenizer to `path`; return the path."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    path = Path(path)
    tokenizer = train_tiny_tokenizer(corpus, vocab_size, chat_template)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden_size,
                         intermediate_size=hidden_size * 2, num_hidden_layers=num_layers,
                         num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=1024, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
