//===- CheckWeightMap.cpp - weight-map consistency check ------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMCHECKWEIGHTMAPPASS
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"

namespace {

struct TfmCheckWeightMapPass
    : impl::TfmCheckWeightMapPassBase<TfmCheckWeightMapPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](func::FuncOp func) {
      if (func.isExternal() || failed(checkFunction(func)))
        ok = false;
    });
    if (!ok)
      signalPassFailure();
  }

  LogicalResult checkFunction(func::FuncOp func) {
    // HF name -> argument that claims it, within this function.
    llvm::StringMap<unsigned> claimed;
    auto claim = [&](const std::string &name, unsigned arg) -> LogicalResult {
      auto [it, inserted] = claimed.try_emplace(name, arg);
      if (inserted)
        return success();
      return func.emitError()
             << "HF tensor '" << name << "' is claimed by arguments #"
             << it->second << " and #" << arg;
    };
    bool hasParams = false;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      hasParams |= static_cast<bool>(func.getArgAttr(i, kParamAttrName));
    if (!hasParams)
      return success();

    for (BlockArgument arg : func.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto param = func.getArgAttrOfType<ParamAttr>(i, kParamAttrName);
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!param) {
        if (type && isa<FloatType>(type.getElementType()))
          return func.emitError() << "float argument #" << i
                                  << " has no 'tfm.param': every weight "
                                     "needs an HF name";
        continue;
      }
      int64_t layers = param.getStacked() ? type.getDimSize(0) : 1;
      // One HF name per layer. This also bounds checkStackedUses' walk of
      // the scan's layers: without a schedule they are these slices, and a
      // schedule is as long as the IR.
      if (layers > kMaxEnumeratedLayers)
        return func.emitError() << "stacked parameter '" << param.getName()
                                << "' (argument #" << i << ") has " << layers
                                << " layers; a weight map names at most "
                                << kMaxEnumeratedLayers;
      for (int64_t l = 0; l < layers; ++l) {
        std::string name =
            param.getStacked() ? param.nameForLayer(l) : param.getName().str();
        if (failed(claim(name, i)))
          return failure();
      }
      if (auto tied = param.getTied())
        for (Attribute alias : tied)
          if (failed(claim(cast<StringAttr>(alias).str(), i)))
            return failure();
      if (param.getStacked() && failed(checkStackedUses(func, arg, param)))
        return failure();
    }
    return success();
  }

  LogicalResult checkStackedUses(func::FuncOp func, BlockArgument arg,
                                 ParamAttr param) {
    for (OpOperand &use : arg.getUses()) {
      auto repeat = dyn_cast<RepeatOp>(use.getOwner());
      bool isWeight =
          repeat && llvm::is_contained(repeat.getWeights(), use.get());
      if (!isWeight)
        return use.getOwner()->emitError()
               << "stacked parameter '" << param.getName()
               << "' may only be used as a tfm.repeat weight";
      // The HF layers of its slices are the layers the scan reads them in.
      unsigned weight = use.getOperandNumber() - repeat.getInits().size();
      SmallVector<int64_t> layers = repeat.getLayersOfWeight(weight);
      for (int64_t &l : layers)
        l += repeat.getFirstLayer().value_or(0);
      int64_t slices = cast<RankedTensorType>(arg.getType()).getDimSize(0);
      bool same = int64_t(layers.size()) == slices;
      for (int64_t s = 0; same && s < slices; ++s)
        same = param.hfLayer(s) == layers[s];
      if (!same)
        return repeat.emitError()
               << "the layers that read stacked weight #" << weight
               << " differ from the HF layers of '" << param.getName()
               << "' (its 'layers', or 0.." << slices - 1 << ")";
    }
    return success();
  }
};

} // namespace
} // namespace mlir::tfm
