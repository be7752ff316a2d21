//===- TfmAutodiff.cpp - the tfm-autodiff pass ----------------------------===//

#include "tfm/Autodiff/Activity.h"
#include "tfm/Autodiff/BlockDifferentiator.h"
#include "tfm/Autodiff/Passes.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMAUTODIFFPASS
#include "tfm/Autodiff/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

namespace {

bool isFloatTensor(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && isa<FloatType>(r.getElementType());
}

struct TfmAutodiffPass : mlir::tfm::impl::TfmAutodiffPassBase<TfmAutodiffPass> {
  using TfmAutodiffPassBase::TfmAutodiffPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto primal = module.lookupSymbol<func::FuncOp>(funcName);
    if (!primal) {
      module.emitError() << "tfm-autodiff: no function @" << funcName;
      return signalPassFailure();
    }
    if (!primal.getBody().hasOneBlock()) {
      primal.emitError("tfm-autodiff needs a single-block function");
      return signalPassFailure();
    }
    std::string name = getVjpFuncName(funcName);
    if (module.lookupSymbol(name)) {
      module.emitError() << "tfm-autodiff: @" << name << " already exists";
      return signalPassFailure();
    }
    func::FuncOp vjp = primal.clone();
    vjp.setName(name);
    module.getBody()->push_back(vjp);
    if (failed(differentiate(vjp)))
      return signalPassFailure();
  }

  LogicalResult differentiate(func::FuncOp f) {
    Block &body = f.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    unsigned numArgs = f.getNumArguments();
    OpBuilder b(ret);
    // Gradients are returned for every float argument that is not a frozen
    // parameter or a buffer; only what those reach gets adjoint work.
    auto getsGradient = [&](BlockArgument arg) {
      if (!isFloatTensor(arg.getType()))
        return false;
      auto param =
          f.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
      return !param || param.isTrainable();
    };
    ActivityAnalysis activity(body, getsGradient);
    BlockDifferentiator diff(
        b, [](Value v) { return v; },
        [&](Value v) { return activity.isActive(v); });

    // Seeds: a cotangent argument per differentiated result.
    SmallVector<Type> argTypes(f.getArgumentTypes());
    for (Value r : ret.getOperands()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t || !isFloatTensor(t) || (!seedAllResults && t.getRank() != 0))
        continue;
      BlockArgument seed = body.addArgument(t, f.getLoc());
      argTypes.push_back(t);
      diff.accumulate(r, seed);
    }
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    Operation *lastForward = ops.empty() ? nullptr : ops.back();
    if (failed(diff.run(ops)))
      return failure();

    SmallVector<Value> results(ret.getOperands());
    SmallVector<Type> resultTypes(f.getResultTypes());
    SmallVector<DictionaryAttr> resultAttrs(results.size(),
                                            b.getDictionaryAttr({}));
    for (unsigned i = 0; i < numArgs; ++i) {
      BlockArgument arg = body.getArgument(i);
      if (!getsGradient(arg))
        continue;
      Value g = diff.gradOf(arg);
      if (!g)
        g = ZerosLikeOp::create(b, f.getLoc(), arg);
      results.push_back(g);
      resultTypes.push_back(arg.getType());
      resultAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr(kGradOfAttrName, b.getI64IntegerAttr(i))));
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    // Adjoint work whose gradient was dropped (a frozen argument's).
    eraseDeadBackwardOps(body, lastForward);
    SmallVector<DictionaryAttr> argAttrs;
    for (unsigned i = 0; i < argTypes.size(); ++i)
      argAttrs.push_back(i < numArgs ? f.getArgAttrDict(i)
                                     : b.getDictionaryAttr({}));
    f.setType(b.getFunctionType(argTypes, resultTypes));
    f.setAllArgAttrs(argAttrs);
    f.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
