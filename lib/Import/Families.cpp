//===- Families.cpp - the supported HF families, one definition each ------===//
//
// Each definition mirrors one transformers 5.x config class and its modeling
// code, and assigns only the FamilyRules fields where the family differs from
// the defaults in FamilyRules.h. docs/importer.md tabulates the same values.
//
//===----------------------------------------------------------------------===//

#include "FamilyRules.h"

using namespace mlir::tfm;
using namespace mlir::tfm::hf;

namespace {

/// Gemma2Config and modeling_gemma2.
FamilyRules gemma2() {
  FamilyRules r("gemma2", "Gemma2ForCausalLM");
  r.defaultKvHeads = 4;
  r.kvHeadsNullable = false;
  r.defaultHeadDim = 256;
  r.checkHeadsDivideHidden = true;
  r.activationKey = "hidden_activation";
  r.defaultActivation = "gelu_pytorch_tanh";
  r.defaultTied = true;
  r.style = BlockStyle::sandwich;
  r.unitOffsetNorm = true;
  r.embeddingScale = true;
  r.queryPreAttnScalar = true;
  r.readsAttnSoftcap = true;
  r.defaultAttnSoftcap = 50.0;
  r.readsFinalLogitSoftcap = true;
  r.defaultFinalLogitSoftcap = 30.0;
  r.rejectsBidirectionalAttention = true;
  r.window = WindowRule::alternate;
  r.defaultWindow = 4096;
  r.defaultMaxPositions = 8192;
  return r;
}

/// Gemma3TextConfig and modeling_gemma3, which modular_gemma3 bases on Gemma 2.
FamilyRules gemma3Text() {
  FamilyRules r = gemma2();
  r.modelType = "gemma3_text";
  r.architecture = "Gemma3ForCausalLM";
  r.qkNorm = QkNorm::perHead;
  r.readsAttnSoftcap = false; // in the class, but never applied
  r.defaultFinalLogitSoftcap = std::nullopt;
  r.window = WindowRule::pattern;
  r.defaultTheta = 1e6;
  r.defaultMaxPositions = 131072;
  r.ropePerLayerType = true;
  return r;
}

/// LlamaConfig and modeling_llama.
FamilyRules llama() {
  FamilyRules r("llama", "LlamaForCausalLM");
  r.checkHeadsDivideHidden = true;
  r.readsMlpBias = true;
  return r;
}

/// MistralConfig and modeling_mistral.
FamilyRules mistral() {
  FamilyRules r("mistral", "MistralForCausalLM");
  r.defaultKvHeads = 8;
  r.kvHeadsNullable = false;
  r.bias = BiasRule::none;
  r.window = WindowRule::allLayers;
  r.defaultWindow = 4096;
  r.defaultMaxPositions = 131072;
  return r;
}

/// MixtralConfig and modeling_mixtral: softmax over all experts, top-k,
/// always renormalised. Hub checkpoints keep 4.x names
/// (block_sparse_moe.experts.{e}.w1/w3/w2), which transformers 5 renames.
FamilyRules mixtral() {
  FamilyRules r("mixtral", "MixtralForCausalLM");
  r.defaultKvHeads = 8;
  r.kvHeadsNullable = false;
  r.defaultEps = 1e-5;
  r.bias = BiasRule::none;
  r.window = WindowRule::allLayers; // class default sliding_window=None
  r.defaultTheta = 1e6;
  r.defaultMaxPositions = 131072;
  r.moe.enabled = true;
  r.moe.alwaysNormalize = true;
  r.moe.legacyRouter = "block_sparse_moe.gate.weight";
  r.moe.legacyGate = "block_sparse_moe.experts.{expert}.w1.weight";
  r.moe.legacyUp = "block_sparse_moe.experts.{expert}.w3.weight";
  r.moe.legacyDown = "block_sparse_moe.experts.{expert}.w2.weight";
  return r;
}

/// OlmoeConfig and modeling_olmoe: OLMo-2-style whole-projection q/k norms
/// in a pre-norm block, Qwen-MoE routing.
FamilyRules olmoe() {
  FamilyRules r("olmoe", "OlmoeForCausalLM");
  r.defaultEps = 1e-5;
  r.qkNorm = QkNorm::whole;
  r.defaultMaxPositions = 4096;
  r.refusesClipQkv = true;
  r.moe.enabled = true;
  r.moe.expertsKey = "num_experts";
  r.moe.expertsAlias = "num_local_experts";
  r.moe.defaultExperts = 64;
  r.moe.defaultTopK = 8;
  r.moe.readsNormTopkProb = true;
  r.moe.defaultAuxLossCoef = 0.01;
  r.moe.legacyGate = "mlp.experts.{expert}.gate_proj.weight";
  r.moe.legacyUp = "mlp.experts.{expert}.up_proj.weight";
  r.moe.legacyDown = "mlp.experts.{expert}.down_proj.weight";
  return r;
}

/// GptOssConfig and modeling_gpt_oss: attention sinks and biases,
/// alternating sliding/full layers, yarn RoPE by default; top-k of the
/// biased router logits then softmax; experts stored [E, in, out] with
/// biases and the clamped SwiGLU over interleaved gate/up columns. Hub
/// checkpoints are already stacked (bf16; MXFP4 ones must be dequantized).
FamilyRules gptOss() {
  FamilyRules r("gpt_oss", "GptOssForCausalLM");
  r.defaultKvHeads = 8;
  r.defaultHeadDim = 64;
  r.defaultEps = 1e-5;
  r.attentionSinks = true;
  r.defaultAttentionBias = true;
  r.window = WindowRule::alternate; // or layer_types
  r.defaultWindow = 128;
  r.defaultTheta = 150000.0;
  r.defaultMaxPositions = 131072;
  r.defaultRopeParameters =
      R"({"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
          "beta_slow": 1.0, "truncate": false,
          "original_max_position_embeddings": 4096})";
  r.moe.enabled = true;
  r.moe.defaultExperts = 128;
  r.moe.defaultTopK = 4;
  r.moe.topkThenSoftmax = true;
  r.moe.router = "router";
  r.moe.routerBias = true;
  r.moe.expertBias = true;
  r.moe.transposedExperts = true;
  r.moe.clampedSwiglu = true;
  return r;
}

