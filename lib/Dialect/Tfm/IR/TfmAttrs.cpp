//===- TfmAttrs.cpp - tfm attributes --------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmAttrs.h"
#include "tfm/Dialect/Tfm/IR/TfmDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tfm;

#include "tfm/Dialect/Tfm/IR/TfmEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tfm/Dialect/Tfm/IR/TfmAttrs.cpp.inc"

void TfmDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tfm/Dialect/Tfm/IR/TfmAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// RopeScalingAttr
//===----------------------------------------------------------------------===//

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        RopeKind kind, APFloat factorF, APFloat lowFreqF,
                        APFloat highFreqF, int64_t original, APFloat betaFastF,
                        APFloat betaSlowF, bool truncate,
                        APFloat attentionFactorF, DenseF64ArrayAttr shortFactor,
                        DenseF64ArrayAttr longFactor) {
  double factor = factorF.convertToDouble();
  double lowFreqFactor = lowFreqF.convertToDouble();
  double highFreqFactor = highFreqF.convertToDouble();
  double betaFast = betaFastF.convertToDouble();
  double betaSlow = betaSlowF.convertToDouble();
  double attentionFactor = attentionFactorF.convertToDouble();
  if (!(factor > 0))
    return emitError() << "rope scaling factor must be positive, got "
                       << factor;
  if (!(attentionFactor > 0))
    return emitError() << "rope attention_factor must be positive, got "
                       << attentionFactor;
  bool needsOriginal = kind == RopeKind::llama3 || kind == RopeKind::yarn ||
                       kind == RopeKind::longrope;
  if (needsOriginal && original <= 0)
    return emitError() << "rope scaling '" << stringifyRopeKind(kind)
                       << "' needs a positive 'original' "
                          "(original_max_position_embeddings)";
  if (kind == RopeKind::llama3 &&
      !(lowFreqFactor > 0 && highFreqFactor > lowFreqFactor))
    return emitError() << "llama3 rope needs 0 < low_freq_factor < "
                          "high_freq_factor, got "
                       << lowFreqFactor << " and " << highFreqFactor;
  if (kind == RopeKind::yarn && !(betaFast > betaSlow && betaSlow > 0))
    return emitError() << "yarn rope needs beta_fast > beta_slow > 0, got "
                       << betaFast << " and " << betaSlow;
  if (kind == RopeKind::longrope) {
    if (!shortFactor || !longFactor)
      return emitError() << "longrope needs short_factor and long_factor";
    if (shortFactor.size() != longFactor.size())
      return emitError() << "longrope short_factor and long_factor differ "
                            "in length ("
                         << shortFactor.size() << " vs " << longFactor.size()
                         << ")";
  } else if (shortFactor || longFactor) {
    return emitError() << "short_factor/long_factor are only for longrope";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ParamAttr
//===----------------------------------------------------------------------===//

LogicalResult ParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef name, StringRef kind,
                                ParamMapping mapping, ArrayAttr sources,
                                int64_t dim, int64_t offset, bool stacked,
                                ArrayAttr tied, bool frozen,
                                DenseI64ArrayAttr layers, bool buffer) {
  if (name.empty())
    return emitError() << "parameter name must not be empty";
  if (stacked != name.contains(kLayerPlaceholder))
    return emitError() << "parameter '" << name << "': "
                       << (stacked ? "stacked parameters need a '{layer}' "
                                     "placeholder in the name"
                                   : "'{layer}' in the name of a parameter "
                                     "that is not stacked");
  auto allStrings = [](ArrayAttr a) {
    return !a ||
           llvm::all_of(a, [](Attribute x) { return isa<StringAttr>(x); });
  };
  if (!allStrings(sources) || !allStrings(tied))
    return emitError() << "parameter '" << name
                       << "': sources and tied must be string arrays";
  size_t numSources = sources ? sources.size() : 0;
  auto hasExpert = [](Attribute a) {
    return cast<StringAttr>(a).getValue().contains(kExpertPlaceholder);
  };
  switch (mapping) {
  case ParamMapping::direct:
    // Sources, if any, are older names of the same tensor (HF 4.x hub
    // checkpoints), tried when `name` is absent.
    if (sources && llvm::any_of(sources, hasExpert))
      return emitError() << "parameter '" << name
                         << "': direct sources are alternative names of the "
                            "whole tensor and take no '{expert}'";
    break;
  case ParamMapping::expert_major:
  case ParamMapping::rank_major:
  case ParamMapping::transpose:
    if (numSources != 0)
      return emitError()
             << "parameter '" << name << "': " << stringifyParamMapping(mapping)
             << " mapping takes no sources (the name is the source)";
    break;
  case ParamMapping::fuse:
    if (numSources < 2)
      return emitError() << "parameter '" << name
                         << "': fuse mapping needs at least two sources";
    break;
  case ParamMapping::split:
    if (numSources != 1)
      return emitError() << "parameter '" << name
                         << "': split mapping needs exactly one source";
    break;
  case ParamMapping::stacked_experts:
    if (numSources == 0 || (!llvm::all_of(sources, hasExpert) &&
                            (numSources != 1 || hasExpert(sources[0]))))
      return emitError()
             << "parameter '" << name
             << "': stacked_experts needs per-expert source templates "
                "containing '{expert}', or one alternative name of the "
                "stacked tensor";
    break;
  }
  if (dim < 0 || offset < 0)
    return emitError() << "parameter '" << name
                       << "': dim and offset must be non-negative";
  if (layers && !stacked)
    return emitError() << "parameter '" << name
                       << "': layers are only for stacked parameters";
  if (layers) {
    for (auto [i, l] : llvm::enumerate(layers.asArrayRef()))
      if (l < 0 || (i > 0 && l <= layers[i - 1]))
        return emitError() << "parameter '" << name
                           << "': layers must be distinct non-negative "
                              "layer indices in increasing order";
  }
  return success();
}

std::string mlir::tfm::substituteLayer(StringRef templ, int64_t layer) {
  std::string result = templ.str();
  size_t pos = result.find(kLayerPlaceholder.str());
  if (pos != std::string::npos)
    result.replace(pos, kLayerPlaceholder.size(), std::to_string(layer));
  return result;
}

ParamAttr ParamAttr::asFrozen() const {
  return ParamAttr::get(getContext(), getName(), getKind(), getMapping(),
                        getSources(), getDim(), getOffset(), getStacked(),
                        getTied(), /*frozen=*/true, getLayers(), getBuffer());
}

std::string ParamAttr::nameForLayer(int64_t slice) const {
  return substituteLayer(getName(), hfLayer(slice));
}
