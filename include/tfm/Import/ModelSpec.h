//===- ModelSpec.h - a decoder model, independent of its family -*- C++ -*-===//
//
// What the importer knows about a model after reading config.json: every
// family-specific rule has been applied, so building IR from a ModelSpec
// needs no per-model code.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_IMPORT_MODELSPEC_H
#define TFM_IMPORT_MODELSPEC_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm {

enum class Activation { silu, gelu_tanh };

/// Where the norms sit in a block.
enum class BlockStyle {
  /// h += attn(norm(h)); h += mlp(norm(h))  (Llama and most others).
  preNorm,
  /// h += norm(attn(norm(h))); h += norm(mlp(norm(h)))  (Gemma 2/3).
  sandwich,
  /// h += norm(attn(h)); h += norm(mlp(h))  (OLMo 2).
  postNorm,
};

enum class QkNorm { none, perHead, whole };

struct RopeSpec {
  double theta = 10000.0;
  int64_t rotaryDim = 0;
  /// HF rope_type after normalisation: default, linear, llama3, yarn, longrope.
  std::string type = "default";
  double factor = 1.0;
  double lowFreqFactor = 1.0, highFreqFactor = 4.0;
  int64_t original = 0;
  double betaFast = 32.0, betaSlow = 1.0;
  bool truncate = true;
  double attentionFactor = 1.0;
  std::vector<double> shortFactor, longFactor;

  bool operator==(const RopeSpec &o) const;
};

/// What can differ between the layers of one model.
struct LayerSpec {
  std::optional<int64_t> slidingWindow;
  std::optional<RopeSpec> rope; // none: a NoPE layer
  bool operator==(const LayerSpec &o) const {
    return slidingWindow == o.slidingWindow && rope == o.rope;
  }
  /// A readable kind name: full_attention, sliding_attention, ..._nope.
  std::string kindName() const;
};

struct ModelSpec {
  std::string architecture; // e.g. LlamaForCausalLM
  std::string modelType;    // e.g. llama
  int64_t vocabSize = 0, hiddenSize = 0, intermediateSize = 0;
  int64_t numLayers = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
  double rmsNormEps = 1e-6;
  Activation activation = Activation::silu;
  BlockStyle style = BlockStyle::preNorm;
  bool unitOffsetNorm = false; // (1 + w) RMSNorm
  QkNorm qkNorm = QkNorm::none;
  bool qkvBias = false, oBias = false, mlpBias = false;
  bool fusedQkv = false;    // Phi-3 qkv_proj
  bool fusedGateUp = false; // Phi-3 gate_up_proj, gate first
  bool tiedEmbeddings = false;
  std::optional<double> embeddingScale;
  double attentionScale = 1.0;
  std::optional<double> attnSoftcap, finalSoftcap;
  std::vector<LayerSpec> layers; // one per layer
};

} // namespace mlir::tfm

#endif // TFM_IMPORT_MODELSPEC_H
