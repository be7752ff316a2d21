//===- RecomputePlanner.h - save, recompute or offload each activation -*-===//
//
// The backward of a tfm.repeat reads per-layer values the forward scan
// saves (tfm-autodiff's slots: forward stacked outputs that only the
// backward scan reads). For one layer kind, the planner sees the forward
// body as a graph of values and ops, each value with its bytes per token and
// each op with the FLOPs per token to rebuild its results, and decides for
// every value whether it is saved, offloaded to host memory or rebuilt in
// the backward from values that are (chains included). The choice is an
// integer program solved exactly with COIN-OR CBC (docs/passes.md,
// "tfm-plan-recompute", gives the formulation).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RECOMPUTE_RECOMPUTEPLANNER_H
#define TFM_RECOMPUTE_RECOMPUTEPLANNER_H

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::tfm {

/// What `--tfm-plan-recompute{budget=...}` and `tfm-run --recompute=` take.
struct RecomputeBudget {
  enum class Kind {
    /// Save what the adjoints read (tfm-autodiff's plan; nothing changes).
    SaveAll,
    /// Rebuild element-wise ops and norms only; save the rest.
    Selective,
    /// Keep each layer's carried inputs only; replay the layer.
    Full,
    /// At most `value` x the save-all bytes of each layer kind.
    Fraction,
    /// At most `value` bytes per token and layer.
    BytesPerToken,
  };
  Kind kind = Kind::SaveAll;
  double value = 1;
  /// As the user wrote it (messages, the plan attribute).
  std::string spelling = "save-all";

  /// "0.5", "50%", "68KiB", "1.5MiB", "4096B", "save-all", "selective",
  /// "full". The error says what is accepted.
  static llvm::Expected<RecomputeBudget> parse(llvm::StringRef text);
};

/// A value of one layer body: a carried block argument (the layer's input)
/// or an op result. Weights and values from above the scan are not values
/// here: the backward has them for free.
struct PlanValue {
  mlir::Value value;
  /// "input#0", "matmul#2", "rmsnorm#0:1" (op mnemonic, its rank among the
  /// body's ops of that name, and the result when the op has several).
  std::string name;
  double bytesPerToken = 0;
  /// The op (index into LayerKindGraph::ops) that defines it; -1 for an
  /// input.
  int def = -1;
  /// The backward reads it (tfm-autodiff saved it).
  bool needed = false;
};

/// An op of one layer body.
struct PlanOp {
  mlir::Operation *op = nullptr;
  /// FLOPs per token of one execution (the cost interface).
  double flopsPerToken = 0;
  /// Side-effect free, no regions, and every operand available to the
  /// backward or a value of the body.
  bool recomputable = false;
  /// Element-wise, a norm, RoPE or a view: what `selective` rebuilds.
  bool cheap = false;
  /// Operands that are body values (indices into LayerKindGraph::values).
  std::vector<int> inputs;
  /// Bytes per token one execution reads and writes (the cost interface):
  /// among plans of equal FLOPs, the planner rebuilds the least traffic (a
  /// gather costs no FLOPs but is not free).
  double trafficPerToken = 0;
};

/// One layer kind of a forward scan, as the planner sees it.
struct LayerKindGraph {
  std::string name;
  unsigned kind = 0;
  /// Layers of this kind.
  int64_t layers = 0;
  std::vector<PlanValue> values;
  std::vector<PlanOp> ops;
  /// FLOPs per token of one layer of this kind: forward body, backward body
  /// (before any recompute).
  double forwardFlopsPerToken = 0, backwardFlopsPerToken = 0;

  double saveAllBytesPerToken() const;
};

/// The planner's choice for one layer kind.
struct RecomputePlan {
  /// Per value: kept on the device, or on the host.
  std::vector<bool> saved, offloaded;
  /// Per op: run again in the backward.
  std::vector<bool> recomputed;
  double savedBytesPerToken = 0, offloadedBytesPerToken = 0;
  double recomputeFlopsPerToken = 0, recomputeTrafficPerToken = 0;
};

struct PlannerOptions {
  /// Host link bandwidth in bytes/s for offloading (0: never offload) and
  /// the device's FLOP/s, which together say how many bytes a layer's
  /// forward compute hides.
  double offloadBytesPerSecond = 0;
  double deviceFlopsPerSecond = 989e12;
};

/// The plan with the fewest recompute FLOPs whose saved bytes fit `budget`
/// (then, among those, the least traffic rebuilt, then the fewest saved and
/// offloaded bytes; `selective`: the fewest bytes, then FLOPs, then
/// traffic). Errors: a
/// budget below the least any plan saves (the message gives that minimum),
/// or the solver failing.
llvm::Expected<RecomputePlan> planLayerKind(const LayerKindGraph &graph,
                                            const RecomputeBudget &budget,
                                            const PlannerOptions &options);

/// The fewest bytes per token any plan of `graph` saves (everything
/// recomputable rebuilt).
llvm::Expected<double> minimumSavedBytes(const LayerKindGraph &graph);

} // namespace mlir::tfm

#endif // TFM_RECOMPUTE_RECOMPUTEPLANNER_H
