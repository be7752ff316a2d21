"""The prepared-data format `tfm-train --data` reads (docs/data.md).

A folder holding:

- ``tokens.bin``: every document's token ids, concatenated, little-endian
  ``uint16`` (vocabularies up to 65536) or ``uint32`` (``meta.json``'s
  ``dtype``); each document ends with the tokenizer's EOS.
- ``offsets.bin``: little-endian ``uint64``, ``documents + 1`` entries:
  document ``d`` is ``tokens[offsets[d]:offsets[d + 1]]``; ``offsets[0] = 0``
  and the last entry is the number of tokens.
- ``loss_mask.bin`` (chat data only): one ``uint8`` per token, 1 where the
  token is a target (assistant turns), 0 elsewhere.
- ``meta.json``: what the rest holds and how it was made.

The same input and tokenizer give byte-identical files.
"""

import hashlib
import json
import os
from typing import Any, Dict, Optional

import numpy as np

FORMAT = "tfm-prepared-tokens"
VERSION = 1
TOKENS, OFFSETS, LOSS_MASK, META = "tokens.bin", "offsets.bin", "loss_mask.bin", "meta.json"


class DataError(Exception):
    """Bad input: the message names the file and the record."""


def id_dtype(vocab_size: int) -> str:
    return "uint16" if vocab_size <= 1 << 16 else "uint32"


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_meta(path: str, meta: Dict[str, Any]) -> None:
    with open(path, "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


class Prepared:
    """A prepared folder, read back (memory-mapped)."""

    def __init__(self, folder: str):
        self.folder = folder
        meta_path = os.path.join(folder, META)
        try:
            with open(meta_path) as f:
                self.meta = json.load(f)
        except (OSError, ValueError) as e:
            raise DataError(f"{meta_path}: cannot read: {e}") from None
        if self.meta.get("format") != FORMAT or self.meta.get("version") != VERSION:
            raise DataError(f"{meta_path}: not a {FORMAT} v{VERSION} folder")
        self.tokens = np.memmap(os.path.join(folder, TOKENS),
                                dtype=np.dtype(self.meta["dtype"]).newbyteorder("<"), mode="r")
        self.offsets = np.fromfile(os.path.join(folder, OFFSETS), dtype="<u8")
        mask = os.path.join(folder, LOSS_MASK)
        self.loss_mask: Optional[np.ndarray] = (
            np.fromfile(mask, dtype=np.uint8) if self.meta.get("loss_mask") else None)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def document(self, d: int) -> np.ndarray:
        return np.asarray(self.tokens[self.offsets[d]:self.offsets[d + 1]])
