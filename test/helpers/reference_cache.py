"""A content-addressed cache of the HF reference computations.

A numeric check's reference (the checkpoint it writes, the token batch, and
what transformers computes on them) depends only on the check's own
arguments, the helper sources and the installed torch/transformers — never
on the tfm build under test. Several lit RUN lines share one reference (the
same variant on the CPU, in gpu-sim, without fusion, under recompute plans),
and the sanitizer build's lit run repeats every one of them; the cache lets
all of those compute the reference once.

    TFM_REFERENCE_CACHE=DIR   where entries live (lit sets it to
                              <build>/test/reference-cache unless given;
                              scripts/sanitize.sh points the sanitizer
                              build at the default build's)
    TFM_REFERENCE_CACHE=off   compute every reference afresh

An entry is a directory named by the SHA-256 of its key: the helper sources
(every .py file here), the versions of the packages the reference runs on,
the Python version, and the fields the caller passes. It is written aside
and renamed into place, so a reader sees a whole entry or none; two writers
racing for one key both compute it and the first rename wins.
"""

import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HELPERS = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ("torch", "transformers", "safetensors", "numpy")


def _key(tool, fields):
    h = hashlib.sha256()
    for name in sorted(os.listdir(HELPERS)):
        if name.endswith(".py"):
            with open(os.path.join(HELPERS, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read() + b"\0")
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            versions[p] = None
    h.update(json.dumps({"tool": tool, "fields": fields, "versions": versions,
                         "python": sys.version}, sort_keys=True).encode())
    return h.hexdigest()


def reference_dir(tool, fields, build, scratch):
    """The directory holding the reference for (tool, fields): a cached
    entry, or one `build(directory)` fills now (and that is then cached).
    `fields` must be JSON-serialisable and name everything the reference
    depends on besides the helper sources. Without a cache the reference is
    built under `scratch`."""
    root = os.environ.get("TFM_REFERENCE_CACHE", "")
    if root in ("", "off"):
        out = os.path.join(scratch, "reference")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        build(out)
        return out
    os.makedirs(root, exist_ok=True)
    entry = os.path.join(root, _key(tool, fields))
    if os.path.isdir(entry):
        print(f"reference: cached ({os.path.basename(entry)[:12]})")
        return entry
    tmp = tempfile.mkdtemp(prefix=".building-", dir=root)
    try:
        build(tmp)
        try:
            os.rename(tmp, entry)
        except OSError:  # another run placed it first: use theirs
            if not os.path.isdir(entry):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return entry


_NUMPY_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
                 "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
                 "BOOL": np.bool_}


def load_tensors(path):
    """A safetensors file as {name: numpy array}, bf16 widened to f32 (numpy
    has no bf16; safetensors.numpy refuses it), without importing torch."""
    with open(path, "rb") as f:
        data = f.read()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    body = memoryview(data)[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(body[lo:hi], dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(body[lo:hi], dtype=np.dtype(_NUMPY_DTYPES[info["dtype"]]).newbyteorder("<"))
        out[name] = arr.reshape(info["shape"])
    return out
