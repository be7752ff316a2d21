//===- FamilyRules.h - what one HF family's config implies ------*- C++ -*-===//
//
// The rules one transformers family applies to its config.json: the class
// defaults of absent keys, which keys it reads at all, and the behaviour its
// modeling code implies. parseHFConfig reads them instead of testing the
// model_type, so a family is data (Families.cpp), not a code path.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_IMPORT_FAMILYRULES_H
#define TFM_LIB_IMPORT_FAMILYRULES_H

#include "tfm/Import/ModelSpec.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::hf {

/// Which projections carry a bias.
enum class BiasRule {
  none,         // mistral, phi3: hard-coded bias=False
  attentionKey, // q/k/v/o follow `attention_bias`
  qwen2,        // q/k/v always, o never
  qkvKey,       // glm4_moe: q/k/v follow `attention_bias`, o never
};

/// Which layers attend through a sliding window.
enum class WindowRule {
  none,       // llama, olmo2
  allLayers,  // mistral, phi3: `sliding_window` (null: none) on every layer
  qwen,       // `use_sliding_window`: layers >= max_window_layers
  alternate,  // gemma2: layers 0, 2, 4, ... (or `layer_types`)
  pattern,    // gemma3: (i + 1) % sliding_window_pattern != 0
  noRopeOnly, // smollm3: only NoPE layers, when use_sliding_window
  gatedAll,   // qwen3_moe: every layer, when use_sliding_window
};

/// How a family's config and checkpoint describe its MoE MLP.
struct MoeRules {
  bool enabled = false;
  /// The key holding the expert count, another key accepted for it (the
  /// config class's attribute_map), and the class default.
  const char *expertsKey = "num_local_experts";
  const char *expertsAlias = "num_experts";
  int64_t defaultExperts = 8;
  int64_t defaultTopK = 2;
  /// The key of one expert's width, and its class default (0: required).
  const char *intermediateKey = "intermediate_size";
  int64_t defaultIntermediate = 0;
  /// Class default of the dense `intermediate_size` when the expert width
  /// has its own key (0: required).
  int64_t defaultDenseIntermediate = 0;
  bool topkThenSoftmax = false;
  /// Renormalisation: always (mixtral), or read from `norm_topk_prob`.
  bool alwaysNormalize = false;
  bool readsNormTopkProb = false;
  double defaultAuxLossCoef = 0.001;
  /// Qwen-style dense layers (`decoder_sparse_step`, `mlp_only_layers`).
  bool readsSparseLayers = false;
  const char *block = "mlp";
  const char *router = "gate";
  /// HF 4.x hub names (see MoeSpec).
  const char *legacyRouter = "", *legacyGate = "", *legacyUp = "",
             *legacyDown = "";
  bool legacyStacked = false;
  /// gpt-oss (see MoeSpec); the clamped SwiGLU reads `swiglu_limit` (7.0)
  /// and `swiglu_alpha` (1.702).
  bool routerBias = false, expertBias = false, transposedExperts = false;
  bool clampedSwiglu = false;
  /// Class default of `norm_topk_prob` when it is read.
  bool defaultNormTopkProb = false;
  /// HF has a load-balancing loss (`output_router_logits`).
  bool hasAuxLoss = true;
  /// DeepSeek routing, with `routed_scaling_factor`, `n_shared_experts`
  /// shared experts and the first `first_k_dense_replace` layers dense:
  /// V3 — sigmoid scores, `gate.e_score_correction_bias` (a buffer) for
  /// selection, `n_group` / `topk_group` groups scored by their top-2 sum,
  /// 1e-20 in the renormalisation; V2 — softmax scores, `topk_method`
  /// greedy or group_limited_greedy (groups scored by their max), never
  /// renormalised (HF ignores `norm_topk_prob`). The class defaults:
  enum class Deepseek { none, v2, v3 } deepseek = Deepseek::none;
  int64_t defaultGroups = 1, defaultTopkGroups = 1;
  double defaultRoutedScale = 1.0;
  int64_t defaultSharedExperts = 0, defaultFirstDense = 0;
  /// NemotronH: experts up/down with the model's activation (no gate), a
  /// shared expert `moe_shared_expert_intermediate_size` wide (this key,
  /// default), `moe_latent_size` latent projections (null: none).
  bool gatedExperts = true;
  const char *sharedWidthKey = nullptr;
  int64_t defaultSharedWidth = 0;
  bool readsLatentSize = false;
  /// Qwen3-Next: one shared expert `shared_expert_intermediate_size` wide
  /// (class default below), `mlp.shared_expert`, behind a sigmoid gate
  /// `mlp.shared_expert_gate`.
  bool gatedSharedExpert = false;
  int64_t defaultGatedSharedWidth = 512;
  /// Every layer is MoE (Qwen3.5-MoE): no dense `intermediate_size`.
  bool everyLayer = false;
};

