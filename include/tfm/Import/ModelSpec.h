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
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm {

enum class Activation { silu, gelu_tanh, relu2 };

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
  /// yarn `mscale_all_dim` (0: none); MLA's softmax scale uses it.
  double mscaleAllDim = 0.0;
  /// Pairs (2i, 2i+1) instead of rotate-half (DeepSeek `rope_interleave`).
  bool interleaved = false;

  bool operator==(const RopeSpec &o) const;
};

/// A sparse mixture-of-experts MLP (dropless; HF's eager expert loop).
struct MoeSpec {
  int64_t numExperts = 0, topK = 0;
  /// Width of one expert (HF `moe_intermediate_size` or `intermediate_size`).
  int64_t intermediateSize = 0;
  /// Top-k of the logits, then softmax over the k (gpt-oss, Granite-MoE);
  /// otherwise softmax over all experts, then top-k.
  bool topkThenSoftmax = false;
  /// Renormalise the k weights to sum 1 (Mixtral always, `norm_topk_prob`).
  bool normalize = false;
  /// Module path of the block under the layer (`mlp`, `block_sparse_moe`)
  /// and of the router under it (`gate`, `router`).
  std::string block = "mlp", router = "gate";
  /// HF 4.x hub names under `model.layers.{layer}.`, with `{expert}`: the
  /// router, the gate, up and down projections of one expert (each empty
  /// when the hub layout is the transformers-5 one), or whole stacked
  /// tensors (`legacyStacked`: gate_up, down).
  std::string legacyRouter, legacyGate, legacyUp, legacyDown;
  bool legacyStacked = false;
  /// gpt-oss: a router bias, expert biases, experts stored [E, in, out]
  /// (`x @ W`), and the clamped SwiGLU over interleaved gate/up columns.
  bool routerBias = false, expertBias = false, transposedExperts = false;
  std::optional<double> swigluLimit;
  double swigluAlpha = 1.702;
  /// Load-balancing loss: `router_aux_loss_coef`, `output_router_logits`.
  double auxLossCoef = 0.0;
  bool outputRouterLogits = false;
  /// DeepSeek-style routing: sigmoid scores (else softmax); a selection
  /// bias (`gate.e_score_correction_bias`, a buffer); expert groups
  /// (`n_group`, `topk_group`, scored by their top-2 sum or, DeepSeek-V2,
  /// their max); `routed_scaling_factor`; HF's 1e-20 in the renormalisation.
  bool sigmoidScores = false, correctionBias = false;
  int64_t numGroups = 1, topkGroups = 1;
  bool groupMax = false;
  double routedScale = 1.0, normalizeEps = 0.0;
  /// Shared experts: one dense MLP of `sharedExperts` x the expert width
  /// (or `sharedIntermediate` wide when set), added to the routed output
  /// (`mlp.shared_experts`).
  int64_t sharedExperts = 0, sharedIntermediate = 0;
  /// Experts are up/down with the model's activation, no gate (NemotronH);
  /// otherwise gate|up with SiLU.
  bool gatedExperts = true;
  /// NemotronH's latent projections around the routed experts
  /// (`fc1_latent_proj`, `fc2_latent_proj`): the experts work in this
  /// width (0: none).
  int64_t latentSize = 0;
  /// HF has a load-balancing loss for the family (DeepSeek has none).
  bool hasAuxLoss = true;
  /// The shared experts' module under the block (`shared_experts`;
  /// Qwen3-Next: `shared_expert`), and whether a sigmoid gate
  /// (`shared_expert_gate`, one logit per token) scales their output.
  std::string sharedName = "shared_experts";
  bool sharedExpertGate = false;
};

/// Multi-head latent attention (DeepSeek-V2/V3): queries through a
/// low-rank `q_a_proj` -> `q_a_layernorm` -> `q_b_proj` (or one `q_proj`
/// when `qLoraRank` is 0), keys and values from a shared latent
/// (`kv_a_proj_with_mqa` -> `kv_a_layernorm` -> `kv_b_proj`), RoPE on the
/// last `ropeDim` dimensions of each query head and on one key head shared
/// by all heads.
struct MlaSpec {
  int64_t qLoraRank = 0, kvLoraRank = 0;
  int64_t nopeDim = 0, ropeDim = 0, vDim = 0;
};

