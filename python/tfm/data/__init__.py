"""Training data for tfm: corpora tokenized with the checkpoint's own
tokenizer into the prepared format ``tfm-train --data`` reads.

    python -m tfm.data prepare corpus.jsonl --tokenizer CKPT --output DATA
    tfm.data.prepare(["corpus.jsonl"], "CKPT", "DATA")
"""

from .format import DataError, Prepared
from .prepare import prepare

__all__ = ["DataError", "Prepared", "prepare"]
