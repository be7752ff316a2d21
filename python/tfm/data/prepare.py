"""Tokenizing a corpus into the prepared-data format (format.py).

Sources are read as streams, one record at a time, and tokenized in
batches with the checkpoint's own tokenizer (transformers); the output is
written as it goes, so memory stays bounded by one batch. Everything is
written into the output folder under temporary names and renamed at the
end: a failure leaves nothing behind.
"""

import json
import os
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .format import (FORMAT, LOSS_MASK, META, OFFSETS, TOKENS, VERSION, DataError, file_sha256,
                     id_dtype, write_meta)

# Documents tokenized per call of the (fast, parallel) tokenizer.
BATCH = 512


# ------------------------------------------------------------------ sources
def _jsonl_records(path: str) -> Iterator[Tuple[str, Any, int]]:
    """(where, record, bytes read) per non-blank line."""
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                yield "", None, len(line)
                continue
            try:
                record = json.loads(line)
            except ValueError as e:
                raise DataError(f"{path}:{n}: not valid JSON: {e}") from None
            yield f"{path}:{n}", record, len(line)


def _parquet_records(path: str, column: str) -> Iterator[Tuple[str, Any, int]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(f"{path}: reading parquet needs pyarrow (pip install pyarrow)") from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises its own error types
        raise DataError(f"{path}: not a parquet file: {e}") from None
    if column not in pf.schema_arrow.names:
        raise DataError(f"{path}: no column '{column}' (columns: {', '.join(pf.schema_arrow.names)})")
    row = 0
    per_row = os.path.getsize(path) / max(pf.metadata.num_rows, 1)
    for batch in pf.iter_batches(columns=[column], batch_size=1024):
        for value in batch.column(0).to_pylist():
            yield f"{path}: row {row}", {column: value}, int(per_row)
            row += 1


def _text_records(path: str, field: str) -> Iterator[Tuple[str, Any, int]]:
    """Plain text: documents are separated by blank lines."""
    lines: List[str] = []
    first = 0
    pending = 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            pending += len(raw)
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise DataError(f"{path}:{n}: not UTF-8 text: {e}") from None
            if line.strip():
                if not lines:
                    first = n
                lines.append(line)
                continue
            if lines:
                yield f"{path}:{first}", {field: "\n".join(lines)}, pending
                lines, pending = [], 0
    if lines:
        yield f"{path}:{first}", {field: "\n".join(lines)}, pending
    elif pending:  # trailing blank lines: progress only
        yield "", None, pending


def _records(path: str, field: str) -> Iterator[Tuple[str, Any, int]]:
    if path.endswith((".jsonl", ".json")):
        return _jsonl_records(path)
    if path.endswith(".parquet"):
        return _parquet_records(path, field)
    return _text_records(path, field)


# ------------------------------------------------------------------ tokenizing
def _load_tokenizer(path: str):
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise DataError("tokenizing needs transformers (pip install transformers)") from None
    if not os.path.isdir(path):
        raise DataError(f"{path}: not a folder holding a tokenizer")
    try:
        return AutoTokenizer.from_pretrained(path)
    except Exception as e:  # transformers raises many kinds
        raise DataError(f"{path}: cannot load its tokenizer: {e}") from None


def _check_vocabulary(tokenizer, folder: str) -> int:
    """The id bound: the tokenizer's size, which must fit the checkpoint's
    vocabulary when the folder is a checkpoint."""
    size = len(tokenizer)
    config = os.path.join(folder, "config.json")
    if os.path.exists(config):
        with open(config) as f:
            cfg = json.load(f)
        vocab = cfg.get("vocab_size") or cfg.get("text_config", {}).get("vocab_size")
        if isinstance(vocab, int) and size > vocab:
            raise DataError(f"{folder}: the tokenizer has {size} tokens, more than the "
                            f"checkpoint's vocab_size {vocab}")
    return size


def _text_of(where: str, record: Any, field: str) -> str:
    if not isinstance(record, dict) or field not in record:
        raise DataError(f"{where}: no field '{field}'")
    text = record[field]
    if not isinstance(text, str):
        raise DataError(f"{where}: field '{field}' is not text")
    if not text.strip():
        raise DataError(f"{where}: empty document")
    return text


def _messages_of(where: str, record: Any, field: str) -> list:
    if not isinstance(record, dict) or field not in record:
        raise DataError(f"{where}: no field '{field}'")
    messages = record[field]
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and "content" in m
            for m in messages):
        raise DataError(f"{where}: field '{field}' is not a list of "
                        "{\"role\": ..., \"content\": ...} messages")
    return messages


class _Writer:
    """tokens.bin, offsets.bin (and loss_mask.bin) under temporary names."""

    def __init__(self, out: str, dtype: str, with_mask: bool):
        self.paths = {name: os.path.join(out, name + ".partial")
                      for name in (TOKENS, OFFSETS) + ((LOSS_MASK,) if with_mask else ())}
        self.files = {name: open(p, "wb") for name, p in self.paths.items()}
        self.dtype = np.dtype(dtype).newbyteorder("<")
        self.total = 0
        self.documents = 0
        self.files[OFFSETS].write(np.zeros(1, dtype="<u8").tobytes())

    def add(self, ids: Sequence[int], mask: Optional[Sequence[int]] = None):
        self.files[TOKENS].write(np.asarray(ids, dtype=self.dtype).tobytes())
        if mask is not None:
            self.files[LOSS_MASK].write(np.asarray(mask, dtype=np.uint8).tobytes())
        self.total += len(ids)
        self.documents += 1
        self.files[OFFSETS].write(np.array([self.total], dtype="<u8").tobytes())

    def close(self):
        for f in self.files.values():
            f.close()

    def commit(self):
        self.close()
        for name, p in self.paths.items():
            os.replace(p, p[:-len(".partial")])

    def discard(self):
        self.close()
        for p in self.paths.values():
            if os.path.exists(p):
                os.remove(p)