/// A Mamba2 mixer (HF Mamba2Mixer and the hybrids' copies of it): the
/// in-projection to [z | x, B, C | dt], a causal conv over xBC, the chunked
/// scan, a gated RMSNorm grouped by `groups`, the out-projection.
struct MambaSpec {
  int64_t numHeads = 0, headDim = 0, groups = 1, stateSize = 0;
  int64_t convKernel = 4, chunkSize = 256;
  /// Biases of the conv, the in-projection and the out-projection.
  bool convBias = true, projBias = false, outBias = false;
  /// The gated RMSNorm before out_proj; without it, y · silu(z)
  /// (Falcon-H1's `mamba_rms_norm: false`).
  bool gatedNorm = true;
  /// `time_step_limit`: the clamp of dt after softplus.
  double dtMin = 0.0, dtMax = std::numeric_limits<double>::infinity();
  bool normBeforeGate = false;
  double normEps = 1e-5;
  int64_t innerSize() const { return numHeads * headDim; }
  int64_t convChannels() const { return innerSize() + 2 * groups * stateSize; }
};

/// A gated DeltaNet mixer (Qwen3-Next's and Qwen3.5's `linear_attention`
/// layers): in-projections to q, k (per key head), v, z (per value head) and
/// the gates b, a; a causal conv + SiLU over [q | k | v] (no bias); the
/// chunked gated delta rule; an RMSNorm of each value head (one weight,
/// plain `w · x`) before the silu(z) gate; the out-projection.
struct DeltaNetSpec {
  int64_t keyHeads = 16, valueHeads = 32, keyDim = 128, valueDim = 128;
  int64_t convKernel = 4, chunkSize = 64;
  /// Qwen3-Next: in_proj_qkvz and in_proj_ba, interleaved per key head
  /// ([q | k | v | z] and [b | a] of each key head's group); otherwise
  /// (Qwen3.5) in_proj_qkv, in_proj_z, in_proj_b and in_proj_a.
  bool interleavedProjections = true;
  double normEps = 1e-6;
  int64_t keyWidth() const { return keyHeads * keyDim; }
  int64_t valueWidth() const { return valueHeads * valueDim; }
  int64_t convChannels() const { return 2 * keyWidth() + valueWidth(); }
};

/// What one layer computes. Decoder layers have attention then an MLP in
/// the model's BlockStyle; the others have one mixer behind one norm,
/// `h += mixer(norm(h))` (Mamba2, and NemotronH's M / * / - / E layers).
enum class LayerMixer {
  attentionMlp,
  mamba,
  attention,
  mlp,
  /// Falcon-H1: attention and Mamba2 in parallel on one norm, summed into
  /// the residual, then the MLP after a second norm.
  attentionMambaMlp,
  /// A decoder layer whose mixer is gated DeltaNet instead of attention
  /// (Qwen3-Next's `linear_attention` layers).
  deltaNetMlp,
};

/// Falcon-H1's muP multipliers, each applied where HF applies it.
struct MupSpec {
  double attentionIn = 1, attentionOut = 1, key = 1;
  double ssmIn = 1, ssmOut = 1;
  /// Over the in-projection's [z, x, B, C, dt] segments.
  double ssm[5] = {1, 1, 1, 1, 1};
  double mlpGate = 1, mlpDown = 1;
  double lmHead = 1;
};

/// Where the checkpoint keeps the model's tensors (HF module paths).
struct HfNames {
  std::string layers = "model.layers.{layer}.";
  std::string embed = "model.embed_tokens.weight";
  /// Other names of the embedding some checkpoints use (mamba_ssm's
  /// `backbone.embedding.weight`).
  std::vector<std::string> embedSources;
  std::string finalNorm = "model.norm.weight";
  std::vector<std::string> finalNormSources;
  /// Another prefix the checkpoint may store the layers under (NemotronH
  /// hub files: `backbone.layers.{layer}.`, where transformers 5 says
  /// `model.layers.{layer}.`); also the prefix of per-expert names.
  std::string legacyLayers;
  /// Module prefixes under a layer: attention, dense MLP, Mamba2 mixer.
  std::string attention = "self_attn.", mlp = "mlp.", mamba = "mixer.";
  /// The second norm of a decoder layer (Falcon-H1: pre_ff_layernorm).
  std::string postAttentionNorm = "post_attention_layernorm.weight";
};