/// GraniteMoeConfig and modeling_granitemoe: top-k of the logits, softmax
/// over the k; embedding, residual, attention and logits multipliers. Hub
/// checkpoints are stacked under older names (input_linear, output_linear,
/// router.layer).
FamilyRules granitemoe() {
  FamilyRules r("granitemoe", "GraniteMoeForCausalLM");
  r.graniteMultipliers = true;
  r.moe.enabled = true;
  r.moe.expertsAlias = "";
  r.moe.topkThenSoftmax = true;
  r.moe.block = "block_sparse_moe";
  r.moe.router = "router";
  r.moe.legacyRouter = "block_sparse_moe.router.layer.weight";
  r.moe.legacyGate = "block_sparse_moe.input_linear.weight";
  r.moe.legacyDown = "block_sparse_moe.output_linear.weight";
  r.moe.legacyStacked = true;
  return r;
}

/// Olmo2Config and modeling_olmo2.
FamilyRules olmo2() {
  FamilyRules r("olmo2", "Olmo2ForCausalLM");
  r.defaultEps = 1e-5;
  r.style = BlockStyle::postNorm;
  r.qkNorm = QkNorm::whole;
  return r;
}

/// Phi3Config and modeling_phi3.
FamilyRules phi3() {
  FamilyRules r("phi3", "Phi3ForCausalLM");
  r.defaultEps = 1e-5;
  r.bias = BiasRule::none;
  r.fusedProjections = true;
  r.window = WindowRule::allLayers; // class default sliding_window=None
  r.defaultMaxPositions = 4096;
  r.partialRotary = true;
  r.defaultTopLevelOriginal = 4096;
  r.ropeTypes = {"default", "longrope"};
  return r;
}

/// Qwen2Config and modeling_qwen2.
FamilyRules qwen2() {
  FamilyRules r("qwen2", "Qwen2ForCausalLM");
  r.defaultKvHeads = 32;
  r.bias = BiasRule::qwen2;
  r.window = WindowRule::qwen;
  r.defaultWindow = 4096;
  r.defaultMaxPositions = 32768;
  return r;
}

