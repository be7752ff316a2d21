//===- DumpGpuBinaries.cpp - write each gpu.binary object to a file -------===//
//
// The PTX that gpu-module-to-binary{format=isa} embeds is an escaped string
// attribute; this pass writes every object as a file so it can be read,
// diffed and fed to ptxas (test/GPU/ptxas-*.test, docs/gpu.md):
//
//   <dir>/<binary>.<chip>.ptx     format isa
//   <dir>/<binary>.<chip>.cubin   format bin
//   <dir>/<binary>.<chip>.fatbin  format fatbin
//
// The module is left unchanged.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMDUMPGPUBINARIESPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
StringRef extension(gpu::CompilationTarget format) {
  switch (format) {
  case gpu::CompilationTarget::Assembly:
    return "ptx";
  case gpu::CompilationTarget::Binary:
    return "cubin";
  case gpu::CompilationTarget::Fatbin:
    return "fatbin";
  default:
    return "llvm";
  }
}

struct TfmDumpGpuBinariesPass
    : mlir::tfm::impl::TfmDumpGpuBinariesPassBase<TfmDumpGpuBinariesPass> {
  using Base::Base;
  void runOnOperation() override {
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
      getOperation().emitError("cannot create directory '")
          << dir << "': " << ec.message();
      return signalPassFailure();
    }
    getOperation().walk([&](gpu::BinaryOp binary) {
      for (Attribute a : binary.getObjectsAttr()) {
        auto object = cast<gpu::ObjectAttr>(a);
        std::string chip = "target";
        if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
          chip = nvvm.getChip().str();
        llvm::SmallString<256> path(dir.getValue());
        llvm::sys::path::append(path, (binary.getName() + "." + chip + "." +
                                       extension(object.getFormat()))
                                          .str());
        std::error_code ec;
        llvm::raw_fd_ostream os(path, ec);
        if (ec) {
          binary.emitError("cannot write '") << path << "': " << ec.message();
          return signalPassFailure();
        }
        os << object.getObject().getValue();
      }
    });
  }
};
} // namespace
