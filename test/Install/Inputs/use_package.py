"""Uses an installed tfm package with nothing but numpy beside it: imports a
checkpoint, runs its step with gradients, trains it one update, and checks
an error. Prints what it got, for comparing two installs of the package.

    use_package.py CHECKPOINT_DIR OUT_DIR
"""

import sys

import numpy as np

import tfm

folder, out = sys.argv[1], sys.argv[2]
print("from", "site-packages" if "site-packages" in tfm.__file__ else tfm.__file__)
model = tfm.import_hf(folder)
print(model.architecture, model.num_parameters, "parameters")
ids = np.array([[1, 5, 9, 2, 7, 3]])
result = tfm.compile(model, grads=True).run(folder, ids, labels=ids)
print(f"loss {result.loss:.6f}, {len(result.grads)} gradients, "
      f"|d norm| {np.abs(result.grads['model.norm.weight']).sum():.6f}")
log = tfm.train(folder, ids, out, steps=1, progress=False)
print(f"trained: step {log[0]['step']} loss {log[0]['loss']:.6f}")
try:
    tfm.import_hf(folder + "/missing")
except tfm.Error as e:
    print("tfm.Error:", str(e).replace(folder, "DIR"))