/// Qwen3Config and modeling_qwen3: Qwen 2's defaults, where they agree.
FamilyRules qwen3() {
  FamilyRules r = qwen2();
  r.modelType = "qwen3";
  r.architecture = "Qwen3ForCausalLM";
  r.defaultHeadDim = 128;
  r.bias = BiasRule::attentionKey;
  r.qkNorm = QkNorm::perHead;
  return r;
}

/// Qwen3MoeConfig and modeling_qwen3_moe: Qwen 3 attention (head_dim from
/// the JSON, else hidden / heads), norm_topk_prob routing, dense layers per
/// decoder_sparse_step / mlp_only_layers.
FamilyRules qwen3Moe() {
  FamilyRules r("qwen3_moe", "Qwen3MoeForCausalLM");
  r.defaultKvHeads = 4;
  r.kvHeadsNullable = false;
  r.qkNorm = QkNorm::perHead;
  r.window = WindowRule::gatedAll;
  r.defaultWindow = 4096;
  r.defaultMaxPositions = 32768;
  r.moe.enabled = true;
  r.moe.expertsKey = "num_experts";
  r.moe.expertsAlias = "num_local_experts"; // attribute_map
  r.moe.defaultExperts = 128;
  r.moe.defaultTopK = 8;
  r.moe.intermediateKey = "moe_intermediate_size";
  r.moe.defaultIntermediate = 768;
  r.moe.defaultDenseIntermediate = 6144;
  r.moe.readsNormTopkProb = true;
  r.moe.readsSparseLayers = true;
  r.moe.legacyGate = "mlp.experts.{expert}.gate_proj.weight";
  r.moe.legacyUp = "mlp.experts.{expert}.up_proj.weight";
  r.moe.legacyDown = "mlp.experts.{expert}.down_proj.weight";
  return r;
}

/// DeepseekV3Config and modeling_deepseek_v3 (also Kimi-K2's configs):
/// multi-head latent attention with interleaved RoPE on the rotary slice,
/// sigmoid routing with a selection bias over expert groups, shared
/// experts, the first layers dense; no load-balancing loss.
FamilyRules deepseekV3() {
  FamilyRules r("deepseek_v3", "DeepseekV3ForCausalLM");
  r.mla = true;
  r.readsRopeInterleave = true;
  r.mtpLayers = true;
  r.defaultMaxPositions = 4096;
  r.moe.enabled = true;
  r.moe.expertsKey = "n_routed_experts";
  r.moe.expertsAlias = "num_local_experts"; // attribute_map
  r.moe.defaultExperts = 256;
  r.moe.defaultTopK = 8;
  r.moe.intermediateKey = "moe_intermediate_size";
  r.moe.defaultIntermediate = 2048;
  r.moe.defaultDenseIntermediate = 18432;
  r.moe.readsNormTopkProb = true;
  r.moe.defaultNormTopkProb = true;
  r.moe.hasAuxLoss = false;
  r.moe.deepseek = MoeRules::Deepseek::v3;
  r.moe.defaultGroups = 8;
  r.moe.defaultTopkGroups = 4;
  r.moe.defaultRoutedScale = 2.5;
  r.moe.defaultSharedExperts = 1;
  r.moe.defaultFirstDense = 3;
  r.moe.legacyGate = "mlp.experts.{expert}.gate_proj.weight";
  r.moe.legacyUp = "mlp.experts.{expert}.up_proj.weight";
  r.moe.legacyDown = "mlp.experts.{expert}.down_proj.weight";
  return r;
}

/// DeepseekV2Config and modeling_deepseek_v2 (DeepSeek-V2, V2-Lite,
/// V2.5): V3's attention with RoPE always interleaved (complex numbers),
/// softmax routing (greedy or group-limited by group max) scaled but never
/// renormalised, shared experts, `mlp_bias` on the dense MLPs; no MTP.
FamilyRules deepseekV2() {
  FamilyRules r("deepseek_v2", "DeepseekV2ForCausalLM");
  r.mla = true;
  r.checkHeadsDivideHidden = true;
  r.readsMlpBias = true;
  r.defaultMaxPositions = 2048;
  r.moe = deepseekV3().moe;           // the expert layout and names
  r.moe.expertsAlias = "num_experts"; // attribute_map
  r.moe.defaultExperts = 64;
  r.moe.defaultTopK = 0; // None in the class: required
  r.moe.defaultIntermediate = 1407;
  r.moe.defaultDenseIntermediate = 11008;
  r.moe.readsNormTopkProb = false; // the router ignores it
  r.moe.deepseek = MoeRules::Deepseek::v2;
  r.moe.defaultGroups = 1;
  r.moe.defaultTopkGroups = 1;
  r.moe.defaultRoutedScale = 1.0;
  r.moe.defaultSharedExperts = 2;
  r.moe.defaultFirstDense = 0;
  return r;
}

