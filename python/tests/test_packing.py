"""Packed documents and padding through the Python API, against Hugging
Face run on each document alone."""

import numpy as np
import pytest
import torch

import tfm


def test_position_ids_restarts_are_document_boundaries(llama):
    """One row of three documents in HF's flattened-batch convention
    (position ids restart at 0, -100 at each document's first label): the
    logits are HF's on each document, the loss theirs weighted by target
    count."""
    folder, hf = llama
    g = torch.Generator().manual_seed(3)
    docs = [torch.randint(0, 96, (1, n), generator=g) for n in (5, 3, 6)]
    ids = torch.cat(docs, 1)
    positions = torch.cat([torch.arange(d.shape[1]) for d in docs])[None]
    labels = ids.clone()
    start = 0
    for d in docs:
        labels[0, start] = -100
        start += d.shape[1]
    step = tfm.compile(tfm.import_hf(folder))
    out = step.run(folder, ids, labels=labels, position_ids=positions)
    with torch.no_grad():
        refs = [hf(input_ids=d, labels=d) for d in docs]
    ref_logits = torch.cat([r.logits for r in refs], 1)
    counts = [d.shape[1] - 1 for d in docs]
    ref_loss = sum(c * r.loss.item() for c, r in zip(counts, refs)) / sum(counts)
    logits = torch.from_numpy(np.array(out.logits))
    assert ((logits - ref_logits).abs() <= 1e-4 + 1e-4 * ref_logits.abs()).all()
    assert abs(out.loss - ref_loss) <= 1e-5
    # Without the position ids the documents see each other.
    mixed = step.run(None, ids, labels=labels)
    assert abs(mixed.loss - ref_loss) > 1e-3


def test_right_padding_is_honoured_and_left_padding_refused(llama, batch):
    folder, hf = llama
    ids = batch % 96
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    step = tfm.compile(tfm.import_hf(folder))
    out = step.run(folder, ids, labels=ids, attention_mask=mask)
    labels = ids.clone()
    labels[1, 6:] = -100  # what the mask means for the loss
    with torch.no_grad():
        ref = hf(input_ids=ids, labels=labels, attention_mask=mask)
    assert abs(out.loss - ref.loss.item()) <= 1e-5
    left = torch.ones_like(ids)
    left[0, :2] = 0
    with pytest.raises(tfm.Error, match="padding before token 2"):
        step.run(None, ids, labels=ids, attention_mask=left)
