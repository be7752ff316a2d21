"""tfm's Python API against Hugging Face's modeling code and torch autograd."""

import gc
import json
import os
import shutil
import signal
import threading

import numpy as np
import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

import tfm
from conftest import write_json


def hf_reference(model, ids):
    model.zero_grad()
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    return out, {n: p.grad.clone() for n, p in model.named_parameters()}


def assert_grads_match(got, ref):
    assert set(got) == set(ref)
    for name, want in ref.items():
        mine = torch.from_numpy(np.array(got[name]))
        assert mine.shape == want.shape, name
        assert (mine - want).abs().max() <= 1e-4 * want.abs().max() + 1e-7, name


@pytest.mark.parametrize("fixture", ["llama", "qwen3_tied"])
def test_import_counts_parameters_as_hf(fixture, request):
    folder, _ = request.getfixturevalue(fixture)
    with torch.device("meta"):
        hf = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder))
    model = tfm.import_hf(folder)
    assert model.num_parameters == hf.num_parameters()
    assert model.summary()["parameters"] == hf.num_parameters()
    # A config file works as well as its folder.
    assert tfm.import_hf(os.path.join(folder, "config.json")).num_parameters == hf.num_parameters()
    text = str(model)
    assert "func.func @forward" in text and "tfm.repeat" in text


@pytest.mark.parametrize("fixture", ["llama", "qwen3_tied"])
def test_run_matches_hf(fixture, request, batch):
    folder, hf = request.getfixturevalue(fixture)
    ids = batch % hf.config.vocab_size
    step = tfm.compile(tfm.import_hf(folder), grads=True)
    out = step.run(folder, ids, labels=ids)  # torch tensors in
    ref, ref_grads = hf_reference(hf, ids)
    assert abs(out.loss - ref.loss.item()) <= 1e-5
    logits = torch.from_numpy(np.array(out.logits))
    assert ((logits - ref.logits).abs() <= 1e-4 + 1e-4 * ref.logits.abs()).all()
    assert_grads_match(out.grads, ref_grads)


def test_loss_only_step_and_no_fusion(llama, batch):
    folder, hf = llama
    ids = (batch % 96).numpy()
    ref, ref_grads = hf_reference(hf, torch.from_numpy(ids))
    for fusion in (True, False):
        step = tfm.compile(folder, grads=True, logits=False, fusion=fusion, recompute="full")
        out = step.run(folder, ids, labels=ids)
        assert out.logits is None
        assert abs(out.loss - ref.loss.item()) <= 1e-5
        assert_grads_match(out.grads, ref_grads)


def test_labels_ignore_index_and_no_labels(llama, batch):
    folder, hf = llama
    ids = batch % 96
    labels = ids.clone()
    labels[:, :4] = -100
    out = tfm.compile(folder).run(folder, ids, labels=labels)
    with torch.no_grad():
        ref = hf(input_ids=ids, labels=labels)
    assert abs(out.loss - ref.loss.item()) <= 1e-5
    assert tfm.compile(folder).run(folder, ids).loss is None


def test_results_are_zero_copy_views_that_outlive_the_output(llama, batch):
    folder, hf = llama
    out = tfm.compile(folder, grads=True).run(folder, batch % 96, labels=batch % 96)
    logits = out.logits
    grad = out.grads["lm_head.weight"]
    # Views of the result's memory, read-only, not copies.
    assert not logits.flags.writeable and not logits.flags.owndata
    assert not grad.flags.owndata
    assert out.logits.__array_interface__["data"][0] == logits.__array_interface__["data"][0]
    expect = logits.copy()
    del out
    gc.collect()
    assert np.array_equal(logits, expect)  # the array keeps the result alive
    with pytest.raises(ValueError):
        logits[0, 0, 0] = 1.0