/// Glm4MoeConfig and modeling_glm4_moe (GLM-4.5, GLM-4.5-Air): GQA with
/// q/k/v biases (`attention_bias`, never on o), optional per-head q/k norms
/// (`use_qk_norm`), rotate-half RoPE on the first half of each head
/// (`partial_rotary_factor` 0.5), DeepSeek-V3's routing, shared experts and
/// dense first layers; MTP layers in checkpoints are skipped.
FamilyRules glm4Moe() {
  FamilyRules r("glm4_moe", "Glm4MoeForCausalLM");
  r.defaultKvHeads = 8;
  r.defaultEps = 1e-5;
  r.bias = BiasRule::qkvKey;
  r.readsUseQkNorm = true;
  r.partialRotary = true;
  r.defaultPartialRotary = 0.5;
  r.defaultMaxPositions = 131072;
  r.mtpLayers = true;
  r.moe = deepseekV3().moe; // the same router, experts and names
  r.moe.defaultExperts = 128;
  r.moe.defaultIntermediate = 1408;
  r.moe.defaultDenseIntermediate = 10944;
  r.moe.defaultGroups = 1;
  r.moe.defaultTopkGroups = 1;
  r.moe.defaultRoutedScale = 1.0;
  r.moe.defaultFirstDense = 1;
  return r;
}

/// Mamba2Config and modeling_mamba2 (Mamba-Codestral, and mamba_ssm
/// checkpoints such as mamba2-130m, whose config reads as the Mamba2Config
/// HF's conversion makes of it): every layer `h += mixer(norm(h))`, gated
/// norm gate first whatever `norm_before_gate` says (HF never reads it).
FamilyRules mamba2() {
  FamilyRules r("mamba2", "Mamba2ForCausalLM");
  r.mamba.enabled = true;
  r.mamba.attentionFree = true;
  r.names.layers = "backbone.layers.{layer}.";
  r.names.embed = "backbone.embeddings.weight";
  r.names.embedSources = {"backbone.embedding.weight"}; // mamba_ssm's name
  r.names.finalNorm = "backbone.norm_f.weight";
  return r;
}

