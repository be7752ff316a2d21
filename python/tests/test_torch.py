"""tfm.torch.CausalLM trained by torch.optim against HF's own model trained
the same way."""

import numpy as np
import pytest
import torch
from transformers import AutoModelForCausalLM

from tfm.torch import CausalLM


def hf_copy(hf):
    model = AutoModelForCausalLM.from_config(hf.config, attn_implementation="eager").float()
    model.load_state_dict(hf.state_dict())
    return model


@pytest.mark.parametrize("fixture", ["llama", "qwen3_tied"])
def test_names_and_values_are_hfs(fixture, request):
    folder, hf = request.getfixturevalue(fixture)
    module = CausalLM(folder)
    mine = dict(module.named_parameters())
    ref = dict(hf.named_parameters())
    assert list(mine) == sorted(ref) and set(mine) == set(ref)
    for name, value in ref.items():
        assert torch.equal(mine[name].detach(), value.detach()), name


def test_backward_fills_grad_as_autograd(llama, batch):
    folder, hf = llama
    ids = batch % 96
    module = CausalLM(folder)
    loss = module(ids, labels=ids)
    (2.0 * loss).backward()  # the incoming gradient scales the saved ones
    ref = hf_copy(hf)
    ref_loss = ref(input_ids=ids, labels=ids).loss
    (2.0 * ref_loss).backward()
    assert abs(loss.item() - ref_loss.item()) <= 1e-5
    for name, p in ref.named_parameters():
        g = dict(module.named_parameters())[name].grad
        assert (g - p.grad).abs().max() <= 1e-4 * p.grad.abs().max() + 1e-7, name


@pytest.mark.parametrize("fixture", ["llama", "qwen3_tied"])
def test_adamw_training_matches_hf(fixture, request, batch):
    folder, hf = request.getfixturevalue(fixture)
    ids = batch % hf.config.vocab_size
    module, ref = CausalLM(folder), hf_copy(hf)
    opts = [torch.optim.AdamW(m.parameters(), lr=1e-2) for m in (module, ref)]
    for step in range(4):
        for opt in opts:
            opt.zero_grad()
        got = module(ids, labels=ids)
        want = ref(input_ids=ids, labels=ids).loss
        got.backward()
        want.backward()
        for m in (module, ref):
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        for opt in opts:
            opt.step()
        assert abs(got.item() - want.item()) <= 1e-5 * max(1.0, abs(want.item())), step
    # Adam turns float rounding in near-zero gradients into visible steps,
    # so the criterion is each tensor's update (as tfm-train's HF tests).
    mine = dict(module.named_parameters())
    start = dict(hf.named_parameters())
    for name, p in ref.named_parameters():
        want = (p - start[name]).detach()
        got = (mine[name] - start[name]).detach()
        assert (got - want).abs().max() <= 0.05 * want.abs().max() + 1e-7, name


def test_edits_through_data_reach_the_step(llama, batch):
    folder, hf = llama
    ids = batch % 96
    module = CausalLM(folder)
    before = module(ids, labels=ids).item()
    with torch.no_grad():
        dict(module.named_parameters())["lm_head.weight"].data.mul_(3)
    after = module(ids, labels=ids).item()
    ref = hf_copy(hf)
    with torch.no_grad():
        ref.lm_head.weight.mul_(3)
        want = ref(input_ids=ids, labels=ids).loss.item()
    assert abs(after - want) <= 1e-5 and abs(after - before) > 1e-3
