"""tfm.data prepare against the tokenizer called directly (transformers)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from transformers import AutoTokenizer

import tfm.data
from tfm.data import DataError, Prepared

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CORPUS = os.path.join(ROOT, "examples", "data", "shakespeare-train.txt")


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    """The examples' tiny BPE tokenizer, built offline from the corpus."""
    out = str(tmp_path_factory.mktemp("tokenizer"))
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "make_tokenizer.py"), out],
                   check=True, capture_output=True)
    return out


def paragraphs(path):
    with open(path) as f:
        return [p.strip("\n") for p in f.read().split("\n\n") if p.strip()]


def test_text_corpus_gives_the_tokenizers_ids_with_eos(tokenizer_dir, tmp_path):
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    meta = tfm.data.prepare([CORPUS], tokenizer_dir, str(tmp_path / "a"), quiet=True)
    data = Prepared(str(tmp_path / "a"))
    docs = paragraphs(CORPUS)
    assert len(data) == len(docs) == meta["documents"] == 742
    for d in (0, 1, 100, len(docs) - 1):
        want = tok(docs[d])["input_ids"] + [tok.eos_token_id]
        assert data.document(d).tolist() == want
    assert data.loss_mask is None and meta["dtype"] == "uint16"
    # The same input gives byte-identical files.
    tfm.data.prepare([CORPUS], tokenizer_dir, str(tmp_path / "b"), quiet=True)
    for name in os.listdir(tmp_path / "a"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_jsonl_and_parquet_records(tokenizer_dir, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    texts = paragraphs(CORPUS)[:20]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps({"body": t, "id": i}) + "\n" for i, t in enumerate(texts)))
    pq.write_table(pa.table({"body": texts}), str(tmp_path / "c.parquet"))
    for src in ("c.jsonl", "c.parquet"):
        out = str(tmp_path / (src + ".out"))
        tfm.data.prepare([str(tmp_path / src)], tokenizer_dir, out, text_field="body", quiet=True)
        data = Prepared(out)
        assert [data.document(d).tolist() for d in range(len(data))] == \
            [tok(t)["input_ids"] + [tok.eos_token_id] for t in texts]


def test_chat_masks_exactly_the_non_assistant_tokens(tokenizer_dir, tmp_path):
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    chats = [[{"role": "system", "content": "You are Menenius."},
              {"role": "user", "content": "What work's, my countrymen, in hand?"},
              {"role": "assistant", "content": "Where go you with bats and clubs?"}],
             [{"role": "user", "content": "Speak."},
              {"role": "assistant", "content": "Speak, speak."},
              {"role": "user", "content": "Resolved?"},
              {"role": "assistant", "content": "Resolved. resolved."}]]
    src = tmp_path / "chat.jsonl"
    src.write_text("".join(json.dumps({"messages": m}) + "\n" for m in chats))
    meta = tfm.data.prepare([str(src)], tokenizer_dir, str(tmp_path / "out"),
                            chat_field="messages", quiet=True)
    data = Prepared(str(tmp_path / "out"))
    assert meta["loss_mask"] and len(data) == 2
    for d, messages in enumerate(chats):
        ref = tok.apply_chat_template(messages, tokenize=True, return_dict=True,
                                      return_assistant_tokens_mask=True)
        ids = data.document(d).tolist()
        lo, hi = int(data.offsets[d]), int(data.offsets[d + 1])
        mask = data.loss_mask[lo:hi].tolist()
        # The rendered conversation, then EOS (not a target).
        assert ids == list(ref["input_ids"]) + [tok.eos_token_id]
        assert mask == list(ref["assistant_masks"]) + [0]
        assert 0 < sum(mask) < len(mask)


@pytest.mark.parametrize("lines, kind, message", [
    (['{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}',
      '{"text": "no messages"}'],
     "chat", r"bad.jsonl:2: no field 'messages'"),
    (['{"text": "a"}', '{"text": "  "}'], "text", r"bad.jsonl:2: empty document"),
    (['{"text": "a"}', '{"text": 3}'], "text", r"bad.jsonl:2: field 'text' is not text"),
    (['{"text": "a"}', '{oops'], "text", r"bad.jsonl:2: not valid JSON"),
    (['{"messages": [{"role": "user", "content": "hi"}]}'], "chat",
     r"bad.jsonl:1: no assistant tokens"),
])
def test_bad_records_name_file_and_line_and_write_nothing(tokenizer_dir, tmp_path, lines, kind,
                                                          message):
    src = tmp_path / "bad.jsonl"
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    kw = {"chat_field": "messages"} if kind == "chat" else {}
    with pytest.raises(DataError, match=message):
        tfm.data.prepare([str(src)], tokenizer_dir, str(out), quiet=True, **kw)
    assert not out.exists()


def test_a_tokenizer_larger_than_the_checkpoints_vocabulary(tokenizer_dir, tmp_path):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    for name in os.listdir(tokenizer_dir):
        (ckpt / name).write_bytes((open(os.path.join(tokenizer_dir, name), "rb")).read())
    (ckpt / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 256}))
    with pytest.raises(DataError, match="512 tokens, more than the checkpoint's vocab_size 256"):
        tfm.data.prepare([CORPUS], str(ckpt), str(tmp_path / "out"), quiet=True)
    assert not (tmp_path / "out").exists()


def test_output_must_be_new_and_cli_reports_one_line(tokenizer_dir, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    cmd = [sys.executable, "-m", "tfm.data", "prepare", CORPUS, "--tokenizer", tokenizer_dir,
           "--output", str(out), "--quiet"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"tfm.data: error: {out}: exists and is not an empty folder"]
    assert os.listdir(out) == ["keep.txt"]
    fresh = str(tmp_path / "fresh")
    run = subprocess.run(cmd[:-2] + [fresh, "--quiet"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "742 documents" in run.stdout
    assert sorted(os.listdir(fresh)) == ["meta.json", "offsets.bin", "tokens.bin"]
    assert np.fromfile(os.path.join(fresh, "offsets.bin"), dtype="<u8")[-1] == \
        os.path.getsize(os.path.join(fresh, "tokens.bin")) // 2
