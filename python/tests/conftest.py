"""Fixtures of the Python package's tests: tiny random-weight Hugging Face
checkpoints (the reference for every number), written once per session."""

import json
import os

import pytest
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen3Config

os.environ.setdefault("USE_HUB_KERNELS", "NO")


def _save(config, folder, seed=0):
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").float()
    model.save_pretrained(folder)
    return model


@pytest.fixture(scope="session")
def llama(tmp_path_factory):
    """A 2-layer Llama (GQA, untied head): its folder and HF model."""
    folder = str(tmp_path_factory.mktemp("llama"))
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         tie_word_embeddings=False)
    return folder, _save(config, folder)


@pytest.fixture(scope="session")
def qwen3_tied(tmp_path_factory):
    """A 2-layer Qwen3 (q/k norms, tied embeddings)."""
    folder = str(tmp_path_factory.mktemp("qwen3"))
    config = Qwen3Config(vocab_size=80, hidden_size=32, intermediate_size=40,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=8, tie_word_embeddings=True)
    return folder, _save(config, folder, seed=1)


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(7)
    return torch.randint(0, 80, (2, 9), generator=g)


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f)