/// NemotronHConfig and modeling_nemotron_h (Nemotron-H 8B/47B/56B,
/// Nemotron 3 Nano): one mixer per layer after one norm, scheduled by
/// `hybrid_override_pattern` / `layers_block_type` — Mamba2 (dt clamped to
/// [time_step_min, inf); the projections' bias is `use_bias`), attention
/// without RoPE or biases, a relu2 up/down MLP, and an MoE of relu2
/// up/down experts routed as DeepSeek-V3 (sigmoid, the correction bias,
/// groups, norm_topk_prob + 1e-20, routed_scaling_factor) with one shared
/// expert. transformers 5 names are `model.*`; hub files say `backbone.*`
/// and store experts one by one.
FamilyRules nemotronH() {
  FamilyRules r("nemotron_h", "NemotronHForCausalLM");
  r.defaultKvHeads = 8;
  r.defaultHeadDim = 128;
  r.headDimAlias = "attention_head_dim";
  r.epsKey = "layer_norm_epsilon";
  r.defaultEps = 1e-5;
  r.activationKey = "mlp_hidden_act";
  r.defaultActivation = "relu2";
  r.gatedMlp = false;
  r.bias = BiasRule::none;
  r.readsMlpBias = true;
  r.noRope = true;
  r.hybrid.enabled = true;
  r.mamba.enabled = true;
  r.mamba.headsKey = "mamba_num_heads";
  r.mamba.headDimKey = "mamba_head_dim";
  r.mamba.stateKey = "ssm_state_size";
  r.mamba.defaultChunk = 128;
  r.mamba.expandKey = nullptr; // the mixer's width is heads x head_dim
  r.mamba.activationKey = "mamba_hidden_act";
  r.mamba.dtLimitFromTimeStepMin = true;
  r.mamba.aliases = {{"n_groups", "mamba_n_groups"},
                     {"conv_kernel", "mamba_d_conv"},
                     {"chunk_size", "mamba_chunk_size"},
                     {"use_conv_bias", "mamba_conv_bias"},
                     {"time_step_min", "mamba_dt_min"}};
  r.moe = deepseekV3().moe; // the router
  r.moe.expertsAlias = "num_local_experts";
  r.moe.defaultExperts = 8;
  r.moe.defaultTopK = 2;
  r.moe.defaultIntermediate = 7688;
  r.moe.defaultDenseIntermediate = 21504;
  r.moe.defaultGroups = 1;
  r.moe.defaultTopkGroups = 1;
  r.moe.defaultRoutedScale = 1.0;
  r.moe.defaultFirstDense = 0;
  r.moe.gatedExperts = false;
  r.moe.sharedWidthKey = "moe_shared_expert_intermediate_size";
  r.moe.defaultSharedWidth = 7688;
  r.moe.readsLatentSize = true;
  r.moe.block = "mixer";
  r.moe.legacyGate = "";
  r.moe.legacyUp = "mixer.experts.{expert}.up_proj.weight";
  r.moe.legacyDown = "mixer.experts.{expert}.down_proj.weight";
  r.names.embed = "model.embeddings.weight";
  r.names.embedSources = {"backbone.embeddings.weight"};
  r.names.finalNorm = "model.norm_f.weight";
  r.names.finalNormSources = {"backbone.norm_f.weight"};
  r.names.legacyLayers = "backbone.layers.{layer}.";
  r.names.attention = "mixer.";
  r.names.mlp = "mixer.";
  return r;
}

/// FalconH1Config and modeling_falcon_h1 (Falcon-H1 0.5B ... 34B): every
/// layer runs GQA attention (RoPE, `key_multiplier` on k) and a Mamba2
/// mixer (`mamba_d_ssm` wide, gated norm only with `mamba_rms_norm`, then
/// `mamba_norm_before_gate`; else y · silu(z)) in parallel on one norm,
/// summed into the residual, then a SwiGLU MLP after `pre_ff_layernorm`;
/// every muP multiplier where HF applies it.
FamilyRules falconH1() {
  FamilyRules r("falcon_h1", "FalconH1ForCausalLM");
  r.defaultEps = 1e-5;
  r.readsMlpBias = true;
  r.defaultMaxPositions = 8192;
  r.parallelMamba = true;
  r.mamba.enabled = true;
  r.mamba.headsKey = "mamba_n_heads";
  r.mamba.headDimKey = "mamba_d_head";
  r.mamba.autoHeadDim = true;
  r.mamba.innerKey = "mamba_d_ssm";
  r.mamba.defaultInner = 1024;
  r.mamba.expandKey = "mamba_expand";
  r.mamba.groupsKey = "mamba_n_groups";
  r.mamba.defaultGroups = 1;
  r.mamba.stateKey = "mamba_d_state";
  r.mamba.defaultState = 256;
  r.mamba.convKey = "mamba_d_conv";
  r.mamba.chunkKey = "mamba_chunk_size";
  r.mamba.convBiasKey = "mamba_conv_bias";
  r.mamba.projBiasKey = "mamba_proj_bias";
  r.mamba.outBiasKey = "projectors_bias";
  r.mamba.epsKey = "rms_norm_eps";
  r.mamba.gatedNormKey = "mamba_rms_norm";
  r.mamba.defaultGatedNorm = false;
  r.mamba.normBeforeGateKey = "mamba_norm_before_gate";
  r.mamba.defaultNormBeforeGate = true;
  r.names.finalNorm = "model.final_layernorm.weight";
  r.names.postAttentionNorm = "pre_ff_layernorm.weight";
  r.names.mamba = "mamba.";
  r.names.mlp = "feed_forward.";
  return r;
}

/// SmolLM3Config and modeling_smollm3.
FamilyRules smollm3() {
  FamilyRules r("smollm3", "SmolLM3ForCausalLM");
  r.defaultKvHeads = 4;
  r.defaultTied = true;
  r.readsMlpBias = true;
  r.window = WindowRule::noRopeOnly; // class default sliding_window=None
  r.defaultTheta = 2e6;
  r.defaultMaxPositions = 32768;
  return r;
}