/// What can differ between the layers of one model.
struct LayerSpec {
  LayerMixer mixer = LayerMixer::attentionMlp;
  std::optional<int64_t> slidingWindow;
  std::optional<RopeSpec> rope; // none: a NoPE layer
  /// In a model with MoE layers: this layer's MLP is dense (Qwen's
  /// `mlp_only_layers`, DeepSeek's first layers), `intermediate_size` wide.
  /// Of a one-mixer MLP layer (mixer == mlp): dense, not MoE (NemotronH's
  /// `-` rather than `E`), in any model.
  bool denseMlp = false;
  bool operator==(const LayerSpec &o) const {
    return mixer == o.mixer && slidingWindow == o.slidingWindow &&
           rope == o.rope && denseMlp == o.denseMlp;
  }
  bool hasAttention() const {
    return mixer == LayerMixer::attentionMlp ||
           mixer == LayerMixer::attention ||
           mixer == LayerMixer::attentionMambaMlp;
  }
  bool hasMlp() const {
    return mixer == LayerMixer::attentionMlp || mixer == LayerMixer::mlp ||
           mixer == LayerMixer::attentionMambaMlp ||
           mixer == LayerMixer::deltaNetMlp;
  }
  bool hasDeltaNet() const { return mixer == LayerMixer::deltaNetMlp; }
  bool hasMamba() const {
    return mixer == LayerMixer::mamba || mixer == LayerMixer::attentionMambaMlp;
  }
  /// A decoder layer: two norms around attention (and Mamba2) and the MLP.
  bool isDecoderBlock() const {
    return mixer == LayerMixer::attentionMlp ||
           mixer == LayerMixer::attentionMambaMlp ||
           mixer == LayerMixer::deltaNetMlp;
  }
  /// A readable kind name: full_attention, sliding_attention, ..._nope,
  /// ..._dense_mlp; mamba, attention, mlp, moe for one-mixer layers.
  std::string kindName() const;
};

struct ModelSpec {
  std::string architecture; // e.g. LlamaForCausalLM
  std::string modelType;    // e.g. llama
  int64_t vocabSize = 0, hiddenSize = 0, intermediateSize = 0;
  int64_t numLayers = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
  double rmsNormEps = 1e-6;
  Activation activation = Activation::silu;
  /// act(gate(x)) * up(x); otherwise act(up(x)) (NemotronH's relu2 MLP).
  bool gatedMlp = true;
  BlockStyle style = BlockStyle::preNorm;
  bool unitOffsetNorm = false; // (1 + w) RMSNorm
  QkNorm qkNorm = QkNorm::none;
  bool qkvBias = false, oBias = false, mlpBias = false;
  bool fusedQkv = false;       // Phi-3 qkv_proj
  bool fusedGateUp = false;    // Phi-3 gate_up_proj, gate first
  bool attentionSinks = false; // gpt-oss: a learned logit per head
  /// Qwen3-Next: q_proj is twice as wide, per head [query | gate], and the
  /// attention output is multiplied by sigmoid(gate) before o_proj.
  bool gatedAttention = false;
  bool tiedEmbeddings = false;
  std::optional<double> embeddingScale;
  /// HF holds the embedding scale as a tensor of the model's type (Gemma's
  /// normaliser), so it is rounded to it; a Python float is not.
  bool embeddingScaleRounded = false;
  double attentionScale = 1.0;
  std::optional<double> attnSoftcap, finalSoftcap;
  /// Granite: each residual branch is multiplied by this; logits divided.
  std::optional<double> residualMultiplier, logitsScaling;
  /// The MLP of every layer not marked `denseMlp` is this sparse MoE block
  /// (none: every MLP is dense).
  std::optional<MoeSpec> moe;
  /// Attention is MLA (none: q/k/v projections).
  std::optional<MlaSpec> mla;
  /// The Mamba2 mixer of the layers that have one.
  std::optional<MambaSpec> mamba;
  /// The gated DeltaNet mixer of the `linear_attention` layers.
  std::optional<DeltaNetSpec> deltaNet;
  /// Falcon-H1's multipliers (embedding_multiplier is embeddingScale).
  std::optional<MupSpec> mup;
  HfNames names;
  /// Multi-token-prediction layers the checkpoint may hold after the last
  /// layer (`num_nextn_predict_layers`); HF builds and loads none of them.
  int64_t mtpLayers = 0;
  /// Prefixes of checkpoint tensors the model does not use (Qwen3.5's
  /// vision tower `model.visual.` and MTP head `mtp.`).
  std::vector<std::string> ignoredPrefixes;
  std::vector<LayerSpec> layers; // one per layer
};

} // namespace mlir::tfm

#endif // TFM_IMPORT_MODELSPEC_H
