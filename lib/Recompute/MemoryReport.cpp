//===- MemoryReport.cpp - the tfm-memory-report pass ----------------------===//

#include "tfm/Analysis/ReportOptions.h"
#include "tfm/Analysis/TfmCosts.h"
#include "tfm/Recompute/MemoryTimeline.h"
#include "tfm/Recompute/Passes.h"
#include "tfm/Recompute/SavedValues.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMMEMORYREPORTPASS
#include "tfm/Recompute/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

namespace {

/// Batch- or sequence-sized tensors (weights and their gradients are not
/// activations).
bool isActivation(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && !r.hasStaticShape();
}

/// For every value `block`'s ops read (their nested ops included), the op
/// of `block` that reads it last.
llvm::DenseMap<Value, Operation *> lastUses(Block &block) {
  llvm::DenseMap<Value, Operation *> last;
  for (Operation &op : block)
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        last[v] = &op;
    });
  return last;
}

class Simulator {
public:
  explicit Simulator(const DimResolver &dims) : dims(dims) {}

  MemoryTimeline run(func::FuncOp func) {
    Block &block = func.getBody().front();
    last = lastUses(block);
    timeline.backwardStart = SIZE_MAX;
    for (Operation &op : block) {
      if (auto repeat = dyn_cast<RepeatOp>(op))
        runRepeat(repeat);
      else {
        for (Value r : op.getResults())
          alloc(r, bytes(r));
        record(0);
      }
      releaseAfter(&op);
    }
    if (timeline.backwardStart == SIZE_MAX)
      timeline.backwardStart = timeline.bytes.size();
    return timeline;
  }

private:
  // By value: a scan's per-chunk states are sized by their chunk count.
  double bytes(Value v) const {
    return isActivation(v.getType()) ? dims.bytes(v) : 0;
  }
  void alloc(Value v, double b) {
    top[v] += b;
    live += b;
  }
  void release(Value v) {
    auto it = top.find(v);
    if (it == top.end())
      return;
    live -= it->second;
    top.erase(it);
  }
  /// Frees what `op` read last, and its results nobody reads.
  void releaseAfter(Operation *op) {
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (last.lookup(v) == op)
          release(v);
    });
    for (Value r : op->getResults())
      if (r.use_empty())
        release(r);
  }
  void record(double inner) {
    timeline.bytes.push_back(live + inner);
    timeline.peak = std::max(timeline.peak, live + inner);
  }

  void runRepeat(RepeatOp repeat) {
    if (repeat.getReverse() && timeline.backwardStart == SIZE_MAX)
      timeline.backwardStart = timeline.bytes.size();
    unsigned numCarried = repeat.getInits().size();
    // The carried values move into the scan when it reads them last.
    for (Value init : repeat.getInits())
      if (last.lookup(init) == repeat.getOperation())
        release(init);
    for (Value r : repeat.getStackedResults())
      alloc(r, 0);
    int64_t n = repeat.getNumLayers();
    for (int64_t step = 0; step < n; ++step) {
      int64_t layer = repeat.getReverse() ? n - 1 - step : step;
      unsigned kind = repeat.getKindOfLayer(layer);
      Block &body = repeat.getKinds()[kind].front();
      llvm::DenseMap<Value, Operation *> bodyLast = lastUses(body);
      llvm::DenseMap<Value, double> inner;
      double innerBytes = 0;
      for (unsigned i = 0; i < numCarried; ++i) {
        double b = bytes(body.getArgument(i));
        inner[body.getArgument(i)] = b;
        innerBytes += b;
      }
      for (Operation &op : body) {
        if (auto yield = dyn_cast<YieldOp>(op)) {
          // Stacked outputs join their stacked buffers; carried values
          // become the next layer's inputs.
          SmallVector<unsigned> stacked = repeat.getStackedOfKind(kind);
          for (auto [pos, i] : llvm::enumerate(stacked))
            alloc(repeat.getResult(numCarried + i),
                  bytes(yield.getOperand(numCarried + pos)));
          innerBytes = 0;
          for (unsigned i = 0; i < numCarried; ++i)
            innerBytes += bytes(yield.getOperand(i));
          break;
        }
        for (Value r : op.getResults()) {
          double b = bytes(r);
          inner[r] += b;
          innerBytes += b;
        }
        record(innerBytes);
        auto free = [&](Value v) {
          auto it = inner.find(v);
          if (it == inner.end())
            return;
          innerBytes -= it->second;
          inner.erase(it);
        };
        op.walk([&](Operation *nested) {
          for (Value v : nested->getOperands())
            if (bodyLast.lookup(v) == &op)
              free(v);
        });
        for (Value r : op.getResults())
          if (r.use_empty())
            free(r);
      }
      // This layer's slices of the stacked inputs read here last are done.
      SmallVector<unsigned> inputs = repeat.getWeightsOfKind(kind);
      for (auto [pos, j] : llvm::enumerate(inputs)) {
        Value input = repeat.getWeights()[j];
        if (last.lookup(input) != repeat.getOperation() || !top.count(input))
          continue;
        // One layer's slice, sized as this kind reads it (its block
        // argument: a slot shared by kinds may hold different values).
        double slice = bytes(body.getArgument(numCarried + pos));
        slice = std::min(slice, top[input]);
        top[input] -= slice;
        live -= slice;
      }
      record(innerBytes);
    }
    for (Value r : repeat.getCarriedResults())
      alloc(r, bytes(r));
  }

  const DimResolver &dims;
  MemoryTimeline timeline;
  double live = 0;
  llvm::DenseMap<Value, double> top;
  llvm::DenseMap<Value, Operation *> last;
};

} // namespace

