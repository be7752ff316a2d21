"""tfm: an MLIR compiler for training transformer models, from Python.

    import tfm
    model = tfm.import_hf("ckpt")                 # a config.json or a checkpoint folder
    model.summary()["parameters"]                 # HF's num_parameters()
    step = tfm.compile(model, device="cpu", dtype="f32", grads=True)
    out = step.run("ckpt", input_ids, labels=input_ids)
    out.loss, out.logits, out.grads["model.layers.0.self_attn.q_proj.weight"]
    tfm.train("ckpt", tokens="train.npy", steps=20, output_dir="trained", lr=1e-3)

Every failure raises tfm.Error with the compiler's message, naming the
file, field or op at fault. Arrays come back as read-only numpy views of
the result's memory (no copy); numpy arrays or torch tensors go in.
`tfm.torch.CausalLM` is a torch.nn.Module over a compiled step.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import Any, Iterator, Optional, Union

import numpy as np

from ._tfm import Error, __version__
from . import _tfm

__all__ = ["Error", "Model", "Step", "Output", "import_hf", "compile", "train",
           "__version__"]

PathLike = Union[str, "os.PathLike[str]"]


def _path(name: str, value: Any) -> str:
    """A str or os.PathLike as a str; anything else is a tfm.Error."""
    try:
        return os.fspath(value)
    except TypeError:
        raise Error(f"{name}: expected a path (str or os.PathLike), got {type(value)}") \
            from None


class Model:
    """An HF causal-LM config imported as tfm IR (tfm-import-hf)."""

    def __init__(self, path: PathLike):
        path = _path("path", path)
        self._native = _tfm.Model(path)
        #: The folder holding the config (where its weights are, if any).
        self.directory = path if os.path.isdir(path) else (os.path.dirname(path) or ".")

    @property
    def num_parameters(self) -> int:
        """HF's ``num_parameters()``: unique parameters, buffers excluded."""
        return self._native.num_parameters

    @property
    def architecture(self) -> str:
        return self._native.architecture

    @property
    def model_type(self) -> str:
        return self._native.model_type

    @property
    def vocab_size(self) -> int:
        return self._native.vocab_size

    def summary(self) -> dict:
        """``tfm-import-hf --summary``'s object: parameters, by kind, buffers, layers."""
        return json.loads(self._native.summary_json())

    def __str__(self) -> str:
        """The imported module as MLIR text."""
        return self._native.mlir()

    def __repr__(self) -> str:
        return (f"tfm.Model({self.architecture}, {self.num_parameters:,} parameters, "
                f"from {self.directory!r})")


def import_hf(path: PathLike) -> Model:
    """Imports a config.json, or a checkpoint folder holding one."""
    return Model(path)


def _array(name: str, value: Any) -> np.ndarray:
    """``value`` (a nested list, numpy array or torch tensor) as a numpy
    array; what cannot be one (a meta tensor, an object) is a tfm.Error."""
    try:
        if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
            # Through DLPack: Tensor.numpy() would mark the storage
            # non-resizable for good, and FSDP2 resizes its parameters'.
            value = np.from_dlpack(value.detach().cpu())
        return np.asarray(value)
    except Exception as e:  # torch's and numpy's own errors, as tfm's
        raise Error(f"{name}: cannot read as an array: {e}") from None


def _check_int_range(name: str, a: np.ndarray, high: int, what: str) -> None:
    """Refuses ids above ``high`` before a cast would wrap them (a uint64
    label of 2^64 - 100 into -100, an id of 2^32 + 5 into 5)."""
    if a.size and np.issubdtype(a.dtype, np.integer) and int(a.max()) > high:
        raise Error(f"{name}: id {int(a.max())} does not fit {what}")


def _ids(name: str, value: Any) -> np.ndarray:
    """[batch, seq] int64 from a nested list, numpy array or torch tensor."""
    a = _array(name, value)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or not (np.issubdtype(a.dtype, np.integer) or a.size == 0):
        raise Error(f"{name}: expected [batch, seq] integer ids, got shape {a.shape} "
                    f"of {a.dtype}")
    _check_int_range(name, a, np.iinfo(np.int64).max, "int64")
    return np.ascontiguousarray(a, dtype=np.int64)


