//===- TfmDialect.cpp - tfm dialect registration and attr hooks -----------===//

#include "tfm/Dialect/Tfm/IR/TfmDialect.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfm;

#include "tfm/Dialect/Tfm/IR/TfmOpsDialect.cpp.inc"

void TfmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tfm/Dialect/Tfm/IR/TfmOps.cpp.inc"
      >();
  registerAttributes();
}

/// The argument an argument attribute is attached to, or null where there
/// is none to check: a declaration, or an entry block with fewer arguments
/// than the signature (the op's own verifier reports that, but attribute
/// verifiers run first).
static BlockArgument attributedArgument(Operation *op, unsigned regionIndex,
                                        unsigned argIndex) {
  Region &region = op->getRegion(regionIndex);
  if (region.empty() || argIndex >= region.getNumArguments())
    return {};
  return region.getArgument(argIndex);
}

/// `tfm.param` on a function argument: a #tfm.param on a static tensor whose
/// stacked layout agrees with its name template. `tfm.updated_in_place`: a
/// unit attribute on a tensor or buffer.
LogicalResult TfmDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  if (attr.getName() == kUpdatedInPlaceAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << kUpdatedInPlaceAttrName << "' must be a unit attribute";
    BlockArgument arg = attributedArgument(op, regionIndex, argIndex);
    if (arg && !isa<ShapedType, LLVM::LLVMPointerType>(arg.getType()))
      return op->emitError()
             << "'" << kUpdatedInPlaceAttrName << "' on argument #" << argIndex
             << ": expected a tensor or buffer argument";
    return success();
  }
  if (attr.getName() != kParamAttrName)
    return op->emitError() << "unknown tfm argument attribute '"
                           << attr.getName().getValue() << "'";
  auto param = dyn_cast<ParamAttr>(attr.getValue());
  if (!param)
    return op->emitError() << "'" << kParamAttrName
                           << "' must be a #tfm.param attribute";
  // Declarations carry the map too; nothing to check.
  BlockArgument arg = attributedArgument(op, regionIndex, argIndex);
  if (!arg)
    return success();
  Type argType = arg.getType();
  // Tensors before bufferization, memrefs after; once lowered to LLVM the
  // argument is a pointer and the map describes what it points to.
  if (isa<LLVM::LLVMPointerType>(argType))
    return success();
  auto tensor = dyn_cast<ShapedType>(argType);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitError() << "parameter '" << param.getName()
                           << "' (argument #" << argIndex
                           << ") must be a statically shaped tensor, got "
                           << argType;
  if (param.getStacked() && tensor.getRank() < 1)
    return op->emitError() << "stacked parameter '" << param.getName()
                           << "' needs a leading layer dimension";
  if (auto layers = param.getLayers();
      layers && int64_t(layers.size()) != tensor.getDimSize(0))
    return op->emitError() << "stacked parameter '" << param.getName()
                           << "' lists " << layers.size()
                           << " layers but its leading dimension is "
                           << tensor.getDimSize(0);
  bool expertFactor = param.getMapping() == ParamMapping::expert_major ||
                      param.getMapping() == ParamMapping::rank_major;
  if (expertFactor && tensor.getRank() != (param.getStacked() ? 4 : 3))
    return op->emitError() << "parameter '" << param.getName() << "' "
                           << stringifyParamMapping(param.getMapping())
                           << " needs an [experts, rows, columns] tensor"
                           << (param.getStacked() ? " per layer" : "")
                           << ", got " << tensor;
  if ((param.getMapping() == ParamMapping::fuse ||
       param.getMapping() == ParamMapping::split) &&
      param.getDim() + (param.getStacked() ? 1 : 0) >= tensor.getRank())
    return op->emitError() << "parameter '" << param.getName() << "' "
                           << stringifyParamMapping(param.getMapping())
                           << " dimension " << param.getDim()
                           << " is out of range for " << tensor;
  return success();
}

/// `tfm.grad_of` on a result of an `_vjp` function: the index of the
/// argument it is the gradient of.
LogicalResult TfmDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  if (attr.getName() != "tfm.grad_of")
    return op->emitError() << "unknown tfm result attribute '"
                           << attr.getName().getValue() << "'";
  if (!isa<IntegerAttr>(attr.getValue()))
    return op->emitError(
        "'tfm.grad_of' must be an integer (an argument index)");
  return success();
}

LogicalResult TfmDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  // `tfm.hf` on a module records where the model came from.
  if (attr.getName() == "tfm.hf") {
    if (!isa<DictionaryAttr>(attr.getValue()))
      return op->emitError("'tfm.hf' must be a dictionary");
    return success();
  }
  // `tfm.ignored` on a model function: checkpoint name prefixes it does not
  // read (layers HF does not build).
  if (attr.getName() == kIgnoredTensorsAttrName) {
    auto prefixes = dyn_cast<ArrayAttr>(attr.getValue());
    if (!prefixes || !llvm::all_of(prefixes, [](Attribute a) {
          auto s = dyn_cast<StringAttr>(a);
          return s && !s.getValue().empty();
        }))
      return op->emitError()
             << "'" << kIgnoredTensorsAttrName
             << "' must be an array of non-empty strings (name prefixes)";
    return success();
  }
  // tfm-plan-recompute's marks (kRecomputePlanAttrName, kRecomputedAttrName
  // in tfm/Recompute/Passes.h, which this library sits below): the plan on
  // a backward scan, and the ops a backward body runs again.
  if (attr.getName() == "tfm.recompute_plan") {
    if (!isa<RepeatOp>(op) || !isa<DictionaryAttr>(attr.getValue()))
      return op->emitError(
          "'tfm.recompute_plan' must be a dictionary on a tfm.repeat");
    return success();
  }
  if (attr.getName() == "tfm.recomputed") {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError("'tfm.recomputed' must be a unit attribute");
    return success();
  }
  // tfm-add-optimizer-step's marks on @F_optimizer_step
  // (kTrainedArgumentsAttrName, kOptimizerStateAttrName in
  // tfm/Training/Passes.h): the model argument of each parameter, and the
  // state kinds in order.
  if (attr.getName() == "tfm.trained_arguments" ||
      attr.getName() == "tfm.model_copies") {
    auto args = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!args ||
        !llvm::all_of(args.asArrayRef(), [](int64_t a) { return a >= 0; }))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be an array<i64> of indices";
    return success();
  }
  if (attr.getName() == "tfm.optimizer_state") {
    auto kinds = dyn_cast<ArrayAttr>(attr.getValue());
    if (!kinds || !llvm::all_of(kinds, [](Attribute a) {
          auto s = dyn_cast<StringAttr>(a);
          return s && !s.getValue().empty();
        }))
      return op->emitError("'tfm.optimizer_state' must be an array of "
                           "non-empty strings (state kinds)");
    return success();
  }
  // What an entry's generated code assumes of its arguments
  // (tfm/Analysis/EntryContract.h): lists of array<i64> records.
  if (attr.getName() == "tfm.entry_index_bounds" ||
      attr.getName() == "tfm.entry_dims" ||
      attr.getName() == "tfm.entry_dims_at_least") {
    auto records = dyn_cast<ArrayAttr>(attr.getValue());
    if (!records || !llvm::all_of(records, [](Attribute a) {
          return isa<DenseI64ArrayAttr>(a);
        }))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' must be an array of array<i64> records";
    return success();
  }
  return op->emitError() << "unknown tfm attribute '"
                         << attr.getName().getValue() << "'";
}
