"""Checks the installed package's programs against Hugging Face: the C and
C++ consumers (built with find_package(tfm)) and the installed
tfm-import-hf all report num_parameters() of the model HF builds from the
same config (on the meta device: exact counts, no weights).

    check_consumer.py PREFIX CONSUMER_BUILD CONFIG.json
"""

import json
import re
import subprocess
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    prefix, build, config_path = sys.argv[1:4]
    with torch.device("meta"):
        hf = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(config_path))
    want = hf.num_parameters()
    c = int(re.search(r"(\d+) parameters", run(f"{build}/count-c", config_path)).group(1))
    cxx = int(re.search(r"(\d+) parameters", run(f"{build}/count-cxx", config_path)).group(1))
    tool = json.loads(run(f"{prefix}/bin/tfm-import-hf", config_path, "--summary"))["parameters"]
    assert c == cxx == tool == want, (c, cxx, tool, want)
    print(f"installed tfm: C, C++ and tfm-import-hf give {want} parameters, as HF")


if __name__ == "__main__":
    main()
