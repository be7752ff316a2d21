//===- CostReport.cpp - the tfm-cost-report pass --------------------------===//

#include "tfm/Analysis/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"

#include <map>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCOSTREPORTPASS
#include "tfm/Analysis/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

struct Row {
  double executions = 0;
  OpCost cost;
};

struct TfmCostReportPass
    : mlir::tfm::impl::TfmCostReportPassBase<TfmCostReportPass> {
  using TfmCostReportPassBase::TfmCostReportPassBase;

  /// Adds `block`'s ops, each executed `times` times, to `rows`; scans
  /// contribute their bodies' ops, once per layer that runs them.
  void collect(Block &block, double times, const DimResolver &dims,
               std::map<std::string, Row> &rows) {
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::IsTerminator>())
        continue;
      if (auto repeat = dyn_cast<RepeatOp>(op)) {
        SmallVector<int64_t> layers(repeat.getKinds().size(), 0);
        for (int64_t l = 0; l < int64_t(repeat.getNumLayers()); ++l)
          ++layers[repeat.getKindOfLayer(l)];
        for (auto [region, n] : llvm::zip(repeat.getKinds(), layers))
          collect(region.front(), times * double(n), dims, rows);
        continue;
      }
      Row &row = rows[op.getName().getStringRef().str()];
      row.executions += times;
      if (auto c = dyn_cast<CostOpInterface>(op))
        row.cost += c.getCost(dims).scaled(times);
    }
  }

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(funcName);
    if (!func || func.isExternal()) {
      getOperation().emitError()
          << "tfm-cost-report: no function body @" << funcName;
      return signalPassFailure();
    }
    // MoE layers share one top-k; it sizes their expert-grouped rows.
    int64_t topK = 1;
    func.walk([&](MoeRouterOp router) { topK = router.getTopK(); });
    DimResolver dims(batch, seq, topK);
    std::map<std::string, Row> rows;
    collect(func.getBody().front(), 1, dims, rows);
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    llvm::stable_sort(sorted, [](auto &a, auto &b) {
      return a.second.cost.flops > b.second.cost.flops;
    });
    llvm::raw_ostream &os = llvm::outs();
    os << "tfm-cost-report @" << funcName << ": batch " << batch << ", seq "
       << seq << "\n";
    os << llvm::format("  %-28s %10s %14s %14s %14s\n", "op", "executions",
                       "FLOP", "bytes read", "bytes written");
    OpCost total;
    for (auto &[name, row] : sorted) {
      os << llvm::format("  %-28s %10.0f %14.6e %14.6e %14.6e\n", name.c_str(),
                         row.executions, row.cost.flops, row.cost.bytesRead,
                         row.cost.bytesWritten);
      total += row.cost;
    }
    double tokens = double(batch) * double(seq);
    os << llvm::format("  %-28s %10s %14.6e %14.6e %14.6e\n", "total", "",
                       total.flops, total.bytesRead, total.bytesWritten);
    os << llvm::format("  per token: %.6e FLOP, %.6e bytes\n",
                       total.flops / tokens,
                       (total.bytesRead + total.bytesWritten) / tokens);
    markAllAnalysesPreserved();
  }
};

} // namespace
