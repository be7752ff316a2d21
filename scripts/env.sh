# Shared settings for the scripts (sourced).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TFM_BUILD=${TFM_BUILD:-$root/build}
# The interpreter the reference virtualenv is made from.
TFM_BASE_PYTHON=${TFM_BASE_PYTHON:-$(command -v python3)}
req_hash=$(sha256sum "$root/python/requirements-test.txt" | cut -c1-12)
TFM_VENV=${TFM_VENV:-$HOME/.cache/tfm/venv-$req_hash}
export PATH="$TFM_BUILD/bin:$PATH"
