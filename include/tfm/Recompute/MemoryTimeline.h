//===- MemoryTimeline.h - activation bytes over a training step -*- C++ -*-===//
//
// What tfm-memory-report draws and reports: the activation memory of a
// function after every op it runs (scans expanded layer by layer), for
// concrete batch and sequence sizes.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RECOMPUTE_MEMORYTIMELINE_H
#define TFM_RECOMPUTE_MEMORYTIMELINE_H

#include "tfm/Interfaces/CostOpInterface.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::tfm {

struct MemoryTimeline {
  /// Activation bytes after each op execution.
  std::vector<double> bytes;
  /// Index into `bytes` where the first backward (reverse) scan starts, or
  /// bytes.size() when there is none.
  size_t backwardStart = 0;
  double peak = 0;
};

/// Simulates `func` op by op: an activation (a tensor whose size depends on
/// the batch or sequence) is live from its definition to its last use;
/// inside a scan, a layer's values live within the layer, its stacked
/// outputs grow by one slice per layer, and a backward scan frees each
/// layer's slice of the stacked inputs it reads last once that layer is
/// done (the per-layer buffers a runtime would allocate).
MemoryTimeline simulateActivationMemory(func::FuncOp func,
                                        const DimResolver &dims);

/// One layer kind's frontier and chosen point, for the SVG.
struct FrontierSeries {
  std::string name;
  /// (saved bytes per token, recompute FLOPs per token) per frontier point.
  std::vector<std::pair<double, double>> points;
  std::pair<double, double> chosen;
  double stepFlopsPerToken = 0, saveAllBytesPerToken = 0;
};

/// An SVG (no dependency) of `timeline` and of the frontiers.
void writeMemorySvg(llvm::raw_ostream &os, llvm::StringRef title,
                    const MemoryTimeline &timeline,
                    llvm::ArrayRef<FrontierSeries> frontiers);

} // namespace mlir::tfm

#endif // TFM_RECOMPUTE_MEMORYTIMELINE_H
