"""Runs tfm-capi-test (the C API end to end) on a random-weight tiny Llama
and checks what it printed against Hugging Face's model and torch autograd:
the parameter count (num_parameters()), logits, the loss and every
gradient under its HF name.

    check_capi.py TFM_CAPI_TEST WORK_DIR
"""

import json
import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM, LlamaConfig


def main():
    exe, work = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=48,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         tie_word_embeddings=True)
    model = AutoModelForCausalLM.from_config(config, attn_implementation="eager").float()
    model.save_pretrained(work)
    # For tfm-capi-test --errors' training call.
    ids = torch.randint(0, config.vocab_size, (2, 8)).tolist()
    with open(f"{work}/tokens.json", "w") as f:
        json.dump({"input_ids": ids, "labels": ids}, f)
    out = subprocess.run([exe, work], check=True, capture_output=True, text=True).stdout
    got = json.loads(out.strip().splitlines()[-1])

    assert got["parameters"] == model.num_parameters(), (got["parameters"], model.num_parameters())
    assert got["lookup_ok"]
    ids = torch.tensor(got["input_ids"]).reshape(got["shape"])
    ref = model(input_ids=ids, labels=ids)
    ref.loss.backward()
    logits = torch.tensor(got["logits"]["data"]).reshape(got["logits"]["shape"])
    d = (logits - ref.logits).abs() - (1e-4 + 1e-4 * ref.logits.abs())
    assert d.max() <= 0, f"logits differ by {d.max() + 1e-4}"
    assert abs(got["loss"] - ref.loss.item()) <= 1e-5, (got["loss"], ref.loss.item())
    params = dict(model.named_parameters())
    assert set(got["grads"]) == set(params), set(got["grads"]) ^ set(params)
    for name, g in got["grads"].items():
        want = params[name].grad
        mine = torch.tensor(g["data"]).reshape(g["shape"])
        assert mine.shape == want.shape, (name, mine.shape, want.shape)
        err = (mine - want).abs().max().item()
        assert err <= 1e-4 * want.abs().max().item() + 1e-7, (name, err)
    print(f"C API: {got['architecture']}, {got['parameters']} parameters as HF, "
          f"loss {got['loss']:.6f} (HF {ref.loss.item():.6f}), "
          f"{len(got['grads'])} gradients as torch autograd")


if __name__ == "__main__":
    main()
