"""Copies the checkpoint folder SRC to DST with N extra one-element f32
tensors (extra.0 ...) in its model.safetensors, standard library only.

    add_many_tensors.py SRC DST N
"""

import json
import os
import shutil
import struct
import sys

src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copytree(src, dst)
path = os.path.join(dst, "model.safetensors")
with open(path, "rb") as f:
    blob = f.read()
length = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + length])
data = blob[8 + length:]
end = len(data)
for i in range(n):
    header[f"extra.{i}"] = {"dtype": "F32", "shape": [1],
                            "data_offsets": [end + 4 * i, end + 4 * i + 4]}
text = json.dumps(header).encode()
text += b" " * ((8 - len(text) % 8) % 8)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data + b"\0" * (4 * n))