def _progress(total: int, quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="B", unit_scale=True, desc="tokenizing", file=sys.stderr)


def prepare(inputs: Sequence[str], tokenizer: str, output: str, *,
            text_field: Optional[str] = None, chat_field: Optional[str] = None,
            quiet: bool = False) -> Dict[str, Any]:
    """Tokenizes ``inputs`` (``.jsonl``, ``.parquet`` or plain text, whose
    documents are separated by blank lines) with the tokenizer in the folder
    ``tokenizer`` (a checkpoint's, as transformers loads it) into the
    prepared folder ``output`` (created; it must not exist or be empty).

    Text documents (``text_field``, default ``"text"``) are tokenized as the
    tokenizer does when called directly, then EOS is appended. Chat records
    (``chat_field``: a list of ``{"role", "content"}`` messages) are rendered
    by the tokenizer's chat template; only assistant tokens are targets
    (``return_assistant_tokens_mask``), recorded in ``loss_mask.bin``.
    Returns the meta data written to ``meta.json``."""
    if text_field and chat_field:
        raise DataError("give text_field or chat_field, not both")
    if not inputs:
        raise DataError("no input files")
    for path in inputs:
        if not os.path.isfile(path):
            raise DataError(f"{path}: no such file")
    tok = _load_tokenizer(tokenizer)
    bound = _check_vocabulary(tok, tokenizer)
    if tok.eos_token_id is None:
        raise DataError(f"{tokenizer}: the tokenizer has no EOS token to end documents with")
    eos = int(tok.eos_token_id)
    field = chat_field or text_field or "text"
    if chat_field and not tok.chat_template:
        raise DataError(f"{tokenizer}: the tokenizer has no chat template")

    created = False
    if os.path.exists(output):
        if not os.path.isdir(output) or os.listdir(output):
            raise DataError(f"{output}: exists and is not an empty folder")
    else:
        os.makedirs(output)
        created = True
    dtype = id_dtype(bound)
    writer = _Writer(output, dtype, with_mask=bool(chat_field))
    bar = _progress(sum(os.path.getsize(p) for p in inputs), quiet)
    try:
        for path in inputs:
            pending: List[Tuple[str, Any]] = []

            def flush():
                if chat_field:
                    for where, record in pending:
                        _add_chat(writer, tok, where, _messages_of(where, record, field), eos)
                else:
                    texts = [_text_of(w, r, field) for w, r in pending]
                    for ids in tok(texts)["input_ids"]:
                        writer.add(list(ids) + ([eos] if not ids or ids[-1] != eos else []))
                pending.clear()

            for where, record, nbytes in _records(path, field):
                if bar:
                    bar.update(nbytes)
                if record is None:
                    continue
                pending.append((where, record))
                if len(pending) == BATCH:
                    flush()
            flush()
        if writer.documents == 0:
            raise DataError(f"{', '.join(inputs)}: no documents")
        meta = {
            "format": FORMAT, "version": VERSION, "dtype": dtype,
            "documents": writer.documents, "tokens": writer.total,
            "vocab_size": bound, "eos_token_id": eos, "loss_mask": bool(chat_field),
            "field": field, "kind": "chat" if chat_field else "text",
            "sources": [{"file": os.path.basename(p), "bytes": os.path.getsize(p)}
                        for p in inputs],
            "tokenizer_sha256": _tokenizer_hash(tokenizer),
        }
        write_meta(os.path.join(output, META + ".partial"), meta)
        writer.commit()
        os.replace(os.path.join(output, META + ".partial"), os.path.join(output, META))
        return meta
    except BaseException:
        writer.discard()
        partial_meta = os.path.join(output, META + ".partial")
        if os.path.exists(partial_meta):
            os.remove(partial_meta)
        if created:
            os.rmdir(output)
        raise
    finally:
        if bar:
            bar.close()


def _add_chat(writer: _Writer, tok, where: str, messages: list, eos: int):
    try:
        out = tok.apply_chat_template(messages, tokenize=True, return_dict=True,
                                      return_assistant_tokens_mask=True)
    except Exception as e:  # template errors are jinja's
        raise DataError(f"{where}: the chat template failed: {e}") from None
    ids, mask = list(out["input_ids"]), list(out["assistant_masks"])
    if not any(mask):
        raise DataError(f"{where}: no assistant tokens to train on (an assistant turn is "
                        "needed, and a chat template that marks it with {% generation %})")
    if ids[-1] != eos:  # EOS ends the document; not an assistant token
        ids.append(eos)
        mask.append(0)
    writer.add(ids, mask)


def _tokenizer_hash(folder: str) -> Optional[str]:
    """The hash of the tokenizer's own file: tfm-train compares it with the
    checkpoint's."""
    path = os.path.join(folder, "tokenizer.json")
    return file_sha256(path) if os.path.exists(path) else None