/// How a family's config describes its Mamba2 mixers: the keys (they
/// differ between Mamba2Config, NemotronHConfig and FalconH1Config) and the
/// class defaults. `time_step_limit` is read by every family.
struct MambaRules {
  bool enabled = false;
  /// Every layer is a Mamba2 mixer behind one norm (mamba2): the attention
  /// and MLP keys are not read.
  bool attentionFree = false;
  const char *headsKey = "num_heads";
  int64_t defaultHeads = 128;
  const char *headDimKey = "head_dim";
  int64_t defaultHeadDim = 64;
  const char *groupsKey = "n_groups";
  int64_t defaultGroups = 8;
  const char *stateKey = "state_size";
  int64_t defaultState = 128;
  const char *convKey = "conv_kernel";
  int64_t defaultConv = 4;
  const char *chunkKey = "chunk_size";
  int64_t defaultChunk = 256;
  const char *convBiasKey = "use_conv_bias";
  bool defaultConvBias = true;
  const char *projBiasKey = "use_bias";
  bool defaultProjBias = false;
  /// The key of the norms' eps (the gated norm and the layer norms).
  const char *epsKey = "layer_norm_epsilon";
  double defaultEps = 1e-5;
  /// The class checks `expand` x hidden_size == heads x head_dim (null key:
  /// no such check).
  const char *expandKey = "expand";
  int64_t defaultExpand = 2;
  /// The conv's activation key; HF's torch path applies it, tfm only SiLU.
  const char *activationKey = "hidden_act";
  /// `norm_before_gate` is read under this key (null: HF always gates
  /// first, whatever the file says).
  const char *normBeforeGateKey = nullptr;
  bool defaultNormBeforeGate = false;
  /// The out-projection's bias key (null: the in-projection's).
  const char *outBiasKey = nullptr;
  /// The gated norm's switch (null: always there), and its class default.
  const char *gatedNormKey = nullptr;
  bool defaultGatedNorm = true;
  /// Falcon-H1: the mixer's width is this key (class default; null:
  /// expand x hidden_size), and head_dim may be "auto" (width / heads).
  const char *innerKey = nullptr;
  int64_t defaultInner = 0;
  bool autoHeadDim = false;
  /// NemotronH's mixer clamps dt to [`time_step_min`, inf) and never reads
  /// `time_step_limit`.
  bool dtLimitFromTimeStepMin = false;
  /// Keys the config class accepts for the same fields (NemotronH's
  /// `mamba_n_groups`, `mamba_d_conv`, `mamba_chunk_size`, ...).
  std::vector<std::pair<const char *, const char *>> aliases;
};

/// Gated DeltaNet mixers on the `linear_attention` layers (Qwen3-Next,
/// Qwen3.5): `linear_*` sizes, `layer_types` or `full_attention_interval`.
struct DeltaNetRules {
  bool enabled = false;
  /// Qwen3-Next's in_proj_qkvz / in_proj_ba (else Qwen3.5's four).
  bool interleavedProjections = true;
};

/// NemotronH's layer schedule: `hybrid_override_pattern` (one letter per
/// layer: M Mamba2, * attention, - MLP, E MoE) or `layers_block_type`
/// (linear_attention, full_attention, mlp, moe), each layer one mixer.
struct HybridRules {
  bool enabled = false;
  /// Class default of the schedule when the file has neither key.
  const char *defaultPattern = "ME*-";
};

/// The defaults are what most families do (a pre-norm SiLU decoder without
/// windows); a family's definition assigns only the fields where it differs.
struct FamilyRules {
  FamilyRules(const char *modelType, const char *architecture)
      : modelType(modelType), architecture(architecture) {}

  /// The `model_type` that selects the family, and its `architectures[0]`.
  const char *modelType;
  const char *architecture;

  // --- Sizes ---------------------------------------------------------------
  /// Class default of num_key_value_heads; 0: same as num_attention_heads.
  int64_t defaultKvHeads = 0;
  /// The field is `int | None`: an explicit null means num_attention_heads
  /// (otherwise the class rejects null).
  bool kvHeadsNullable = true;
  /// Class default of head_dim; 0: hidden_size / num_attention_heads.
  int64_t defaultHeadDim = 0;
  /// The config class rejects hidden_size % num_attention_heads != 0.
  bool checkHeadsDivideHidden = false;

  // --- Scalars -------------------------------------------------------------
  /// The key of the norms' eps.
  const char *epsKey = "rms_norm_eps";
  /// The key naming the MLP activation, and its class default.
  const char *activationKey = "hidden_act";
  const char *defaultActivation = "silu";
  double defaultEps = 1e-6;
  bool defaultTied = false;
  BiasRule bias = BiasRule::attentionKey;
  /// Class default of `attention_bias` (gpt-oss: true).
  bool defaultAttentionBias = false;
  /// `mlp_bias` is read (default false); otherwise the MLP has no bias.
  bool readsMlpBias = false;

