# -*- Python -*-
# GoogleTest unit tests, run by lit so one command reports every test.
import os
import lit.formats

config.name = "TFM-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.tfm_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")

# The CUDA GEMM tests run the runtime against the CPU stand-ins for libcuda
# and cuBLASLt (test/MockCuda); without them they skip.
_mock = os.path.join(config.tfm_obj_root, "lib", "mock-cuda")
if os.path.exists(os.path.join(_mock, "libcuda.so.1")):
    config.environment["TFM_CUDA_DRIVER"] = os.path.join(_mock, "libcuda.so.1")
    config.environment["TFM_CUBLASLT"] = os.path.join(_mock, "libcublasLt.so.13")
