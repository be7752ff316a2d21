"""tfm.torch.CausalLM under torch.distributed on 2 CPU processes (gloo):
DistributedDataParallel and FSDP2's fully_shard average the ranks'
gradients, which equals the gradient of the whole batch when every rank's
rows count the same number of targets (docs/python.md's caveat)."""

import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from tfm.torch import CausalLM


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, world, port, folder, ids, wrap, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        module = CausalLM(folder)
        if wrap == "ddp":
            model = torch.nn.parallel.DistributedDataParallel(module)
        else:
            from torch.distributed.fsdp import fully_shard
            model = fully_shard(module)
        rows = ids[rank::world]  # this rank's rows
        loss = model(rows, labels=rows)
        loss.backward()
        grads = {}
        for name, p in module.named_parameters():
            g = p.grad
            if hasattr(g, "full_tensor"):  # FSDP2: a dim-0 shard (DTensor)
                g = g.full_tensor()
            grads[name] = g.detach().clone()
        if rank == 0:
            torch.save({"loss": loss.detach(), "grads": grads}, out)
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("wrap", ["ddp", "fsdp2"])
def test_two_ranks_average_to_the_whole_batch(llama, tmp_path, wrap):
    folder, _ = llama
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 96, (2, 9), generator=g)  # every row counts 8 targets
    out = str(tmp_path / "rank0.pt")
    mp.spawn(rank_main, args=(2, free_port(), folder, ids, wrap, out), nprocs=2, join=True)
    got = torch.load(out)
    whole = CausalLM(folder)
    whole(ids, labels=ids).backward()
    for name, p in whole.named_parameters():
        ref = p.grad
        err = (got["grads"][name] - ref).abs().max() / ref.abs().max().clamp(min=1e-30)
        assert err <= 1e-5, f"{wrap} {name}: {err:.2e}"
