"""A torch.nn.Module over a tfm-compiled training step.

    from tfm.torch import CausalLM
    model = CausalLM("ckpt")                       # parameters under their HF names
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss = model(input_ids, labels=input_ids)      # the compiled forward
    loss.backward()                                # .grad from the compiled backward
    opt.step()

The parameters are ordinary torch tensors (float32, CPU), named as in the
checkpoint and as HF's own model names them (``named_parameters()`` gives
``model.layers.0.self_attn.q_proj.weight``, ...), so any torch optimizer,
scheduler or clipping utility works on them. Each forward hands the current
values to the compiled step and runs forward and backward at once; ``backward()`` then scales the saved gradients by the
incoming one. The loss is HF's (mean over labels != -100, shifted inside).
Checkpoint tensors that get no gradient (buffers, frozen ones) are buffers.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np
import torch

import tfm

__all__ = ["CausalLM"]


class _CompiledLoss(torch.autograd.Function):
    """loss(params) with the compiled step's gradients as its backward."""

    @staticmethod
    def forward(ctx, module: "CausalLM", input_ids, labels, *params):
        module._push()
        out = module._step.run(None, input_ids, labels)
        grads = out.grads
        # Copies into torch's own storage: the views die with the result,
        # the tensors outlive it.
        ctx.grads = [torch.tensor(grads[n]) for n in module._trained]
        return torch.tensor(out.loss, dtype=torch.float32)

    @staticmethod
    def backward(ctx, grad_loss):
        return (None, None, None) + tuple(g * grad_loss for g in ctx.grads)


def _child(root: torch.nn.Module, path: list) -> torch.nn.Module:
    """The submodule at ``path`` under ``root``, made (empty) if absent."""
    node = root
    for part in path:
        if part not in node._modules:
            node.add_module(part, torch.nn.Module())
        node = node._modules[part]
    return node


class CausalLM(torch.nn.Module):
    """An HF checkpoint's compiled training step as a torch module."""

    def __init__(self, checkpoint: "os.PathLike[str] | str", dtype: str = "f32",
                 fusion: bool = True, recompute: Optional[str] = None,
                 device: str = "cpu", moe_aux_loss: str = "auto"):
        super().__init__()
        checkpoint = os.fspath(checkpoint)
        model = tfm.import_hf(checkpoint)
        self.config_path = os.path.join(model.directory, "config.json")
        step = tfm.compile(model, device=device, dtype=dtype, fusion=fusion,
                           recompute=recompute, grads=True, logits=False,
                           moe_aux_loss=moe_aux_loss)
        step.bind(checkpoint)
        # Which names get gradients: one run of the smallest batch.
        probe = step.run(None, [[0, 0]], [[0, 0]])
        trained = set(probe.grads)
        self._names, self._trained = [], []
        for name, value in step.parameters().items():
            *path, leaf = name.split(".")
            owner = _child(self, path)
            # torch's own (resizable) storage, not a numpy array's: FSDP2
            # frees and regrows unsharded parameters in place.
            tensor = torch.tensor(value)
            if name in trained:
                owner.register_parameter(leaf, torch.nn.Parameter(tensor))
                self._trained.append(name)
            else:
                owner.register_buffer(leaf, tensor)
            self._names.append(name)
        self._step = step

    def _tensor(self, name: str) -> torch.Tensor:
        *path, leaf = name.split(".")
        node = self
        for part in path:
            node = node._modules[part]
        return getattr(node, leaf)

    def _push(self) -> None:
        """Binds the current values into the step. Every forward does: a
        version check would miss edits through ``.data`` (which torch does
        not count), and the copy is small next to the step itself."""
        self._step.bind_tensors({n: self._tensor(n) for n in self._names})

    def forward(self, input_ids: Any, labels: Any) -> torch.Tensor:
        """The mean cross-entropy of ``labels`` (HF's loss); differentiable
        in every parameter."""
        params = [self._tensor(n) for n in self._trained]
        return _CompiledLoss.apply(self, input_ids, labels, *params)
