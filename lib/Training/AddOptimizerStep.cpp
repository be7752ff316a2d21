//===- AddOptimizerStep.cpp - the tfm-add-optimizer-step pass -------------===//
//
// Builds @F_optimizer_step from the weight map of @F: the update is part of
// the compiled program (fused per parameter by the optimizer ops' lowering),
// and the caller only carries its tensors from one step to the next.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tfm/Conversion/InPlaceArguments.h"

#include "llvm/Support/Regex.h"

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMADDOPTIMIZERSTEPPASS
#include "tfm/Training/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

bool mlir::tfm::hfDecaysParameter(llvm::StringRef hfName) {
  // transformers' Trainer.get_decay_parameter_names: names matching any of
  // these (lower-cased) get no decay. Parameters of nn.LayerNorm modules are
  // exempt too; every family's LayerNorm is named by one of the patterns.
  static const char *const patterns[] = {"bias", "layernorm", "rmsnorm",
                                         "(^|\\.)norm($|\\.)", "_norm($|\\.)"};
  std::string lower = hfName.lower();
  for (const char *p : patterns)
    if (llvm::Regex(p).match(lower))
      return false;
  return true;
}

namespace {

/// A trainable argument of the model function.
struct Trained {
  unsigned argument;
  RankedTensorType masterType; // f32, the argument's shape
  RankedTensorType modelType;  // the argument's own type
  ParamAttr param;
  double weightDecay;
};

struct TfmAddOptimizerStepPass
    : mlir::tfm::impl::TfmAddOptimizerStepPassBase<TfmAddOptimizerStepPass> {
  using TfmAddOptimizerStepPassBase::TfmAddOptimizerStepPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto model = module.lookupSymbol<func::FuncOp>(funcName);
    if (!model) {
      module.emitError() << "tfm-add-optimizer-step: no function @" << funcName;
      return signalPassFailure();
    }
    std::string name = getOptimizerStepFuncName(funcName);
    if (module.lookupSymbol(name)) {
      module.emitError() << "tfm-add-optimizer-step: @" << name
                         << " already exists";
      return signalPassFailure();
    }
    if (failed(checkOptions(module)))
      return signalPassFailure();
    FailureOr<SmallVector<Trained>> trained = trainedArguments(model);
    if (failed(trained))
      return signalPassFailure();
    if (trained->empty()) {
      bool hasParams = llvm::any_of(model.getArguments(), [&](BlockArgument a) {
        return model.getArgAttr(a.getArgNumber(), kParamAttrName);
      });
      model.emitError() << "tfm-add-optimizer-step: nothing to train: "
                        << (hasParams ? "every parameter of @" + funcName +
                                            " is frozen or a buffer"
                                      : "@" + funcName +
                                            " has no #tfm.param argument");
      return signalPassFailure();
    }
    buildStep(module, model, name, *trained);
  }

  LogicalResult checkOptions(ModuleOp module) {
    auto fail = [&](llvm::StringRef what) {
      return module.emitError() << "tfm-add-optimizer-step: " << what;
    };
    if (optimizer != "adamw" && optimizer != "sgd")
      return fail("optimizer '" + optimizer + "': expected adamw or sgd");
    if (decay != "all" && decay != "hf")
      return fail("decay '" + decay + "': expected all or hf");
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
      return fail("beta1 and beta2 must be in [0, 1)");
    if (!(eps >= 0) || !(weightDecay >= 0) || !(maxGradNorm >= 0) ||
        !(momentum >= 0) || !(dampening >= 0))
      return fail("eps, weight-decay, max-grad-norm, momentum and dampening "
                  "must be >= 0");
    if (nesterov && (momentum <= 0 || dampening != 0))
      return fail("nesterov needs momentum > 0 and zero dampening (as "
                  "torch.optim.SGD)");
    return success();
  }

  /// The HF names a parameter is stored or loaded under (its first layer's
  /// for stacked ones): a fused or split parameter's sources, otherwise its
  /// name, older names and tied names.
  static SmallVector<std::string> hfNames(ParamAttr param) {
    SmallVector<std::string> names;
    auto add = [&](llvm::StringRef templ) {
      names.push_back(param.getStacked()
                          ? substituteLayer(templ, param.hfLayer(0))
                          : templ.str());
    };
    bool packed = param.getMapping() == ParamMapping::fuse ||
                  param.getMapping() == ParamMapping::split;
    if (!packed)
      add(param.getName());
    for (ArrayAttr list : {param.getSources(), param.getTied()})
      if (list)
        for (Attribute a : list)
          add(cast<StringAttr>(a).getValue());
    return names;
  }

  FailureOr<SmallVector<Trained>> trainedArguments(func::FuncOp model) {
    SmallVector<Trained> trained;
    for (BlockArgument arg : model.getArguments()) {
      auto param =
          model.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
      if (!param || param.getFrozen() || param.getBuffer())
        continue;
      auto type = cast<RankedTensorType>(arg.getType());
      double wd = weightDecay;
      if (decay == "hf") {
        SmallVector<std::string> names = hfNames(param);
        bool decays = hfDecaysParameter(names.front());
        for (const std::string &n : names)
          if (hfDecaysParameter(n) != decays)
            return model.emitError()
                   << "tfm-add-optimizer-step: parameter '" << param.getName()
                   << "' fuses tensors HF's Trainer decays differently ('"
                   << names.front() << "', '" << n << "')";
        if (!decays)
          wd = 0;
      }
      trained.push_back({arg.getArgNumber(),
                         RankedTensorType::get(type.getShape(),
                                               Float32Type::get(&getContext())),
                         type, param, wd});
    }
    return trained;
  }