def test_bind_tensors_and_parameters(llama, batch):
    folder, hf = llama
    ids = batch % 96
    step = tfm.compile(folder, grads=True).bind(folder)
    params = step.parameters()
    assert set(params) == {n for n, _ in hf.named_parameters()}
    for name, value in hf.named_parameters():
        assert np.array_equal(params[name], value.detach().numpy()), name
    # Other weights in memory: HF's model with a scaled head.
    scaled = {n: p.detach().clone() for n, p in hf.named_parameters()}
    scaled["lm_head.weight"] *= 2
    step.bind_tensors(scaled)
    out = step.run(None, ids, labels=ids)
    with torch.no_grad():
        hf.lm_head.weight *= 2
        ref = hf(input_ids=ids, labels=ids)
        hf.lm_head.weight /= 2
    assert abs(out.loss - ref.loss.item()) <= 1e-5


def test_errors_raise_tfm_error_with_the_message(llama, tmp_path):
    folder, _ = llama
    with pytest.raises(tfm.Error, match="cannot read"):
        tfm.import_hf(tmp_path / "missing")
    bad = tmp_path / "bad"
    bad.mkdir()
    config = json.load(open(os.path.join(folder, "config.json")))
    write_json(bad / "config.json", dict(config, num_attention_heads=5))
    with pytest.raises(tfm.Error, match="num_attention_heads"):
        tfm.import_hf(bad)
    write_json(bad / "config.json", dict(config, model_type="not_a_model"))
    with pytest.raises(tfm.Error, match="not_a_model"):
        tfm.import_hf(bad)
    with pytest.raises(tfm.Error, match="f16"):
        tfm.compile(folder, dtype="f16")
    with pytest.raises(tfm.Error, match="device"):
        tfm.compile(folder, device="tpu")
    step = tfm.compile(folder, grads=True)
    with pytest.raises(tfm.Error, match="bind a checkpoint first"):
        step.run(None, [[1, 2]], [[1, 2]])
    with pytest.raises(tfm.Error, match="outside the vocabulary"):
        step.run(folder, [[1, 96]], [[1, 2]])
    with pytest.raises(tfm.Error, match="gradients need labels"):
        step.run(folder, [[1, 2]])
    with pytest.raises(tfm.Error, match="differs from input_ids"):
        step.run(folder, [[1, 2]], [[1, 2, 3]])
    with pytest.raises(tfm.Error, match=r"\[batch, seq\] integer ids"):
        step.run(folder, [[0.5, 1.5]], [[1, 2]])
    # A checkpoint missing a tensor names it.
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    from safetensors.numpy import load_file, save_file
    tensors = load_file(broken / "model.safetensors")
    del tensors["model.norm.weight"]
    save_file(tensors, broken / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(tfm.Error, match="model.norm.weight"):
        tfm.compile(broken).bind(broken)
    with pytest.raises(tfm.Error, match="unknown option 'learning_rate'"):
        tfm.train(folder, [[1, 2, 3]], tmp_path / "out", steps=1, learning_rate=1.0)
    with pytest.raises(tfm.Error, match="option 'steps': expected an int, got <class 'float'>"):
        tfm.train(folder, [[1, 2, 3]], tmp_path / "out", steps=1.5)
    with pytest.raises(tfm.Error, match="option 'nesterov': expected a bool"):
        tfm.train(folder, [[1, 2, 3]], tmp_path / "out", steps=1, nesterov=1)
    # A failure inside the run (after the output folder is made) leaves none.
    with pytest.raises(tfm.Error, match="optimizer 'lion'"):
        tfm.train(folder, [[1, 2, 3]], tmp_path / "out", steps=1, optimizer="lion")
    assert not (tmp_path / "out").exists()
    # A path with a NUL inside would name another file in C: refused.
    with pytest.raises(tfm.Error, match="contains a NUL character"):
        tfm.import_hf(folder + "\0garbage")


def test_values_that_would_wrap_or_crash_raise_tfm_error(llama, tmp_path):
    folder, _ = llama
    step = tfm.compile(folder, grads=True).bind(folder)
    # A uint64 label of 2^64 - 100 would become -100 (not counted).
    with pytest.raises(tfm.Error, match="labels: id 18446744073709551516 does not fit int64"):
        step.run(None, [[1, 2]], np.array([[1, 2**64 - 100]], dtype=np.uint64))
    # A dataset id of 2^32 + 5 would become 5.
    with pytest.raises(tfm.Error, match="tokens: id 4294967301 does not fit uint32"):
        tfm.train(folder, np.array([1, 2, 2**32 + 5], dtype=np.int64), tmp_path / "o", steps=1)
    with pytest.raises(tfm.Error, match="input_ids: cannot read as an array"):
        step.run(None, torch.zeros(1, 2, dtype=torch.long, device="meta"), [[1, 2]])
    with pytest.raises(tfm.Error, match="model.norm.weight: cannot read as an array"):
        tfm.compile(folder).bind_tensors({"model.norm.weight": torch.ones(2, device="meta")})
    with pytest.raises(tfm.Error, match="option 'device': expected a str"):
        tfm.compile(folder, device=0)
    with pytest.raises(tfm.Error, match="path: expected a path"):
        tfm.import_hf(42)
    # What tfm-run refuses.
    with pytest.raises(tfm.Error, match="--recompute plans the backward: it needs --grads"):
        tfm.compile(folder, recompute="full")
    with pytest.raises(tfm.Error, match="loss-only step .* needs labels"):
        tfm.compile(folder, logits=False).run(folder, [[1, 2]])
    # Learning rates torch.optim refuses; nothing is left behind.
    for lr in (float("nan"), float("inf"), -1.0):
        with pytest.raises(tfm.Error, match="--lr .*: expected a finite value >= 0"):
            tfm.train(folder, [[1, 2, 3]], tmp_path / "lr", steps=1, lr=lr)
    assert not (tmp_path / "lr").exists() and not (tmp_path / "o").exists()


def test_train_progress_callback_and_ctrl_c(llama, tmp_path, capsys, monkeypatch):
    folder, _ = llama
    # Progress goes through sys.stdout (a notebook shows it).
    tfm.train(folder, [[1, 2, 3, 4]], tmp_path / "p", steps=2)
    out = capsys.readouterr().out
    assert "step 1/2" in out and "step 2/2" in out and "tfm-train: LlamaForCausalLM" in out
    # A callback sees every update and may stop the run: saved, resumable.
    seen = []

    def stop_after_one(log):
        seen.append(log)
        return log["step"] == 1

    with pytest.raises(tfm.Error, match=r"interrupted at step 1, saved in .*checkpoint-1"):
        tfm.train(folder, [[1, 2, 3, 4]], tmp_path / "cb", steps=3, progress=False,
                  callback=stop_after_one)
    assert [e["step"] for e in seen] == [1] and seen[0]["steps"] == 3
    assert set(seen[0]) == {"step", "steps", "loss", "grad_norm", "lr", "tokens_per_s", "ms"}
    log = tfm.train(folder, [[1, 2, 3, 4]], tmp_path / "cb", steps=3, progress=False,
                    resume=True)
    assert [e["step"] for e in log] == [1, 2, 3]
    # Ctrl-C while the compiled code runs (Python only flags the signal
    # then): the update ends, is saved, and KeyboardInterrupt says where.
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match=r"interrupted at step \d+, saved in"):
            tfm.train(folder, [[1, 2, 3, 4]], tmp_path / "ctrl-c", steps=10**6, progress=False)
    finally:
        timer.cancel()
    assert any(p.name.startswith("checkpoint-") for p in (tmp_path / "ctrl-c").iterdir())
    # A callback's own exception stops the run and is raised as it is.
    with pytest.raises(ZeroDivisionError) as raised:
        tfm.train(folder, [[1, 2, 3, 4]], tmp_path / "bug", steps=2, progress=False,
                  callback=lambda log: 1 / 0)
    assert any("interrupted at step 1, saved in" in n for n in raised.value.__notes__)
    # The run's paths are taken when it starts: a callback that changes
    # directory does not move its saves.
    monkeypatch.chdir(tmp_path)  # restored after the test, callbacks' chdir too
    tfm.train(folder, [[1, 2, 3, 4]], "rel", steps=2, progress=False, save_every=1,
              callback=lambda log: os.chdir(tmp_path / "cb"))
    assert (tmp_path / "rel" / "model.safetensors").exists()
    assert not (tmp_path / "cb" / "rel").exists()