class _Gradients(Mapping):
    """Gradients by HF tensor name, as read-only numpy views."""

    def __init__(self, result):
        self._result = result
        self._names = result.gradient_names()

    def __getitem__(self, name: str) -> np.ndarray:
        return self._result.gradient(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


class Output:
    """What one run of a step returned."""

    def __init__(self, result):
        self._result = result

    @property
    def loss(self) -> Optional[float]:
        """The mean cross-entropy over counted labels (None without labels)."""
        return self._result.loss

    @property
    def logits(self) -> Optional[np.ndarray]:
        """[batch, seq, vocab] float32 (None for a loss-only step)."""
        return self._result.logits

    @property
    def grads(self) -> Mapping:
        """Every parameter's gradient under its checkpoint name."""
        return _Gradients(self._result)

    @property
    def step_ms(self) -> float:
        """Wall time of the compiled step itself."""
        return self._result.step_ms

    def __repr__(self) -> str:
        return f"tfm.Output(loss={self.loss}, {len(self.grads)} gradients)"


class Step:
    """A model's training step, compiled once for any batch and length."""

    def __init__(self, model: Model, native):
        self.model = model
        self._native = native
        self._bound: Optional[str] = None

    def bind(self, checkpoint: PathLike) -> "Step":
        """Binds a checkpoint folder's weights through the weight map."""
        checkpoint = os.path.abspath(_path("checkpoint", checkpoint))
        self._native.bind(checkpoint)
        self._bound = checkpoint
        return self

    def bind_tensors(self, tensors: Mapping) -> "Step":
        """Binds weights given by checkpoint name (numpy arrays or torch
        tensors, converted to contiguous float32)."""
        items = []
        for name, value in tensors.items():
            if not isinstance(name, str):
                raise Error(f"bind_tensors: a tensor name is {type(name)}, expected a str")
            a = _array(name, value.float() if hasattr(value, "detach") else value)
            if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
                raise Error(f"{name}: expected a float tensor, got {a.dtype}")
            items.append((name, np.ascontiguousarray(a, dtype=np.float32)))
        self._native.bind_tensors(items)
        self._bound = None
        return self

    def parameters(self) -> dict:
        """The bound parameters and buffers by checkpoint name (read-only
        numpy views; copy them to keep them past the step)."""
        return dict(self._native.parameters().items())

    def run(self, checkpoint: Optional[PathLike], input_ids: Any,
            labels: Any = None, position_ids: Any = None,
            attention_mask: Any = None) -> Output:
        """Runs ``input_ids`` ([batch, seq]) and ``labels`` (same shape,
        -100 not counted; HF's shift is inside) on the weights of
        ``checkpoint`` (bound on first use; None: those bound last).

        ``position_ids`` that restart at 0 mark packed documents (HF's
        flattened-batch convention, ``DataCollatorWithFlattening``): each
        attends and scans only within itself. ``attention_mask`` 0 marks
        right padding (its labels are not counted); padding before a token
        is an error."""
        if checkpoint is not None and \
                os.path.abspath(_path("checkpoint", checkpoint)) != self._bound:
            self.bind(checkpoint)
        ids = _ids("input_ids", input_ids)

        def optional(name: str, value: Any) -> Optional[np.ndarray]:
            return None if value is None else _ids(name, value)
        return Output(self._native.run(ids, optional("labels", labels),
                                       optional("position_ids", position_ids),
                                       optional("attention_mask", attention_mask)))


def _lora_json(lora: Any) -> str:
    """A LoRA configuration as the JSON text adapter_config.json holds: a
    ``peft.LoraConfig``, its ``to_dict()``, or such a dict written by
    hand (sets become lists, enums their values)."""
    if hasattr(lora, "to_dict"):
        lora = lora.to_dict()
    if not isinstance(lora, Mapping):
        raise Error(f"lora: expected a peft.LoraConfig, a dict or an adapter folder, "
                    f"got {type(lora)}")

    def plain(value: Any) -> Any:
        if isinstance(value, (set, frozenset)):
            return sorted(value)
        if hasattr(value, "value") and isinstance(value.value, (str, int)):
            return value.value  # an enum (PeftType, TaskType)
        raise TypeError(f"{type(value).__name__} is not JSON")

    try:
        return json.dumps(dict(lora), default=plain)
    except (TypeError, ValueError) as e:
        raise Error(f"lora: {e}") from None


def _lora_option(lora: Any) -> tuple:
    """(config JSON, adapter folder) for ``lora``: a configuration, or a
    PEFT adapter folder (its config and weights)."""
    if lora is None:
        return "", ""
    if isinstance(lora, (str, os.PathLike)):
        return "", os.path.abspath(_path("lora", lora))
    return _lora_json(lora), ""


def compile(model: Union[Model, PathLike], device: str = "cpu", dtype: str = "f32",
            fusion: bool = True, recompute: Optional[str] = None, grads: bool = False,
            logits: bool = True, freeze: Optional[str] = None,
            moe_aux_loss: str = "auto", lora: Any = None, lora_seed: int = 0) -> Step:
    """The model's step (tfm-run's options): ``device`` cpu, cuda or
    gpu-sim; ``dtype`` f32 or bf16; ``grads`` derives the backward;
    ``logits=False`` is the loss-only step (never forms [B*T, V]);
    ``recompute`` is the backward's memory plan (save-all, selective, full,
    a fraction or a size); ``freeze`` a regex of HF names not to train.
    ``lora`` adds LoRA adapters as PEFT does (the base frozen, gradients
    the adapter's): a ``peft.LoraConfig`` or its ``to_dict()`` (fresh
    adapters: A drawn from ``lora_seed``, B zero), or a PEFT adapter folder
    (its configuration and weights, bound with every checkpoint)."""
    for option, value in (("device", device), ("dtype", dtype), ("recompute", recompute),
                          ("freeze", freeze), ("moe_aux_loss", moe_aux_loss)):
        if value is not None and not isinstance(value, str):
            raise Error(f"option '{option}': expected a str, got {type(value)}")
    for option, value in (("fusion", fusion), ("grads", grads), ("logits", logits)):
        if not isinstance(value, (bool, np.bool_)):
            raise Error(f"option '{option}': expected a bool, got {type(value)}")
    if not isinstance(model, Model):
        model = Model(model)
    if not isinstance(lora_seed, int) or isinstance(lora_seed, bool) or lora_seed < 0:
        raise Error(f"option 'lora_seed': expected a non-negative int, got {lora_seed!r}")
    lora_config, adapter = _lora_option(lora)
    native = _tfm.Step(model._native, device, dtype, fusion, grads, logits,
                       recompute or "save-all", freeze or "", moe_aux_loss,
                       lora_config, adapter, lora_seed)
    return Step(model, native)


def train(checkpoint: PathLike, tokens: Any, output_dir: PathLike, steps: int = 20,
          progress: bool = True, callback: Optional[Any] = None, **options: Any) -> list:
    """Trains ``checkpoint`` as tfm-train does and returns the log (a dict
    per update: step, loss, grad_norm, lr, tokens_per_s, ...). ``tokens``
    is a tokens.json, a .npy/.bin dataset, a folder tfm.data prepared (its
    documents packed into ``seq``-token rows), or ids in memory: a 1-D array
    (a dataset, cut in ``batch`` x ``seq`` windows) or a [batch, seq] one
    (every update's batch). ``options`` are tfm-train's by their Python
    names: batch, seq, lr, optimizer, adam_beta1, adam_beta2, adam_eps,
    weight_decay, decay, momentum, nesterov, max_grad_norm, schedule,
    warmup_steps, grad_accum, freeze, device, dtype, recompute,
    moe_aux_loss, fusion, save_every, log_every, resume, shuffle_seed,
    token_dtype, and for LoRA lora (a ``peft.LoraConfig`` or its
    ``to_dict()``), lora_init (a PEFT adapter folder to continue; its
    configuration unless lora is given), lora_seed, merge_lora, and for
    prepared data packing (False: one document per padded row), eval_data
    (held-out data), eval_every, eval_batches (the log's entries then hold
    no held-out loss: it is in ``output_dir/train_log.json``'s ``eval``),
    and zero (1: ZeRO-1 under ``mpirun.mpich``, where every rank calls
    tfm.train alike and rank 0 writes ``output_dir``; docs/distributed.md).
    The trained model is in ``output_dir`` (transformers loads it); with
    LoRA the adapter is, as PEFT saves it (and the merged model in
    ``output_dir/merged`` with merge_lora).

    ``progress`` prints tfm-train's lines through ``sys.stdout`` (so a
    notebook shows them); ``callback(log)``, when given, sees each update
    as a dict (step, steps, loss, grad_norm, lr, tokens_per_s, ms), and
    returning True stops the run: the update is saved and tfm.Error says
    where ("interrupted at step N, saved in OUT/checkpoint-N"; ``resume=True``
    continues it). Ctrl-C does the same, then raises KeyboardInterrupt."""
    # Absolute now: a callback may change directory while the run goes on.
    output_dir = os.path.abspath(_path("output_dir", output_dir))
    checkpoint = os.path.abspath(_path("checkpoint", checkpoint))
    options = dict(options)
    if options.get("lora") is not None:
        options["lora"] = _lora_json(options["lora"])
    if options.get("lora_init") is not None:
        options["lora_init"] = os.path.abspath(_path("lora_init", options["lora_init"]))
    if options.get("eval_data") is not None:
        options["eval_data"] = os.path.abspath(_path("eval_data", options["eval_data"]))
    with tempfile.TemporaryDirectory(prefix="tfm-tokens-") as scratch:
        path = _token_file(tokens, scratch)
        def print_line(line: str) -> None:
            print(line, file=sys.stdout, flush=True)

        _tfm.train(checkpoint, path, output_dir, dict(steps=steps, **options), False,
                   print_line if progress else None, callback)
    with open(os.path.join(output_dir, "train_log.json")) as f:
        return json.load(f)["steps"]


def _token_file(tokens: Any, scratch: str) -> str:
    """A path for ``tokens``: itself when it is one, else ids written out."""
    if isinstance(tokens, (str, os.PathLike)):
        return os.path.abspath(_path("tokens", tokens))
    a = _array("tokens", tokens)
    if a.ndim == 1:
        if not np.issubdtype(a.dtype, np.integer) or (a.size and a.min() < 0):
            raise Error(f"tokens: expected non-negative integer ids, got {a.dtype}"
                        + (f" with minimum {a.min()}" if a.size else ""))
        _check_int_range("tokens", a, np.iinfo(np.uint32).max, "uint32")
        # Named alike on every call, so that a resumed run sees the same data.
        path = os.path.join(scratch, "tokens.npy")
        np.save(path, a.astype(np.uint32))
        return path
    ids = _ids("tokens", a)
    path = os.path.join(scratch, "tokens.json")
    with open(path, "w") as f:
        json.dump({"input_ids": ids.tolist(), "labels": ids.tolist()}, f)
    return path