  /// `value` (f32) rounded to `type`'s element type, element by element.
  static Value roundTo(OpBuilder &b, Location loc, Value value,
                       RankedTensorType type) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(b, loc, value); // static: parameters are
    Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
    unsigned rank = type.getRank();
    SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{value}, ValueRange{init}, maps,
        iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value r =
              arith::TruncFOp::create(nb, nl, type.getElementType(), args[0]);
          linalg::YieldOp::create(nb, nl, r);
        });
    return generic.getResult(0);
  }

  void buildStep(ModuleOp module, func::FuncOp model, llvm::StringRef name,
                 ArrayRef<Trained> trained) {
    MLIRContext *ctx = &getContext();
    bool adamw = optimizer == "adamw";
    SmallVector<StringRef> stateKinds =
        adamw ? SmallVector<StringRef>{"exp_avg", "exp_avg_sq"}
              : SmallVector<StringRef>{"momentum_buffer"};
    unsigned n = trained.size(), numState = stateKinds.size();
    SmallVector<Type> argTypes, resultTypes;
    for (unsigned group = 0; group < 2 + numState; ++group)
      for (const Trained &t : trained)
        argTypes.push_back(t.masterType);
    auto f64 = RankedTensorType::get({}, Float64Type::get(ctx));
    auto i64 = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    auto f32 = RankedTensorType::get({}, Float32Type::get(ctx));
    argTypes.append({f64, i64});
    for (unsigned group = 0; group < 1 + numState; ++group)
      for (const Trained &t : trained)
        resultTypes.push_back(t.masterType);
    resultTypes.push_back(f32);
    SmallVector<int64_t> copies;
    for (auto [i, t] : llvm::enumerate(trained))
      if (modelCopies && t.modelType != t.masterType) {
        copies.push_back(i);
        resultTypes.push_back(t.modelType);
      }

    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    Location loc = model.getLoc();
    auto step = func::FuncOp::create(b, loc, name,
                                     b.getFunctionType(argTypes, resultTypes));
    SmallVector<int64_t> arguments;
    for (const Trained &t : trained)
      arguments.push_back(t.argument);
    step->setAttr(kTrainedArgumentsAttrName, b.getDenseI64ArrayAttr(arguments));
    step->setAttr(kOptimizerStateAttrName, b.getStrArrayAttr(stateKinds));
    if (modelCopies)
      step->setAttr(kModelCopiesAttrName, b.getDenseI64ArrayAttr(copies));
    for (unsigned i = 0; i < n; ++i)
      step.setArgAttr(i, kParamAttrName, trained[i].param);
    // The parameters (first n arguments) and the state (after the n
    // gradients) are updated in place, as torch's optimizers do: the step
    // allocates no second copy of either.
    for (unsigned i = 0; i < n; ++i)
      markUpdatedInPlace(step, i);
    for (unsigned i = 2 * n; i < (2 + numState) * n; ++i)
      markUpdatedInPlace(step, i);

    Block *body = step.addEntryBlock();
    b.setInsertionPointToStart(body);
    auto params = body->getArguments().take_front(n);
    auto grads = body->getArguments().slice(n, n);
    auto state = body->getArguments().slice(2 * n, numState * n);
    Value lr = body->getArgument(argTypes.size() - 2);
    Value stepNumber = body->getArgument(argTypes.size() - 1);
    auto norm =
        GlobalGradNormOp::create(b, loc, TypeRange{f32, f32}, ValueRange(grads),
                                 b.getF64FloatAttr(maxGradNorm));
    SmallVector<Value> newParams, newState(numState * n);
    for (unsigned i = 0; i < n; ++i) {
      Type p = trained[i].masterType;
      auto wd = b.getF64FloatAttr(trained[i].weightDecay);
      if (adamw) {
        auto update = AdamwUpdateOp::create(
            b, loc, TypeRange{p, p, p}, params[i], grads[i], state[i],
            state[n + i], lr, stepNumber, norm.getScale(),
            b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
            b.getF64FloatAttr(eps), wd);
        newParams.push_back(update.getNewParam());
        newState[i] = update.getNewExpAvg();
        newState[n + i] = update.getNewExpAvgSq();
      } else {
        auto update = SgdUpdateOp::create(
            b, loc, TypeRange{p, p}, params[i], grads[i], state[i], lr,
            stepNumber, norm.getScale(), b.getF64FloatAttr(momentum),
            b.getF64FloatAttr(dampening), wd,
            nesterov ? b.getUnitAttr() : UnitAttr());
        newParams.push_back(update.getNewParam());
        newState[i] = update.getNewMomentumBuffer();
      }
    }
    SmallVector<Value> results(newParams);
    results.append(newState);
    results.push_back(norm.getNorm());
    for (int64_t i : copies)
      results.push_back(roundTo(b, loc, newParams[i], trained[i].modelType));
    func::ReturnOp::create(b, loc, results);
  }
};

} // namespace