def reference_training(hf, batches, lr, steps):
    """HF's model trained with torch.optim.AdamW (torch's defaults but
    tfm-train's clipping at 1.0): the loss before each update."""
    model = AutoModelForCausalLM.from_config(hf.config, attn_implementation="eager").float()
    model.load_state_dict(hf.state_dict())
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    losses = []
    for k in range(steps):
        opt.zero_grad()
        loss = model(input_ids=batches, labels=batches).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return model, losses


def test_train_matches_hf_and_torch_optim(llama, batch, tmp_path):
    folder, hf = llama
    ids = batch % 96
    log = tfm.train(folder, ids, tmp_path / "out", steps=3, lr=1e-2, progress=False)
    model, losses = reference_training(hf, ids, lr=1e-2, steps=3)
    assert [e["step"] for e in log] == [1, 2, 3]
    for got, want in zip(log, losses):
        assert abs(got["loss"] - want) <= 1e-4 * abs(want), (got["loss"], want)
    # Each tensor's update within 5% (Adam magnifies rounding in near-zero
    # gradients), as tfm-train's HF tests check.
    trained = AutoModelForCausalLM.from_pretrained(tmp_path / "out")
    start = dict(hf.named_parameters())
    ref = dict(model.named_parameters())
    for name, mine in trained.named_parameters():
        want = (ref[name] - start[name]).detach()
        got = (mine - start[name]).detach()
        assert (got - want).abs().max() <= 0.05 * want.abs().max() + 1e-7, name


