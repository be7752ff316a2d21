//===- DeltaNetConfig.cpp - gated DeltaNet fields of a config.json --------===//
//
// As Qwen3NextConfig.__post_init__ and Qwen3NextGatedDeltaNet read them.
//
//===----------------------------------------------------------------------===//

#include "DeltaNetConfig.h"
#include "tfm/Support/Error.h"

using namespace mlir::tfm;
using namespace mlir::tfm::hf;

std::vector<bool> hf::readLinearLayers(Fields &f, int64_t numLayers) {
  std::vector<bool> linear(numLayers, false);
  if (!f.has("layer_types")) {
    // HF: linear_attention unless (i + 1) % interval == 0.
    int64_t interval = f.size("full_attention_interval", 4);
    for (int64_t i = 0; i < numLayers; ++i)
      linear[i] = (i + 1) % interval != 0;
    return linear;
  }
  const json &v = f.at("layer_types");
  if (!v.is_array()) {
    f.fail("layer_types", "must be a list, got " + Fields::typeName(v));
    return linear;
  }
  if (int64_t(v.size()) != numLayers) {
    f.fail("layer_types", "has " + std::to_string(v.size()) +
                              " entries, expected num_hidden_layers = " +
                              std::to_string(numLayers));
    return linear;
  }
  for (auto [i, t] : llvm::enumerate(v)) {
    std::string s = t.is_string() ? t.get<std::string>() : "";
    if (s != "linear_attention" && s != "full_attention") {
      f.fail("layer_types", "entries must be \"linear_attention\" or "
                            "\"full_attention\", got " +
                                t.dump());
      return linear;
    }
    linear[i] = s == "linear_attention";
  }
  return linear;
}

llvm::Error hf::readDeltaNet(Fields &f, const DeltaNetRules &rules,
                             ModelSpec &spec) {
  DeltaNetSpec n;
  n.keyHeads = f.size("linear_num_key_heads", 16);
  n.valueHeads = f.size("linear_num_value_heads", 32);
  n.keyDim = f.size("linear_key_head_dim", 128);
  n.valueDim = f.size("linear_value_head_dim", 128);
  n.convKernel = f.size("linear_conv_kernel_dim", 4);
  n.interleavedProjections = rules.interleavedProjections;
  n.normEps = spec.rmsNormEps;
  if (f.failed())
    return makeError(f.message());
  // HF reshapes the value heads into groups of the key heads.
  if (n.valueHeads % n.keyHeads != 0)
    return makeError(f.source + ": field 'linear_num_key_heads': " +
                     std::to_string(n.keyHeads) +
                     " does not divide linear_num_value_heads = " +
                     std::to_string(n.valueHeads));
  if (double(spec.numLayers) * double(spec.hiddenSize) *
          double(2 * n.keyWidth() + 2 * n.valueWidth()) >=
      1e15)
    return makeError(f.source +
                     ": field 'linear_num_value_heads': num_hidden_layers * "
                     "hidden_size * the in-projection's width is absurdly "
                     "large (limit 10^15 elements per weight)");
  spec.deltaNet = n;
  return llvm::Error::success();
}
