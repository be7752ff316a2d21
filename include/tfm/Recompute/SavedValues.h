//===- SavedValues.h - what a derived backward reads from its forward -*-===//
//
// After tfm-autodiff, a forward tfm.repeat yields, besides its own results,
// the *slots*: per-layer values stacked on the layer dimension that only the
// backward tfm.repeat reads (as stacked inputs). This analysis finds those
// pairs of scans, and builds for each layer kind the graph the recompute
// planner solves over: the forward body's values with their bytes per
// token, its ops with their FLOPs per token, and which values the backward
// reads.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RECOMPUTE_SAVEDVALUES_H
#define TFM_RECOMPUTE_SAVEDVALUES_H

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Interfaces/CostOpInterface.h"
#include "tfm/Recompute/RecomputePlanner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace mlir::tfm {

/// A forward scan and the backward scan that reads what it saved.
struct SavedScan {
  RepeatOp forward, backward;
  struct Slot {
    /// Index into backward.getWeights() and forward.getResults().
    unsigned backwardInput, forwardResult;
  };
  SmallVector<Slot> slots;

  /// Forward body `kind`'s value saved into `slot` (what it yields), or null
  /// when the slot does not cover the kind.
  Value savedValue(const Slot &slot, unsigned kind);
  /// The backward body `kind`'s argument that reads `slot`, or null.
  BlockArgument slotArgument(const Slot &slot, unsigned kind);
  /// The backward body `kind`'s argument holding the same weight as forward
  /// body argument `arg` (a stacked input of both scans), or null.
  BlockArgument weightInBackward(BlockArgument arg, unsigned kind);
};

/// The scans of `func` (top level) whose forward saves for a backward scan.
SmallVector<SavedScan> findSavedScans(func::FuncOp func);

/// The planner's graph of layer kind `kind` of `scan.forward`; sizes for
/// `dims` (bytes and FLOPs divided by its batch x seq).
LayerKindGraph buildLayerKindGraph(SavedScan &scan, unsigned kind,
                                   const DimResolver &dims);

/// `plan` of `g` as the `tfm.recompute_plan` entry of its kind: name,
/// layers, save_all_bytes_per_token, saved_bytes_per_token,
/// offloaded_bytes_per_token, recompute_flops_per_token,
/// recompute_traffic_bytes_per_token, step_flops_per_token, saved /
/// recomputed / offloaded (value names) and, `withFrontier`, frontier
/// ([fraction, saved bytes, recompute FLOPs] per token at 100, 75, 50, 35,
/// 25 and 15% of save-all, where feasible; six more plans).
DictionaryAttr describePlan(Builder &b, const LayerKindGraph &g,
                            const RecomputePlan &plan,
                            const PlannerOptions &options, bool withFrontier);

/// Names the values of one block as reports list them: "matmul#2" (the op
/// mnemonic, tfm's without its dialect, and its rank among the block's ops of
/// that name), "rmsnorm#0:1" for a result of an op with several. Call
/// `next` on every op of the block, in order.
class ValueNamer {
public:
  /// The base name of `op` (counting it).
  std::string next(Operation &op);
  /// The name of result `r` of an op whose base name is `base`.
  static std::string of(OpResult r, llvm::StringRef base);

private:
  llvm::StringMap<unsigned> seen;
};

} // namespace mlir::tfm

#endif // TFM_RECOMPUTE_SAVEDVALUES_H