def test_train_from_a_dataset_array(llama, tmp_path):
    folder, _ = llama
    walk = np.arange(4096, dtype=np.int64) % 96
    log = tfm.train(folder, walk, tmp_path / "out", steps=4, batch=2, seq=16, lr=1e-2,
                    schedule="cosine", warmup_steps=1, progress=False)
    assert [round(e["lr"], 6) for e in log][:2] == [0.0, 0.01]
    assert log[-1]["loss"] < log[0]["loss"]
    with pytest.raises(tfm.Error, match="non-negative integer ids"):
        tfm.train(folder, np.array([-1, 2, 3]), tmp_path / "neg", steps=1)


def _has_cuda_driver():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


@pytest.mark.skipif(_has_cuda_driver(), reason="a CUDA driver is present")
def test_cuda_without_a_driver_is_an_error(llama):
    folder, _ = llama
    step = tfm.compile(folder, device="cuda")
    with pytest.raises(tfm.Error, match="cannot load the CUDA driver"):
        step.run(folder, [[1, 2, 3]])


def test_a_step_shared_by_threads_serialises_its_calls(llama, batch):
    import threading
    folder, hf = llama
    ids = (batch % 96).numpy()
    step = tfm.compile(folder, grads=True).bind(folder)
    want = step.run(None, ids, labels=ids).loss
    weights = {n: p.detach().numpy() for n, p in hf.named_parameters()}
    losses, errors = [], []

    def runs():
        try:
            for _ in range(5):
                losses.append(step.run(None, ids, labels=ids).loss)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def binds():
        for _ in range(5):
            step.bind_tensors(weights)

    threads = [threading.Thread(target=f) for f in (runs, runs, binds)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(losses) == 10
    assert all(abs(x - want) <= 1e-6 for x in losses)
