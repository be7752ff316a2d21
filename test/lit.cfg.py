# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TFM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "Unit",
                   "CMakeLists.txt", "helpers"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfm_obj_root, "test")
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# The build's own programs first, so that helpers that run them by name
# (tfm-capi-test) find them when lit runs on the build's test/ directly.
llvm_config.with_environment("PATH", config.tfm_tools_dir, append_path=True)

tools = ["tfm-opt", "tfm-import-hf", "tfm-run", "tfm-train",
         "tfm-config-fuzzer", "tfm-checkpoint-fuzzer", "tfm-token-fuzzer",
         "tfm-pipeline-fuzzer", "tfm-resume-fuzzer"]
llvm_config.add_tool_substitutions(
    [ToolSubst(t, unresolved="ignore") for t in tools],
    [config.tfm_tools_dir, config.llvm_tools_dir])

# Tests under python/ (.py) run with the reference virtualenv; anything else
# ending in .py is a helper, not a test.
# Before the defaults, which map %python to the interpreter running lit.
config.substitutions.insert(0, ("%python", config.tfm_python or "python3"))
config.substitutions.append(("%tfm_src", config.tfm_src_root))
config.substitutions.append(("%tfm_obj_root", config.tfm_obj_root))
config.substitutions.append(("%hf_helpers",
                             os.path.join(config.tfm_src_root, "test", "helpers")))

def _has_reference_env(modules="torch, transformers"):
    if not config.tfm_python or not os.path.exists(config.tfm_python):
        return False
    try:
        subprocess.run([config.tfm_python, "-c", "import " + modules],
                       check=True, capture_output=True, timeout=120)
        return True
    except Exception:
        return False

if _has_reference_env():
    config.available_features.add("hf-reference")
    # PEFT (python/requirements-adapters.txt): the adapters' reference.
    if _has_reference_env("peft"):
        config.available_features.add("peft-reference")
# HF references computed once per key (test/helpers/reference_cache.py):
# RUN lines sharing a variant, and the sanitizer build's run pointed at the
# default build's cache (scripts/sanitize.sh), reuse them.
config.environment["TFM_REFERENCE_CACHE"] = os.environ.get(
    "TFM_REFERENCE_CACHE", os.path.join(config.tfm_obj_root, "test", "reference-cache"))
# Long matrices (every family under every recompute plan): opt in with
# TFM_SLOW_TESTS=1; CI runs one family per layer structure instead.
if os.environ.get("TFM_SLOW_TESTS") == "1":
    config.available_features.add("slow-tests")
# A loadable CUDA driver (libcuda.so.1) with at least one device: the tests
# that run kernels need it; the ones checking the no-GPU path need its absence.
def _has_cuda_device():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 \
            and count.value > 0
    except OSError:
        return False

# CPU stand-ins for libcuda and cuBLASLt (test/MockCuda), for the tests that
# drive the CUDA runtime without a GPU.
_mock = os.path.join(config.tfm_obj_root, "lib", "mock-cuda")
if os.path.exists(os.path.join(_mock, "libcuda.so.1")):
    config.available_features.add("mock-cuda")
    config.substitutions.append(
        ("%mock_cuda_env",
         f"env TFM_CUDA_DRIVER={_mock}/libcuda.so.1 "
         f"TFM_CUBLASLT={_mock}/libcublasLt.so.13 TFM_MOCK_CUDA_REPORT=1"))

if _has_cuda_device():
    config.available_features.add("cuda-device")
# The CUDA toolkit (libdevice for the GPU pipeline's math functions); no GPU.
_cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.path.exists(os.path.join(_cuda_home, "nvvm", "libdevice")):
    config.available_features.add("cuda-toolkit")
if shutil.which("clang-format-14"):
    config.available_features.add("clang-format-14")
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")

# Data-parallel tests (REQUIRES: mpi): a build with the MPI communicator and
# MPICH's own launcher (never the `mpirun` alternative, which may be Open
# MPI's). Tests give each rank one BLAS thread (OPENBLAS_NUM_THREADS=1): two
# ranks fit the two cores.
_mpirun = shutil.which("mpirun.mpich")
if config.tfm_have_mpi == "ON" and _mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", _mpirun))

# The sanitizer build (ASan + UBSan): its options, as scripts/env.sh sets
# them, unless given; programs that load libtfm.so into an uninstrumented
# host (Python) preload the ASan runtime through %asan_preload, and programs
# built against it use clang (%consumer_cmake_flags, %pip_cmake_flags).
asan_runtime = asan_preload = consumer_cmake_flags = pip_cmake_flags = ""
if config.tfm_sanitizer:
    config.available_features.add("asan")
    config.environment.setdefault(
        "ASAN_OPTIONS", os.environ.get(
            "ASAN_OPTIONS",
            "allow_user_poisoning=0:detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"))
    config.environment.setdefault(
        "UBSAN_OPTIONS", os.environ.get(
            "UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1"))
    asan_runtime = subprocess.run(
        ["clang++-22", "-print-file-name=libclang_rt.asan-x86_64.so"],
        capture_output=True, text=True).stdout.strip()
    asan_preload = f"env LD_PRELOAD={asan_runtime}"
    config.environment["TFM_ASAN_RUNTIME"] = asan_runtime
    consumer_cmake_flags = "-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22"
    pip_cmake_flags = ("-Ccmake.define.CMAKE_C_COMPILER=clang-22 "
                       "-Ccmake.define.CMAKE_CXX_COMPILER=clang++-22")
config.substitutions.append(("%asan_preload", asan_preload))
# Python with the build tree's tfm package importable (and, in the sanitizer
# build, the ASan runtime it needs); helpers that start such a Python
# themselves read the runtime from TFM_ASAN_RUNTIME.
config.substitutions.append(
    ("%tfm_python", " ".join(filter(None, [
        "env", f"PYTHONPATH={os.path.join(config.tfm_obj_root, 'python_packages')}",
        asan_runtime and f"LD_PRELOAD={asan_runtime}", config.tfm_python or "python3"]))))
config.substitutions.append(("%consumer_cmake_flags", consumer_cmake_flags))
config.substitutions.append(("%pip_cmake_flags", pip_cmake_flags))