MemoryTimeline mlir::tfm::simulateActivationMemory(func::FuncOp func,
                                                   const DimResolver &dims) {
  return Simulator(dims).run(func);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// Forward values outside the scans that the backward reads: results of
/// ops that do not depend on the cotangent arguments (those after the
/// primal function's), read by ops that do.
struct OutsideValues {
  double bytesPerToken = 0;
  std::vector<std::string> names;
};

OutsideValues outsideValues(func::FuncOp vjp, const DimResolver &dims) {
  OutsideValues out;
  auto module = vjp->getParentOfType<ModuleOp>();
  StringRef name = vjp.getName();
  if (!name.consume_back("_vjp"))
    return out;
  auto primal = module.lookupSymbol<func::FuncOp>(name);
  if (!primal)
    return out;
  Block &block = vjp.getBody().front();
  llvm::DenseSet<Value> backward;
  for (unsigned i = primal.getNumArguments(); i < vjp.getNumArguments(); ++i)
    backward.insert(vjp.getArgument(i));
  llvm::DenseSet<Operation *> backwardOps;
  for (Operation &op : block) {
    bool reads = false;
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        reads |= backward.contains(v);
    });
    if (!reads)
      continue;
    backwardOps.insert(&op);
    for (Value r : op.getResults())
      backward.insert(r);
  }
  double tokens = double(dims.batch) * double(dims.seq);
  ValueNamer namer;
  for (Operation &op : block) {
    std::string base = namer.next(op);
    if (backwardOps.contains(&op))
      continue;
    // A forward scan's stacked slots are its layer kinds' business; its
    // carried results are values like any other.
    auto repeat = dyn_cast<RepeatOp>(op);
    for (OpResult r : op.getResults()) {
      if ((repeat && r.getResultNumber() >= repeat.getInits().size()) ||
          !isActivation(r.getType()) ||
          !llvm::any_of(r.getUsers(), [&](Operation *u) {
            return backwardOps.contains(block.findAncestorOpInBlock(*u));
          }))
        continue;
      out.bytesPerToken += dims.bytes(r) / tokens;
      out.names.push_back(ValueNamer::of(r, base));
    }
  }
  return out;
}

double numberOf(DictionaryAttr d, StringRef key) {
  if (auto f = d.getAs<FloatAttr>(key))
    return f.getValueAsDouble();
  if (auto i = d.getAs<IntegerAttr>(key))
    return double(i.getInt());
  return 0;
}

llvm::json::Array namesJson(DictionaryAttr d, StringRef key) {
  llvm::json::Array names;
  if (auto list = d.getAs<ArrayAttr>(key))
    for (Attribute a : list)
      if (auto s = dyn_cast<StringAttr>(a))
        names.push_back(s.str());
  return names;
}

