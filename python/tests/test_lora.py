"""tfm's LoRA from Python (``lora=`` of tfm.compile and tfm.train) against
HF PEFT on the same base, adapter and batch."""

import copy
import os

import numpy as np
import pytest
import torch

import tfm

peft = pytest.importorskip("peft")


def seeded_adapter(hf, folder, config):
    """A PEFT adapter of `config` on `hf` with A and B drawn at random (so
    both get gradients), saved by PEFT into `folder`; its PeftModel."""
    model = peft.get_peft_model(copy.deepcopy(hf), config)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_" in n:
                p.copy_(torch.randn(p.shape, generator=g) * 0.2)
    model.save_pretrained(folder)
    return model


def config():
    # alpha / r = 1.5: a scale applied in the wrong place shows.
    return peft.LoraConfig(r=2, lora_alpha=3, target_modules=["q_proj", "v_proj", "down_proj"],
                           lora_dropout=0.0)


def test_compile_with_a_peft_adapter_matches_peft(llama, batch, tmp_path):
    folder, hf = llama
    ids = batch % 96
    reference = seeded_adapter(hf, tmp_path / "adapter", config())
    out = reference(input_ids=ids, labels=ids)
    out.loss.backward()
    want = {n.replace(".default.", "."): p.grad for n, p in reference.named_parameters()
            if p.requires_grad}

    step = tfm.compile(folder, grads=True, lora=tmp_path / "adapter")
    got = step.run(folder, ids, ids)
    assert abs(got.loss - out.loss.item()) <= 1e-5
    assert np.allclose(got.logits, out.logits.detach().numpy(), rtol=1e-4, atol=1e-4)
    # Gradients are the adapter's, under PEFT's saved names; the base gets none.
    assert set(got.grads) == set(want)
    for name, ref in want.items():
        mine = torch.from_numpy(np.array(got.grads[name]))
        assert (mine - ref).abs().max() <= 1e-4 * ref.abs().max(), name


def test_compile_with_a_config_starts_at_the_base(llama, batch):
    """Fresh adapters start as PEFT's (B zero): the loss is the base's (HF's
    own), and only B gets a gradient."""
    folder, hf = llama
    ids = batch % 96
    base = hf(input_ids=ids, labels=ids).loss.item()
    for lora in (config(), config().to_dict()):
        got = tfm.compile(folder, grads=True, lora=lora, lora_seed=5).run(folder, ids, ids)
        assert abs(got.loss - base) <= 1e-5
        assert len(got.grads) == 2 * 3 * 2  # A and B, 3 modules, 2 layers
        for name, g in got.grads.items():
            assert (np.abs(g).max() > 0) == (".lora_B." in name), name


def test_train_with_lora_saves_what_peft_loads(llama, batch, tmp_path):
    folder, hf = llama
    ids = batch % 96
    reference = seeded_adapter(hf, tmp_path / "adapter", config())
    first = reference(input_ids=ids, labels=ids).loss.item()
    log = tfm.train(folder, ids, tmp_path / "out", steps=2, lr=1e-2, progress=False,
                    lora_init=tmp_path / "adapter", merge_lora=True)
    assert abs(log[0]["loss"] - first) <= 1e-4 * first
    assert log[1]["loss"] < log[0]["loss"]
    # PEFT loads the trained adapter with no missing or unexpected key, and
    # tfm's merged model gives its logits.
    trained = peft.PeftModel.from_pretrained(copy.deepcopy(hf), tmp_path / "out")
    result = trained.load_adapter(tmp_path / "out", adapter_name="again")
    assert not [k for k in result.missing_keys if "lora_" in k] and not result.unexpected_keys
    from transformers import AutoModelForCausalLM
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "out" / "merged")
    with torch.no_grad():
        want = trained(input_ids=ids).logits
        got = merged(input_ids=ids).logits
    assert float((got - want).norm() / want.norm()) <= 1e-5


def test_bad_lora_options_raise_tfm_error(llama, tmp_path):
    folder, _ = llama
    with pytest.raises(tfm.Error, match="lora: expected a peft.LoraConfig"):
        tfm.compile(folder, lora=3)
    with pytest.raises(tfm.Error, match="field 'lora_dropout'"):
        tfm.compile(folder, lora=dict(config().to_dict(), lora_dropout=0.1))
    with pytest.raises(tfm.Error, match="matches no linear projection"):
        tfm.compile(folder, lora=peft.LoraConfig(r=2, target_modules=["q_prj"]))
    with pytest.raises(tfm.Error, match="adapter_config.json"):
        tfm.compile(folder, lora=tmp_path)
    with pytest.raises(tfm.Error, match="merge"):
        tfm.train(folder, np.zeros((1, 4), dtype=np.int64), tmp_path / "o", steps=1,
                  merge_lora=True, progress=False)
    assert not os.path.exists(tmp_path / "o")
    with pytest.raises(tfm.Error, match="lora: .*not JSON"):
        tfm.train(folder, np.zeros((1, 4), dtype=np.int64), tmp_path / "o", steps=1,
                  lora={"r": object()}, progress=False)
