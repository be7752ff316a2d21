//===- StripGpuBinaryTimings.cpp - deterministic gpu.binary objects -------===//
//
// gpu-module-to-binary stores the back end's wall time in each object's
// properties; a compiled step must be byte-identical for the same input
// (caching, diffing, reproducible builds), so the timings are dropped.
//
//===----------------------------------------------------------------------===//

#include "tfm/GPU/Passes.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMSTRIPGPUBINARYTIMINGSPASS
#include "tfm/GPU/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;

namespace {
/// `object` without its `*TimeInMs` properties (itself when it has none).
gpu::ObjectAttr withoutTimings(gpu::ObjectAttr object) {
  DictionaryAttr properties = object.getProperties();
  if (!properties)
    return object;
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute entry : properties)
    if (!entry.getName().strref().ends_with("TimeInMs"))
      kept.push_back(entry);
  if (kept.size() == properties.size())
    return object;
  MLIRContext *ctx = object.getContext();
  return gpu::ObjectAttr::get(
      ctx, object.getTarget(), object.getFormat(), object.getObject(),
      kept.empty() ? DictionaryAttr() : DictionaryAttr::get(ctx, kept),
      object.getKernels());
}

struct TfmStripGpuBinaryTimingsPass
    : mlir::tfm::impl::TfmStripGpuBinaryTimingsPassBase<
          TfmStripGpuBinaryTimingsPass> {
  void runOnOperation() override {
    getOperation().walk([](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      for (Attribute a : binary.getObjects())
        objects.push_back(withoutTimings(cast<gpu::ObjectAttr>(a)));
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    });
  }
};
} // namespace