/// The timeline has a point per op of every layer, unlike the per-kind
/// plans, so a scan's layer count is bounded.
LogicalResult checkTimelineLength(func::FuncOp func) {
  WalkResult result = func.walk([&](RepeatOp repeat) {
    if (repeat.getNumLayers() <= kMaxEnumeratedLayers)
      return WalkResult::advance();
    mlir::emitError(repeat.getLoc())
        << "tfm-memory-report: the tfm.repeat runs " << repeat.getNumLayers()
        << " layers; the per-layer timeline takes at most "
        << kMaxEnumeratedLayers;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct TfmMemoryReportPass
    : mlir::tfm::impl::TfmMemoryReportPassBase<TfmMemoryReportPass> {
  using TfmMemoryReportPassBase::TfmMemoryReportPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkReportOptions(module, "tfm-memory-report", batch, seq,
                                  {{"json", jsonPath}, {"svg", svgPath}})))
      return signalPassFailure();
    llvm::json::Array functions;
    std::vector<FrontierSeries> series;
    MemoryTimeline shown;
    std::string shownName;
    Builder b(module.getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<SavedScan> scans = findSavedScans(func);
      if (scans.empty())
        continue;
      if (failed(checkTimelineLength(func)))
        return signalPassFailure();
      DimResolver dims(batch, seq, moeTopKOf(func));
      // The plans: as tfm-plan-recompute recorded them, or save-all.
      SmallVector<DictionaryAttr> kinds;
      std::string budget = "save-all";
      for (SavedScan &scan : scans) {
        if (auto plan = scan.backward->getAttrOfType<DictionaryAttr>(
                kRecomputePlanAttrName)) {
          if (auto s = plan.getAs<StringAttr>("budget"))
            budget = s.str();
          if (auto list = plan.getAs<ArrayAttr>("kinds"))
            for (Attribute a : list)
              if (auto d = dyn_cast<DictionaryAttr>(a))
                kinds.push_back(d);
          continue;
        }
        RecomputeBudget saveAll;
        for (unsigned k = 0; k < scan.forward.getKinds().size(); ++k) {
          LayerKindGraph g = buildLayerKindGraph(scan, k, dims);
          llvm::Expected<RecomputePlan> plan =
              planLayerKind(g, saveAll, PlannerOptions());
          if (!plan) {
            func.emitError() << llvm::toString(plan.takeError());
            return signalPassFailure();
          }
          kinds.push_back(describePlan(b, g, *plan, PlannerOptions(),
                                       /*withFrontier=*/true));
        }
      }
      OutsideValues outside = outsideValues(func, dims);
      MemoryTimeline timeline = simulateActivationMemory(func, dims);

      llvm::outs() << "tfm-memory-report @" << func.getName() << ": batch "
                   << batch << ", seq " << seq << ", budget " << budget << "\n";
      llvm::outs() << llvm::format("  %-22s %6s %14s %14s %14s %16s %8s\n",
                                   "layer kind", "layers", "save-all B/tok",
                                   "saved B/tok", "offload B/tok",
                                   "recompute F/tok", "+step");
      llvm::json::Array kindsJson;
      for (DictionaryAttr d : kinds) {
        std::string name;
        if (auto s = d.getAs<StringAttr>("name"))
          name = s.str();
        double step = numberOf(d, "step_flops_per_token");
        double rec = numberOf(d, "recompute_flops_per_token");
        llvm::outs() << llvm::format(
            "  %-22s %6.0f %14.0f %14.0f %14.0f %16.6e %7.1f%%\n", name.c_str(),
            numberOf(d, "layers"), numberOf(d, "save_all_bytes_per_token"),
            numberOf(d, "saved_bytes_per_token"),
            numberOf(d, "offloaded_bytes_per_token"), rec,
            step > 0 ? 100 * rec / step : 0.0);
        llvm::json::Array frontier;
        FrontierSeries fs;
        fs.name = name;
        fs.stepFlopsPerToken = step;
        fs.saveAllBytesPerToken = numberOf(d, "save_all_bytes_per_token");
        fs.chosen = {numberOf(d, "saved_bytes_per_token"), rec};
        if (auto list = d.getAs<ArrayAttr>("frontier"))
          for (Attribute a : list) {
            auto p = dyn_cast<ArrayAttr>(a);
            if (!p || p.size() != 3)
              continue;
            auto at = [&](unsigned i) {
              auto f = dyn_cast<FloatAttr>(p[i]);
              return f ? f.getValueAsDouble() : 0.0;
            };
            frontier.push_back(
                llvm::json::Object{{"fraction", at(0)},
                                   {"saved_bytes_per_token", at(1)},
                                   {"recompute_flops_per_token", at(2)}});
            fs.points.push_back({at(1), at(2)});
          }
        series.push_back(std::move(fs));
        kindsJson.push_back(llvm::json::Object{
            {"name", name},
            {"layers", int64_t(numberOf(d, "layers"))},
            {"save_all_bytes_per_token",
             numberOf(d, "save_all_bytes_per_token")},
            {"saved_bytes_per_token", numberOf(d, "saved_bytes_per_token")},
            {"offloaded_bytes_per_token",
             numberOf(d, "offloaded_bytes_per_token")},
            {"recompute_flops_per_token", rec},
            {"recompute_traffic_bytes_per_token",
             numberOf(d, "recompute_traffic_bytes_per_token")},
            {"step_flops_per_token", step},
            {"saved", namesJson(d, "saved")},
            {"recomputed", namesJson(d, "recomputed")},
            {"offloaded", namesJson(d, "offloaded")},
            {"frontier", std::move(frontier)}});
      }
      llvm::outs() << llvm::format("  outside the layers: %.0f B/tok",
                                   outside.bytesPerToken);
      if (!outside.names.empty())
        llvm::outs() << " (" << llvm::join(outside.names, ", ") << ")";
      llvm::outs() << "\n"
                   << llvm::format("  peak activation bytes: %.0f (%.1f MiB)\n",
                                   timeline.peak,
                                   timeline.peak / (1024.0 * 1024.0));
      // What trains: only trained parameters have gradients and optimizer
      // state (f32 AdamW moments, 8 B each); frozen ones (--freeze, LoRA's
      // base) have neither.
      // Under ZeRO-1 rank 0 holds the most: ceil(rows / ranks) of each.
      int64_t trained = 0, frozen = 0, perRank = 0;
      int64_t split = zero == 1 ? std::max<int64_t>(ranks, 1) : 1;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto param = func.getArgAttrOfType<ParamAttr>(i, kParamAttrName);
        auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
        if (!param || param.getBuffer() || !type || !type.hasStaticShape())
          continue;
        (param.isTrainable() ? trained : frozen) += type.getNumElements();
        if (param.isTrainable() && type.getRank() > 0) {
          int64_t rows = type.getDimSize(0);
          perRank += llvm::divideCeil(rows, split) *
                     (type.getNumElements() / std::max<int64_t>(rows, 1));
        }
      }
      llvm::outs() << llvm::format(
          "  parameters: %lld trained, %lld frozen; AdamW state of the "
          "trained %.1f MiB",
          (long long)trained, (long long)frozen,
          trained * 8.0 / (1024.0 * 1024.0));
      if (ranks > 1)
        llvm::outs() << llvm::format(
            ", %.1f MiB per rank of %lld%s", perRank * 8.0 / (1024.0 * 1024.0),
            (long long)ranks, zero == 1 ? " (ZeRO-1)" : "");
      llvm::outs() << "\n";
      llvm::json::Array outsideNames;
      for (const std::string &n : outside.names)
        outsideNames.push_back(n);
      functions.push_back(llvm::json::Object{
          {"name", func.getName().str()},
          {"budget", budget},
          {"layer_kinds", std::move(kindsJson)},
          {"outside_layers",
           llvm::json::Object{{"saved_bytes_per_token", outside.bytesPerToken},
                              {"saved", std::move(outsideNames)}}},
          {"peak_activation_bytes", timeline.peak},
          {"trained_parameters", trained},
          {"frozen_parameters", frozen},
          {"optimizer_state_bytes_per_rank", perRank * 8}});
      if (shownName.empty()) {
        shown = std::move(timeline);
        shownName = func.getName().str();
      }
    }
    if (functions.empty()) {
      module.emitError("tfm-memory-report: no function with a backward scan "
                       "(run tfm-autodiff first)");
      return signalPassFailure();
    }
    if (!jsonPath.empty()) {
      llvm::json::Object doc{{"batch", int64_t(batch)},
                             {"seq", int64_t(seq)},
                             {"functions", std::move(functions)}};
      if (failed(writeFile(jsonPath, [&](llvm::raw_ostream &os) {
            os << llvm::formatv("{0:2}\n", llvm::json::Value(std::move(doc)));
          })))
        return signalPassFailure();
    }
    if (!svgPath.empty()) {
      std::string title = "@" + shownName + ", batch " + std::to_string(batch) +
                          ", seq " + std::to_string(seq);
      if (failed(writeFile(svgPath, [&](llvm::raw_ostream &os) {
            writeMemorySvg(os, title, shown, series);
          })))
        return signalPassFailure();
    }
    markAllAnalysesPreserved();
  }

  LogicalResult writeFile(StringRef path,
                          llvm::function_ref<void(llvm::raw_ostream &)> write) {
    return writeReportFile(getOperation(), "tfm-memory-report", path, write);
  }
};

} // namespace