/// Qwen3NextConfig and modeling_qwen3_next: every full_attention_interval-th
/// layer gated attention (q_proj [query | gate] per head, zero-centred q/k
/// norms, partial RoPE), the others gated DeltaNet; zero-centred (1 + w)
/// decoder norms; Qwen-MoE routing with one shared expert behind a sigmoid
/// gate, dense layers per decoder_sparse_step / mlp_only_layers.
FamilyRules qwen3Next() {
  FamilyRules r("qwen3_next", "Qwen3NextForCausalLM");
  r.defaultKvHeads = 2;
  r.kvHeadsNullable = false;
  r.defaultHeadDim = 256;
  r.unitOffsetNorm = true;
  r.qkNorm = QkNorm::perHead;
  r.gatedAttention = true;
  r.partialRotary = true;
  r.defaultPartialRotary = 0.25; // Qwen3NextConfig.__post_init__
  r.defaultMaxPositions = 32768;
  r.deltaNet.enabled = true;
  r.moe = qwen3Moe().moe;
  r.moe.defaultExperts = 512;
  r.moe.defaultTopK = 10;
  r.moe.defaultIntermediate = 512;
  r.moe.defaultDenseIntermediate = 5632;
  r.moe.defaultNormTopkProb = true;
  r.moe.gatedSharedExpert = true;
  r.moe.defaultGatedSharedWidth = 512;
  return r;
}

/// The text model of Qwen3.5 (Qwen3_5TextConfig, modeling_qwen3_5): Qwen3-
/// Next's blocks with a dense MLP, DeltaNet's in-projections unfused
/// (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a) and M-RoPE, which for
/// text (equal positions on its three axes) is partial RoPE. Hub
/// checkpoints hold it under model.language_model. next to the vision
/// tower and an MTP head, neither of which the text model uses.
FamilyRules qwen35Text() {
  FamilyRules r = qwen3Next();
  r.modelType = "qwen3_5_text";
  r.architecture = "Qwen3_5ForCausalLM";
  r.defaultKvHeads = 4;
  r.moe = MoeRules();
  r.deltaNet.interleavedProjections = false;
  r.names.legacyLayers = "model.language_model.layers.{layer}.";
  r.names.embedSources = {"model.language_model.embed_tokens.weight"};
  r.names.finalNormSources = {"model.language_model.norm.weight"};
  r.ignoredPrefixes = {"model.visual.", "mtp."};
  return r;
}

/// Qwen3.5-MoE's text model (Qwen3_5MoeTextConfig): Qwen3.5's blocks with
/// Qwen3-Next's MoE on every layer (no decoder_sparse_step), the top-k
/// weights always renormalised (Qwen3VLMoe's router).
FamilyRules qwen35MoeText() {
  FamilyRules r = qwen35Text();
  r.modelType = "qwen3_5_moe_text";
  r.architecture = "Qwen3_5MoeForCausalLM";
  r.defaultKvHeads = 2;
  r.moe = qwen3Next().moe;
  r.moe.defaultExperts = 256;
  r.moe.defaultTopK = 8;
  r.moe.readsNormTopkProb = false;
  r.moe.alwaysNormalize = true;
  r.moe.readsSparseLayers = false;
  r.moe.everyLayer = true;
  return r;
}

} // namespace

const std::vector<FamilyRules> &hf::families() {
  static const std::vector<FamilyRules> table = {
      deepseekV2(), deepseekV3(),    falconH1(),   gemma2(),   gemma3Text(),
      glm4Moe(),    gptOss(),        granitemoe(), llama(),    mamba2(),
      mistral(),    mixtral(),       nemotronH(),  olmo2(),    olmoe(),
      phi3(),       qwen2(),         qwen3(),      qwen3Moe(), qwen3Next(),
      qwen35Text(), qwen35MoeText(), smollm3()};
  return table;
}

const FamilyRules *hf::findFamily(llvm::StringRef modelType) {
  for (const FamilyRules &r : families())
    if (modelType == r.modelType)
      return &r;
  return nullptr;
}
