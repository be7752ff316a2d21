//===- MockDriver.cpp - a CPU stand-in for libcuda.so.1 (tests only) ------===//
//
// Lets the default tests drive the CUDA runtime and a compiled GPU step on a
// machine without a GPU (test/GPU/mock-*.test): memory is host memory, PTX
// modules are parsed for their `.entry` names and parameter counts, and a
// launch checks what the real driver would reject (unknown kernel, empty or
// oversized grid/block, null parameter pointers) instead of running
// anything. Kernel results are therefore not computed; numbers come only
// from a real GPU (bench/gpu-check.sh).
//
// At exit it prints one line to stderr when TFM_MOCK_CUDA_REPORT is set:
//   mock-cuda: <modules> modules, <kernels> kernels, <launches> launches,
//   <errors> errors
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <string>

namespace {
struct Kernel {
  std::string name;
  int params = 0;
};
struct Module {
  std::map<std::string, Kernel> kernels;
};
struct Stats {
  int modules = 0, kernels = 0, launches = 0, errors = 0;
  ~Stats() {
    if (std::getenv("TFM_MOCK_CUDA_REPORT"))
      std::fprintf(
          stderr, "mock-cuda: %d modules, %d kernels, %d launches, %d errors\n",
          modules, kernels, launches, errors);
  }
} stats;

CUresult error(CUresult r, const char *why) {
  ++stats.errors;
  std::fprintf(stderr, "mock-cuda: %s\n", why);
  return r;
}

/// `.visible .entry name(` ... `)`: the parameters are the `.param` lines.
Module *parsePtx(const char *text) {
  auto *m = new Module();
  std::string ptx(text);
  std::regex entry(R"(\.entry\s+(\w+)\s*\(([^)]*)\))");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry);
       it != std::sregex_iterator(); ++it) {
    Kernel k;
    k.name = (*it)[1];
    std::string params = (*it)[2];
    for (size_t p = params.find(".param"); p != std::string::npos;
         p = params.find(".param", p + 1))
      ++k.params;
    m->kernels[k.name] = k;
  }
  ++stats.modules;
  stats.kernels += int(m->kernels.size());
  return m;
}
} // namespace

extern "C" {
CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuGetErrorString(CUresult, const char **s) {
  *s = "mock error";
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  std::snprintf(name, len, "tfm mock device");
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice) {
  *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice) {
  static int context;
  *c = reinterpret_cast<CUcontext>(&context);
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }
CUresult cuMemGetInfo(size_t *free, size_t *total) {
  *free = size_t(2) << 30;
  *total = size_t(4) << 30;
  return CUDA_SUCCESS;
}
CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  *p = reinterpret_cast<CUdeviceptr>(
      std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  return *p ? CUDA_SUCCESS : error(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned) {
  return cuMemAlloc(p, bytes);
}
CUresult cuMemFree(CUdeviceptr p) {
  std::free(reinterpret_cast<void *>(p));
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  *m = reinterpret_cast<CUmodule>(parsePtx(static_cast<const char *>(image)));
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned,
                            CUjit_option *, void **) {
  return cuModuleLoadData(m, image);
}
CUresult cuModuleUnload(CUmodule m) {
  delete reinterpret_cast<Module *>(m);
  return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  auto &kernels = reinterpret_cast<Module *>(m)->kernels;
  auto it = kernels.find(name);
  if (it == kernels.end())
    return error(CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction: no such kernel");
  *f = reinterpret_cast<CUfunction>(&it->second);
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        CUstream, void **params, void **extra) {
  const Kernel *k = reinterpret_cast<const Kernel *>(f);
  if (!k)
    return error(CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel: null function");
  if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535)
    return error(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel: bad grid");
  if (size_t(bx) * by * bz > 1024)
    return error(CUDA_ERROR_INVALID_VALUE,
                 "cuLaunchKernel: more than 1024 threads per block");
  if (smem > 48 * 1024 || extra)
    return error(CUDA_ERROR_INVALID_VALUE,
                 "cuLaunchKernel: unexpected smem/extra");
  if (k->params && !params)
    return error(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel: no parameters");
  for (int i = 0; i < k->params; ++i)
    if (!params[i])
      return error(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel: null parameter");
  ++stats.launches;
  return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned) {
  static int stream;
  *s = reinterpret_cast<CUstream>(&stream);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
} // extern "C"
