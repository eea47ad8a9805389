"""Supervised fine-tuning on (chat prompt, completion) pairs through TRL's SFTTrainer, with the
loss on completion tokens only. Used by expert iteration and distillation."""

from __future__ import annotations

import os
from typing import Any, Sequence


def sft_records(pairs: Sequence[tuple[list[dict[str, Any]], str]]) -> list[dict[str, Any]]:
    """TRL's conversational prompt-completion rows."""
    return [{"prompt": list(messages), "completion": [{"role": "assistant", "content": text}]}
            for messages, text in pairs]


def run_sft(model: Any, tokenizer: Any, pairs: Sequence[tuple[list[dict[str, Any]], str]],
            output_dir: str | os.PathLike, *, epochs: float = 1.0, learning_rate: float = 1e-5,
            batch_size: int = 8, seed: int = 0, bf16: bool = False, use_cpu: bool = True,
            gradient_checkpointing: bool = False) -> Any:
    """Fine-tune `model` in place on the pairs; returns the trained model."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    if not pairs:
        raise ValueError("SFT needs at least one (prompt, completion) pair")
    tokenizer.padding_side = "right"
    config = SFTConfig(output_dir=str(output_dir), num_train_epochs=epochs,
                       learning_rate=learning_rate, per_device_train_batch_size=batch_size,
                       gradient_accumulation_steps=1, logging_steps=1, save_strategy="no",
                       report_to="none", seed=seed, data_seed=seed, bf16=bf16, use_cpu=use_cpu,
                       gradient_checkpointing=gradient_checkpointing, completion_only_loss=True,
                       lr_scheduler_type="constant", disable_tqdm=True)
    trainer = SFTTrainer(model=model, args=config,
                         train_dataset=Dataset.from_list(sft_records(pairs)),
                         processing_class=tokenizer)
    trainer.train()
    tokenizer.padding_side = "left"
    return trainer.accelerator.unwrap_model(trainer.model)
