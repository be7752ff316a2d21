# -*- Python -*-
# GoogleTest unit tests, run by lit so one command reports every test.
import os
import lit.formats

config.name = "TFM-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.tfm_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