  // --- Block structure -----------------------------------------------------
  BlockStyle style = BlockStyle::preNorm;
  /// RMSNorm scales by (1 + w).
  bool unitOffsetNorm = false;
  QkNorm qkNorm = QkNorm::none;
  /// Per-head q/k norms when `use_qk_norm` is true (glm4_moe).
  bool readsUseQkNorm = false;
  /// Embeddings are multiplied by sqrt(hidden_size).
  bool embeddingScale = false;
  /// act(gate(x)) * up(x) MLPs; otherwise act(up(x)) (NemotronH).
  bool gatedMlp = true;
  /// Fused qkv_proj and gate_up_proj checkpoints (phi3).
  bool fusedProjections = false;

  // --- Attention -----------------------------------------------------------
  /// softmax scale from query_pre_attn_scalar (class default 256); otherwise
  /// head_dim^-0.5.
  bool queryPreAttnScalar = false;
  /// `attn_logit_softcapping` is read, with this class default (none: no
  /// softcap). gemma3 never applies it, so it does not read the key.
  bool readsAttnSoftcap = false;
  std::optional<double> defaultAttnSoftcap;
  /// `final_logit_softcapping` is read, with this class default.
  bool readsFinalLogitSoftcap = false;
  std::optional<double> defaultFinalLogitSoftcap;
  /// `use_bidirectional_attention: true` (an embedding-model variant, not a
  /// causal LM, where HF also halves the window) is refused.
  bool rejectsBidirectionalAttention = false;
  WindowRule window = WindowRule::none;
  /// Class default of sliding_window when the key is absent (0: none).
  int64_t defaultWindow = 0;

  // --- RoPE ----------------------------------------------------------------
  double defaultTheta = 1e4;
  /// Class default of max_position_embeddings (feeds yarn/longrope/llama3);
  /// 2048 is LlamaConfig's, most families set their own.
  int64_t defaultMaxPositions = 2048;
  /// Per layer type rope parameters (gemma3_text).
  bool ropePerLayerType = false;
  /// partial_rotary_factor is honoured (phi3, glm4_moe), with this class
  /// default.
  bool partialRotary = false;
  double defaultPartialRotary = 1.0;
  /// Class default of a top-level original_max_position_embeddings field,
  /// which overrides the one in the rope dict (phi3: 4096); 0: no field.
  int64_t defaultTopLevelOriginal = 0;
  /// Rope types the family accepts (empty: all).
  std::vector<std::string> ropeTypes;
  /// The rope parameters the config class sets when the file has neither
  /// rope_scaling nor rope_parameters (JSON; null: plain RoPE).
  const char *defaultRopeParameters = nullptr;
  /// A learned per-head attention sink logit (`self_attn.sinks`).
  bool attentionSinks = false;
  /// Multi-head latent attention (DeepSeek): `q_lora_rank`, `kv_lora_rank`,
  /// `qk_nope_head_dim`, `qk_rope_head_dim`, `v_head_dim`, with these class
  /// defaults, and `rope_interleave` (true).
  bool mla = false;
  int64_t defaultQLoraRank = 1536, defaultKvLoraRank = 512;
  int64_t defaultNopeDim = 128, defaultRopeDim = 64, defaultVDim = 128;
  /// `rope_interleave` (default true) is read; otherwise MLA's RoPE is
  /// always interleaved (DeepSeek-V2's complex numbers).
  bool readsRopeInterleave = false;
  /// `num_nextn_predict_layers` (class default 1) MTP layers may follow
  /// the last layer in checkpoints.
  bool mtpLayers = false;

  // --- MoE, Mamba2 and multipliers ----------------------------------------
  MoeRules moe;
  MambaRules mamba;
  HybridRules hybrid;
  DeltaNetRules deltaNet;
  /// Qwen3-Next's attention: q_proj [query | gate] per head, the output
  /// scaled by sigmoid(gate).
  bool gatedAttention = false;
  /// Checkpoint tensors the model does not use (Qwen3.5's vision tower and
  /// MTP head next to its text model).
  std::vector<std::string> ignoredPrefixes;
  /// No layer applies RoPE (NemotronH's attention).
  bool noRope = false;
  /// Every layer runs attention and Mamba2 in parallel, then the MLP
  /// (Falcon-H1), with its muP multipliers (`embedding_multiplier`,
  /// `attention_in/out_multiplier`, `key_multiplier`, `ssm_in/out_multiplier`,
  /// `ssm_multipliers`, `mlp_multipliers`, `lm_head_multiplier`).
  bool parallelMamba = false;
  /// An older name of head_dim HF no longer reads (NemotronH's
  /// `attention_head_dim`): refused where it differs from head_dim.
  const char *headDimAlias = nullptr;
  /// The checkpoint's module paths.
  HfNames names;
  /// Granite multipliers: embedding_multiplier, residual_multiplier,
  /// attention_multiplier (the softmax scale), logits_scaling (divides).
  bool graniteMultipliers = false;
  /// `clip_qkv` (OLMoE) is read and must be null.
  bool refusesClipQkv = false;
};

/// Every supported family, one definition each (Families.cpp).
const std::vector<FamilyRules> &families();

/// The family whose model_type is `modelType`, or null.
const FamilyRules *findFamily(llvm::StringRef modelType);

} // namespace mlir::tfm::hf

#endif // TFM_LIB_IMPORT_FAMILYRULES_H
