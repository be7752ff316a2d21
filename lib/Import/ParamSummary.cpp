//===- ParamSummary.cpp - parameter counts from a tfm module --------------===//
//
// Counts come from the IR (argument shapes and #tfm.param), not from the
// config, so they check the importer's output rather than restate its input.
//
//===----------------------------------------------------------------------===//

#include "tfm/Import/ParamSummary.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::tfm;

FailureOr<ParamSummary> mlir::tfm::summarizeParams(ModuleOp module,
                                                   StringRef funcName) {
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return module.emitError() << "no function @" << funcName;
  ParamSummary summary;
  for (BlockArgument arg : func.getArguments()) {
    auto param =
        func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param)
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t n = 1;
    for (int64_t d : type.getShape())
      if (llvm::MulOverflow(n, d, n))
        return func.emitError() << "parameter '" << param.getName()
                                << "' has more elements than int64 holds";
    if (param.getBuffer()) {
      if (llvm::AddOverflow(summary.buffers, n, summary.buffers))
        return func.emitError() << "buffer count overflows int64";
      continue;
    }
    std::string kind =
        param.getKind().empty() ? "other" : param.getKind().str();
    if (llvm::AddOverflow(summary.total, n, summary.total) ||
        llvm::AddOverflow(summary.byKind[kind], n, summary.byKind[kind]))
      return func.emitError() << "parameter count overflows int64";
  }
  if (auto prefixes = func->getAttrOfType<ArrayAttr>(kIgnoredTensorsAttrName))
    for (Attribute p : prefixes)
      summary.ignored.push_back(cast<StringAttr>(p).str());
  func.walk([&](RepeatOp repeat) {
    auto names = repeat.getKindNames();
    for (auto [k, n] : llvm::enumerate(repeat.getLayerCountsByKind())) {
      if (n == 0)
        continue;
      std::string name = names ? cast<StringAttr>((*names)[k]).str()
                               : "kind" + std::to_string(k);
      summary.layerKinds[name] += n;
    }
  });
  return summary;
}

std::string mlir::tfm::formatSummaryJson(ModuleOp module,
                                         const ParamSummary &summary) {
  nlohmann::ordered_json out;
  auto hf = module->getAttrOfType<DictionaryAttr>("tfm.hf");
  auto getStr = [&](StringRef key) -> std::string {
    if (auto s = hf ? hf.getAs<StringAttr>(key) : StringAttr())
      return s.str();
    return "";
  };
  auto getInt = [&](StringRef key) -> int64_t {
    if (auto i = hf ? hf.getAs<IntegerAttr>(key) : IntegerAttr())
      return i.getInt();
    return 0;
  };
  out["architecture"] = getStr("architecture");
  out["model_type"] = getStr("model_type");
  out["num_layers"] = getInt("num_layers");
  out["layer_kinds"] = summary.layerKinds;
  out["hidden_size"] = getInt("hidden_size");
  out["vocab_size"] = getInt("vocab_size");
  auto tied = hf ? hf.getAs<BoolAttr>("tied_embeddings") : BoolAttr();
  out["tied_embeddings"] = tied && tied.getValue();
  out["parameters"] = summary.total;
  out["parameters_by_kind"] = summary.byKind;
  if (summary.buffers)
    out["buffers"] = summary.buffers;
  // Multi-token-prediction layers: in checkpoints, skipped on load (as HF).
  if (!summary.ignored.empty())
    out["skipped_checkpoint_tensors"] = summary.ignored;
  return out.dump(2);
}
