//===- CostReport.cpp - the tfm-cost-report pass --------------------------===//

#include "tfm/Analysis/Passes.h"
#include "tfm/Analysis/ReportOptions.h"
#include "tfm/Analysis/TfmCosts.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

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

/// One function's report: rows by op name, sorted by FLOPs.
struct FunctionReport {
  std::string name;
  std::vector<std::pair<std::string, Row>> rows;
  OpCost total;
  double kernels = 0;
};

/// Adds `block`'s ops, each executed `times` times, to `rows`; scans
/// contribute their bodies' ops, once per layer that runs them.
void collect(Block &block, double times, const DimResolver &dims,
             std::map<std::string, Row> &rows) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (auto repeat = dyn_cast<RepeatOp>(op)) {
      SmallVector<int64_t> layers = repeat.getLayerCountsByKind();
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

FunctionReport report(func::FuncOp func, const DimResolver &dims) {
  std::map<std::string, Row> rows;
  collect(func.getBody().front(), 1, dims, rows);
  FunctionReport r;
  r.name = func.getName().str();
  r.rows.assign(rows.begin(), rows.end());
  // Most FLOPs first, ties by name (unique: the map's keys). Not
  // stable_sort: with clang, libstdc++ 12's buffer for it is deprecated.
  llvm::sort(r.rows, [](auto &a, auto &b) {
    if (a.second.cost.flops != b.second.cost.flops)
      return a.second.cost.flops > b.second.cost.flops;
    return a.first < b.first;
  });
  for (auto &[name, row] : r.rows) {
    r.total += row.cost;
    // A kernel moves data; views and constants do not.
    if (row.cost.bytesRead + row.cost.bytesWritten > 0)
      r.kernels += row.executions;
  }
  return r;
}

void print(llvm::raw_ostream &os, const FunctionReport &r, int64_t batch,
           int64_t seq) {
  os << "tfm-cost-report @" << r.name << ": batch " << batch << ", seq " << seq
     << "\n";
  os << llvm::format("  %-28s %10s %14s %14s %14s\n", "op", "executions",
                     "FLOP", "bytes read", "bytes written");
  for (auto &[name, row] : r.rows)
    os << llvm::format("  %-28s %10.0f %14.6e %14.6e %14.6e\n", name.c_str(),
                       row.executions, row.cost.flops, row.cost.bytesRead,
                       row.cost.bytesWritten);
  double tokens = double(batch) * double(seq);
  os << llvm::format("  %-28s %10s %14.6e %14.6e %14.6e\n", "total", "",
                     r.total.flops, r.total.bytesRead, r.total.bytesWritten);
  os << llvm::format("  kernels: %.0f\n", r.kernels);
  os << llvm::format("  per token: %.6e FLOP, %.6e bytes\n",
                     r.total.flops / tokens,
                     (r.total.bytesRead + r.total.bytesWritten) / tokens);
}

llvm::json::Object toJson(const FunctionReport &r) {
  llvm::json::Array ops;
  for (auto &[name, row] : r.rows)
    ops.push_back(llvm::json::Object{{"name", name},
                                     {"executions", row.executions},
                                     {"flops", row.cost.flops},
                                     {"bytes_read", row.cost.bytesRead},
                                     {"bytes_written", row.cost.bytesWritten}});
  return llvm::json::Object{
      {"name", r.name},
      {"ops", std::move(ops)},
      {"total", llvm::json::Object{{"flops", r.total.flops},
                                   {"bytes_read", r.total.bytesRead},
                                   {"bytes_written", r.total.bytesWritten},
                                   {"kernels", r.kernels}}}};
}

struct TfmCostReportPass
    : mlir::tfm::impl::TfmCostReportPassBase<TfmCostReportPass> {
  using TfmCostReportPassBase::TfmCostReportPassBase;

  void runOnOperation() override {
    if (failed(checkReportOptions(getOperation(), "tfm-cost-report", batch, seq,
                                  {{"json", jsonPath}})))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs;
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (!f.isExternal() && (funcName.empty() || f.getName() == funcName))
        funcs.push_back(f);
    if (funcs.empty()) {
      getOperation().emitError()
          << "tfm-cost-report: no function body"
          << (funcName.empty() ? std::string() : " @" + funcName);
      return signalPassFailure();
    }
    llvm::json::Array functions;
    for (func::FuncOp func : funcs) {
      FunctionReport r = report(func, DimResolver(batch, seq, moeTopKOf(func)));
      print(llvm::outs(), r, batch, seq);
      functions.push_back(toJson(r));
    }
    if (!jsonPath.empty()) {
      llvm::json::Object doc;
      doc["batch"] = int64_t(batch);
      doc["seq"] = int64_t(seq);
      doc["functions"] = std::move(functions);
      if (failed(writeReportFile(getOperation(), "tfm-cost-report", jsonPath,
                                 [&](llvm::raw_ostream &os) {
                                   os << llvm::formatv(
                                       "{0:2}\n",
                                       llvm::json::Value(std::move(doc)));
                                 })))
        return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
