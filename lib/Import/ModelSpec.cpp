//===- ModelSpec.cpp - ModelSpec helpers ----------------------------------===//

#include "tfm/Import/ModelSpec.h"

using namespace mlir::tfm;

bool RopeSpec::operator==(const RopeSpec &o) const {
  return theta == o.theta && rotaryDim == o.rotaryDim && type == o.type &&
         factor == o.factor && lowFreqFactor == o.lowFreqFactor &&
         highFreqFactor == o.highFreqFactor && original == o.original &&
         betaFast == o.betaFast && betaSlow == o.betaSlow &&
         truncate == o.truncate && attentionFactor == o.attentionFactor &&
         shortFactor == o.shortFactor && longFactor == o.longFactor &&
         mscaleAllDim == o.mscaleAllDim && interleaved == o.interleaved;
}

std::string LayerSpec::kindName() const {
  switch (mixer) {
  case LayerMixer::mamba:
    return "mamba";
  case LayerMixer::mlp:
    return denseMlp ? "mlp" : "moe";
  case LayerMixer::attention:
    return rope ? "attention" : "attention_nope";
  case LayerMixer::attentionMambaMlp:
    return std::string("attention_mamba") + (rope ? "" : "_nope");
  case LayerMixer::deltaNetMlp:
    return denseMlp ? "linear_attention_dense_mlp" : "linear_attention";
  case LayerMixer::attentionMlp:
    break;
  }
  std::string name = slidingWindow ? "sliding_attention" : "full_attention";
  if (!rope)
    name += "_nope";
  if (denseMlp)
    name += "_dense_mlp";
  return name;
}
