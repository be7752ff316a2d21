//===- HFConfigTest.cpp - parseHFConfig unit tests ------------------------===//
//
// Class defaults (keys absent) and derivations per family, as the
// transformers 5.x config classes apply them, plus error messages.
//
//===----------------------------------------------------------------------===//

#include "tfm/Import/HFConfig.h"

#include "gtest/gtest.h"
#include <nlohmann/json.hpp>

#include <cmath>

using namespace mlir::tfm;
using json = nlohmann::json;

namespace {

/// The fields every family requires, for a small model.
json base(const std::string &modelType, int64_t layers = 12) {
  return json{{"model_type", modelType},     {"vocab_size", 100},
              {"hidden_size", 256},          {"intermediate_size", 512},
              {"num_hidden_layers", layers}, {"num_attention_heads", 8}};
}

/// Qwen2/3 default num_key_value_heads to 32, which base()'s 8 heads cannot
/// use; tests not about that default set it.
json qwen(const std::string &modelType, int64_t layers = 12) {
  json c = base(modelType, layers);
  c["num_key_value_heads"] = 4;
  return c;
}

/// Parses `config`; fails the test (and returns an empty spec) on error.
ModelSpec parse(const json &config) {
  llvm::Expected<ModelSpec> spec = parseHFConfig(config.dump(), "config.json");
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return ModelSpec();
  }
  return *spec;
}

/// The error message of parsing `text` (empty if it parses).
std::string parseError(const std::string &text) {
  llvm::Expected<ModelSpec> spec = parseHFConfig(text, "config.json");
  if (spec)
    return "";
  return llvm::toString(spec.takeError());
}

std::vector<bool> slidingLayers(const ModelSpec &spec) {
  std::vector<bool> out;
  for (const LayerSpec &l : spec.layers)
    out.push_back(l.slidingWindow.has_value());
  return out;
}

std::vector<bool> ropeLayers(const ModelSpec &spec) {
  std::vector<bool> out;
  for (const LayerSpec &l : spec.layers)
    out.push_back(l.rope.has_value());
  return out;
}

//===----------------------------------------------------------------------===//
// Class defaults, family by family
//===----------------------------------------------------------------------===//

TEST(HFConfigDefaults, Llama) {
  ModelSpec s = parse(base("llama"));
  EXPECT_EQ(s.architecture, "LlamaForCausalLM");
  EXPECT_EQ(s.numKvHeads, 8); // None -> num_attention_heads
  EXPECT_EQ(s.headDim, 32);   // hidden / heads
  EXPECT_EQ(s.rmsNormEps, 1e-6);
  EXPECT_FALSE(s.tiedEmbeddings);
  EXPECT_FALSE(s.qkvBias || s.oBias || s.mlpBias);
  EXPECT_EQ(s.style, BlockStyle::preNorm);
  EXPECT_FALSE(s.unitOffsetNorm);
  EXPECT_EQ(s.qkNorm, QkNorm::none);
  EXPECT_EQ(s.activation, Activation::silu);
  EXPECT_FALSE(s.embeddingScale);
  EXPECT_FALSE(s.attnSoftcap);
  EXPECT_FALSE(s.finalSoftcap);
  EXPECT_DOUBLE_EQ(s.attentionScale, 1.0 / std::sqrt(32.0));
  ASSERT_EQ(s.layers.size(), 12u);
  for (const LayerSpec &l : s.layers) {
    EXPECT_FALSE(l.slidingWindow);
    ASSERT_TRUE(l.rope);
    EXPECT_EQ(l.rope->theta, 1e4);
    EXPECT_EQ(l.rope->type, "default");
    EXPECT_EQ(l.rope->rotaryDim, 32);
    EXPECT_EQ(l.rope->attentionFactor, 1.0);
  }
}

TEST(HFConfigDefaults, LlamaBiasesFollowKeys) {
  json c = base("llama");
  c["attention_bias"] = true;
  c["mlp_bias"] = true;
  ModelSpec s = parse(c);
  EXPECT_TRUE(s.qkvBias && s.oBias && s.mlpBias);
}

TEST(HFConfigDefaults, Mistral) {
  ModelSpec s = parse(base("mistral"));
  EXPECT_EQ(s.numKvHeads, 8); // class default 8 (equal to heads here)
  json c = base("mistral");
  c["num_attention_heads"] = 16;
  s = parse(c);
  EXPECT_EQ(s.numKvHeads, 8);
  EXPECT_EQ(s.headDim, 16);
  EXPECT_EQ(s.rmsNormEps, 1e-6);
  EXPECT_FALSE(s.tiedEmbeddings);
  // sliding_window defaults to 4096 and applies to every layer.
  for (const LayerSpec &l : s.layers)
    EXPECT_EQ(l.slidingWindow, std::optional<int64_t>(4096));
  // attention_bias is not read: bias=False is hard-coded.
  c["attention_bias"] = true;
  s = parse(c);
  EXPECT_FALSE(s.qkvBias || s.oBias);
  // An explicit null window: full attention.
  c["sliding_window"] = nullptr;
  s = parse(c);
  EXPECT_EQ(slidingLayers(s), std::vector<bool>(12, false));
}

TEST(HFConfigDefaults, Qwen2) {
  json c = base("qwen2");
  c["num_attention_heads"] = 32; // class default kv heads is 32, not heads
  c["hidden_size"] = 512;
  ModelSpec s = parse(c);
  EXPECT_EQ(s.numKvHeads, 32);
  c["num_attention_heads"] = 16;
  EXPECT_EQ(parseError(c.dump()),
            "config.json: field 'num_key_value_heads': "
            "32 does not divide num_attention_heads = 16");
  // q/k/v always biased, o never, no MLP bias.
  s = parse(qwen("qwen2"));
  EXPECT_TRUE(s.qkvBias);
  EXPECT_FALSE(s.oBias);
  EXPECT_FALSE(s.mlpBias);
  EXPECT_EQ(s.headDim, 32);
  EXPECT_EQ(s.rmsNormEps, 1e-6);
  EXPECT_FALSE(s.tiedEmbeddings);
  // No windows unless use_sliding_window.
  EXPECT_EQ(slidingLayers(s), std::vector<bool>(12, false));
}

TEST(HFConfigDefaults, QwenNullKvHeadsMeansHeads) {
  json c = base("qwen2");
  c["num_key_value_heads"] = nullptr;
  EXPECT_EQ(parse(c).numKvHeads, 8);
}

TEST(HFConfigDefaults, QwenSlidingWindowLayers) {
  json c = qwen("qwen2", 6);
  c["use_sliding_window"] = true;
  c["max_window_layers"] = 4;
  ModelSpec s = parse(c);
  EXPECT_EQ(slidingLayers(s),
            (std::vector<bool>{false, false, false, false, true, true}));
  EXPECT_EQ(s.layers[5].slidingWindow, std::optional<int64_t>(4096));
  // max_window_layers class default 28: none of 6 layers slides.
  c.erase("max_window_layers");
  EXPECT_EQ(slidingLayers(parse(c)), std::vector<bool>(6, false));
  // 0: every layer slides.
  c["max_window_layers"] = 0;
  EXPECT_EQ(slidingLayers(parse(c)), std::vector<bool>(6, true));
  // use_sliding_window false nulls the window.
  c["use_sliding_window"] = false;
  c["sliding_window"] = 128;
  EXPECT_EQ(slidingLayers(parse(c)), std::vector<bool>(6, false));
}

TEST(HFConfigDefaults, Qwen3) {
  ModelSpec s = parse(qwen("qwen3"));
  EXPECT_EQ(s.headDim, 128); // class default, not hidden / heads
  EXPECT_EQ(s.qkNorm, QkNorm::perHead);
  EXPECT_FALSE(s.unitOffsetNorm);
  EXPECT_FALSE(s.qkvBias || s.oBias);
  EXPECT_EQ(s.layers[0].rope->rotaryDim, 128);
  EXPECT_DOUBLE_EQ(s.attentionScale, 1.0 / std::sqrt(128.0));
  json c = qwen("qwen3");
  c["attention_bias"] = true;
  s = parse(c);
  EXPECT_TRUE(s.qkvBias && s.oBias);
  c["head_dim"] = nullptr; // typed int: null rejected
  EXPECT_NE(parseError(c.dump()).find("field 'head_dim'"), std::string::npos);
}

TEST(HFConfigDefaults, Gemma2) {
  ModelSpec s = parse(base("gemma2", 5));
  EXPECT_EQ(s.numKvHeads, 4);
  EXPECT_EQ(s.headDim, 256);
  EXPECT_EQ(s.activation, Activation::gelu_tanh);
  EXPECT_TRUE(s.tiedEmbeddings);
  EXPECT_EQ(s.style, BlockStyle::sandwich);
  EXPECT_TRUE(s.unitOffsetNorm);
  EXPECT_EQ(s.qkNorm, QkNorm::none);
  ASSERT_TRUE(s.embeddingScale);
  EXPECT_DOUBLE_EQ(*s.embeddingScale, 16.0); // sqrt(256)
  // query_pre_attn_scalar class default 256 (not head_dim).
  EXPECT_DOUBLE_EQ(s.attentionScale, 1.0 / 16.0);
  EXPECT_EQ(s.attnSoftcap, std::optional<double>(50.0));
  EXPECT_EQ(s.finalSoftcap, std::optional<double>(30.0));
  // Layers 0, 2, 4 slide with the class default window 4096.
  EXPECT_EQ(slidingLayers(s),
            (std::vector<bool>{true, false, true, false, true}));
  EXPECT_EQ(s.layers[0].slidingWindow, std::optional<int64_t>(4096));
  EXPECT_EQ(s.layers[0].rope->theta, 1e4);
  EXPECT_EQ(s.layers[1].rope->theta, 1e4);
}

TEST(HFConfigDefaults, Gemma2NullSoftcapsAndScalar) {
  json c = base("gemma2");
  c["attn_logit_softcapping"] = nullptr;
  c["final_logit_softcapping"] = nullptr;
  c["query_pre_attn_scalar"] = 64;
  c["head_dim"] = 32;
  ModelSpec s = parse(c);
  EXPECT_FALSE(s.attnSoftcap);
  EXPECT_FALSE(s.finalSoftcap);
  EXPECT_DOUBLE_EQ(s.attentionScale, 1.0 / 8.0);
}

TEST(HFConfigDefaults, Gemma3Text) {
  ModelSpec s = parse(base("gemma3_text", 13));
  EXPECT_EQ(s.architecture, "Gemma3ForCausalLM");
  EXPECT_EQ(s.numKvHeads, 4);
  EXPECT_EQ(s.headDim, 256);
  EXPECT_EQ(s.qkNorm, QkNorm::perHead);
  EXPECT_TRUE(s.unitOffsetNorm);
  EXPECT_TRUE(s.tiedEmbeddings);
  EXPECT_FALSE(s.attnSoftcap); // stored by HF, never applied
  EXPECT_FALSE(s.finalSoftcap);
  // sliding_window_pattern 6: layers 5 and 11 are full.
  std::vector<bool> expected(13, true);
  expected[5] = expected[11] = false;
  EXPECT_EQ(slidingLayers(s), expected);
  // Two RoPE bases: 1e4 on sliding layers, 1e6 on full ones.
  EXPECT_EQ(s.layers[0].rope->theta, 1e4);
  EXPECT_EQ(s.layers[5].rope->theta, 1e6);
  EXPECT_EQ(s.layers[0].slidingWindow, std::optional<int64_t>(4096));
}

TEST(HFConfigDefaults, Gemma3LegacyScalingIsGlobalOnly) {
  json c = base("gemma3_text", 6);
  c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}};
  c["rope_local_base_freq"] = 20000.0;
  ModelSpec s = parse(c);
  EXPECT_EQ(s.layers[0].rope->type, "default");
  EXPECT_EQ(s.layers[0].rope->theta, 20000.0);
  EXPECT_EQ(s.layers[5].rope->type, "linear");
  EXPECT_EQ(s.layers[5].rope->factor, 8.0);
  EXPECT_EQ(s.layers[5].rope->theta, 1e6);
}

TEST(HFConfigDefaults, Gemma3NestedRopeParametersAndLayerTypes) {
  json c = base("gemma3_text", 3);
  c["layer_types"] = {"full_attention", "sliding_attention", "full_attention"};
  c["rope_parameters"] = {
      {"full_attention", {{"rope_type", "default"}, {"rope_theta", 5e5}}},
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 2e4}}}};
  ModelSpec s = parse(c);
  EXPECT_EQ(slidingLayers(s), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(s.layers[0].rope->theta, 5e5);
  EXPECT_EQ(s.layers[1].rope->theta, 2e4);
}

TEST(HFConfigDefaults, Phi3) {
  ModelSpec s = parse(base("phi3"));
  EXPECT_EQ(s.numKvHeads, 8);
  EXPECT_EQ(s.headDim, 32);
  EXPECT_EQ(s.rmsNormEps, 1e-5);
  EXPECT_FALSE(s.tiedEmbeddings);
  EXPECT_TRUE(s.fusedQkv);
  EXPECT_TRUE(s.fusedGateUp);
  EXPECT_FALSE(s.qkvBias || s.oBias || s.mlpBias);
  // sliding_window defaults to None.
  EXPECT_EQ(slidingLayers(s), std::vector<bool>(12, false));
  // partial_rotary_factor is honoured (only by phi3).
  json c = base("phi3");
  c["partial_rotary_factor"] = 0.5;
  EXPECT_EQ(parse(c).layers[0].rope->rotaryDim, 16);
  c = base("llama");
  c["partial_rotary_factor"] = 0.5;
  EXPECT_EQ(parse(c).layers[0].rope->rotaryDim, 32);
}

TEST(HFConfigDefaults, Olmo2) {
  ModelSpec s = parse(base("olmo2"));
  EXPECT_EQ(s.numKvHeads, 8);
  EXPECT_EQ(s.rmsNormEps, 1e-5);
  EXPECT_EQ(s.style, BlockStyle::postNorm);
  EXPECT_EQ(s.qkNorm, QkNorm::whole);
  EXPECT_FALSE(s.unitOffsetNorm);
  EXPECT_FALSE(s.tiedEmbeddings);
  EXPECT_EQ(slidingLayers(s), std::vector<bool>(12, false));
}

TEST(HFConfigDefaults, SmolLM3) {
  ModelSpec s = parse(base("smollm3", 8));
  EXPECT_EQ(s.numKvHeads, 4); // class default 4
  EXPECT_TRUE(s.tiedEmbeddings);
  EXPECT_EQ(s.layers[0].rope->theta, 2e6);
  // no_rope_layer_interval 4: layers 3 and 7 are NoPE.
  EXPECT_EQ(ropeLayers(s), (std::vector<bool>{true, true, true, false, true,
                                              true, true, false}));
  EXPECT_EQ(s.layers[3].kindName(), "full_attention_nope");
  EXPECT_EQ(slidingLayers(s), std::vector<bool>(8, false));
  // null kv heads means num_attention_heads.
  json c = base("smollm3", 8);
  c["num_key_value_heads"] = nullptr;
  EXPECT_EQ(parse(c).numKvHeads, 8);
  // With use_sliding_window only NoPE layers slide.
  c["use_sliding_window"] = true;
  c["sliding_window"] = 64;
  s = parse(c);
  EXPECT_EQ(slidingLayers(s), (std::vector<bool>{false, false, false, true,
                                                 false, false, false, true}));
  EXPECT_EQ(s.layers[3].kindName(), "sliding_attention_nope");
  // An explicit no_rope_layers wins over the interval.
  c = base("smollm3", 3);
  c["no_rope_layers"] = {0, 1, 1};
  EXPECT_EQ(ropeLayers(parse(c)), (std::vector<bool>{false, true, true}));
}

TEST(HFConfigDefaults, UnknownKeysAreIgnored) {
  json c = base("gemma2");
  c["sliding_window_size"] = 17; // a legacy duplicate HF never reads
  c["hidden_act"] = "relu";      // gemma reads hidden_activation
  ModelSpec s = parse(c);
  EXPECT_EQ(s.activation, Activation::gelu_tanh);
  EXPECT_EQ(s.layers[0].slidingWindow, std::optional<int64_t>(4096));
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

TEST(HFConfigRope, LegacyTypeKeyAndScalingWins) {
  json c = base("llama");
  c["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 123.0}};
  c["rope_theta"] = 5e5;
  RopeSpec r = *parse(c).layers[0].rope;
  EXPECT_EQ(r.type, "linear");
  EXPECT_EQ(r.factor, 2.0);
  EXPECT_EQ(r.theta, 5e5);
}

TEST(HFConfigRope, V5RopeParametersHoldTheta) {
  json c = base("llama");
  c["rope_parameters"] = {
      {"rope_type", "llama3"},   {"rope_theta", 5e5},
      {"factor", 32.0},          {"low_freq_factor", 1.0},
      {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  RopeSpec r = *parse(c).layers[0].rope;
  EXPECT_EQ(r.type, "llama3");
  EXPECT_EQ(r.theta, 5e5);
  EXPECT_EQ(r.factor, 32.0);
  EXPECT_EQ(r.original, 8192);
}

TEST(HFConfigRope, YarnAttentionFactor) {
  json c = base("llama");
  c["rope_scaling"] = {{"rope_type", "yarn"},
                       {"factor", 4.0},
                       {"original_max_position_embeddings", 1024}};
  RopeSpec r = *parse(c).layers[0].rope;
  EXPECT_DOUBLE_EQ(r.attentionFactor, 0.1 * std::log(4.0) + 1.0);
  EXPECT_EQ(r.betaFast, 32.0);
  EXPECT_EQ(r.betaSlow, 1.0);
  EXPECT_TRUE(r.truncate);
  // With mscale and mscale_all_dim: get_mscale(f, m) / get_mscale(f, m_all).
  c["rope_scaling"]["mscale"] = 1.0;
  c["rope_scaling"]["mscale_all_dim"] = 0.5;
  r = *parse(c).layers[0].rope;
  EXPECT_DOUBLE_EQ(r.attentionFactor,
                   (0.1 * std::log(4.0) + 1.0) / (0.05 * std::log(4.0) + 1.0));
  // An explicit attention_factor wins.
  c["rope_scaling"]["attention_factor"] = 0.75;
  EXPECT_EQ(parse(c).layers[0].rope->attentionFactor, 0.75);
}

TEST(HFConfigRope, YarnOriginalDefaultsToFamilyMaxPositions) {
  // Without original_max_position_embeddings HF uses max_position_embeddings,
  // whose class default differs per family (llama 2048, qwen2 32768).
  json c = base("llama");
  c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_EQ(parse(c).layers[0].rope->original, 2048);
  c["model_type"] = "qwen2";
  c["num_key_value_heads"] = 4;
  EXPECT_EQ(parse(c).layers[0].rope->original, 32768);
  c["max_position_embeddings"] = 4096;
  EXPECT_EQ(parse(c).layers[0].rope->original, 4096);
}

TEST(HFConfigRope, LongropeAttentionFactor) {
  json c = base("phi3");
  std::vector<double> factors(16, 1.0);
  c["max_position_embeddings"] = 131072;
  c["original_max_position_embeddings"] = 4096;
  c["rope_scaling"] = {{"type", "longrope"},
                       {"short_factor", factors},
                       {"long_factor", factors}};
  RopeSpec r = *parse(c).layers[0].rope;
  EXPECT_EQ(r.type, "longrope");
  EXPECT_EQ(r.factor, 32.0); // max / original
  EXPECT_EQ(r.original, 4096);
  EXPECT_DOUBLE_EQ(r.attentionFactor,
                   std::sqrt(1.0 + std::log(32.0) / std::log(4096.0)));
  EXPECT_NEAR(r.attentionFactor, 1.190238, 1e-6);
  EXPECT_EQ(r.shortFactor.size(), 16u);
}

TEST(HFConfigRope, Phi3TopLevelOriginalOverridesTheDict) {
  // Phi3Config.original_max_position_embeddings (class default 4096)
  // replaces the value in the rope dict, also when the key is absent.
  json c = base("phi3");
  std::vector<double> factors(16, 1.0);
  c["max_position_embeddings"] = 65536;
  c["rope_scaling"] = {{"rope_type", "longrope"},
                       {"short_factor", factors},
                       {"long_factor", factors},
                       {"original_max_position_embeddings", 8192}};
  RopeSpec r = *parse(c).layers[0].rope;
  EXPECT_EQ(r.original, 4096);
  EXPECT_EQ(r.factor, 16.0);
  c["original_max_position_embeddings"] = 2048;
  EXPECT_EQ(parse(c).layers[0].rope->original, 2048);
}

//===----------------------------------------------------------------------===//
// Errors and non-strict JSON
//===----------------------------------------------------------------------===//

TEST(HFConfigErrors, OneLineNamingFileAndField) {
  json c = base("llama");
  c.erase("hidden_size");
  EXPECT_EQ(parseError(c.dump()),
            "config.json: field 'hidden_size': required field is missing");
  c = base("llama");
  c["num_hidden_layers"] = "12";
  EXPECT_EQ(parseError(c.dump()),
            "config.json: field 'num_hidden_layers': "
            "must be a positive integer, got string \"12\"");
  c = base("mistral");
  c["num_key_value_heads"] = nullptr;
  EXPECT_EQ(parseError(c.dump()), "config.json: field 'num_key_value_heads': "
                                  "must be a positive integer, got null");
  c = base("gemma3_text");
  c["layer_types"] = {"full_attention"};
  EXPECT_EQ(parseError(c.dump()),
            "config.json: field 'layer_types': has 1 entries, expected "
            "num_hidden_layers = 12");
  c = base("llama");
  c["rope_scaling"] = {{"rope_type", "foo"}};
  EXPECT_EQ(parseError(c.dump()),
            "config.json: field 'rope_scaling.rope_type': unknown rope type "
            "'foo' (supported: default, linear, llama3, yarn, longrope)");
  c["model_type"] = "gpt2";
  EXPECT_EQ(
      parseError(c.dump()),
      "config.json: field 'model_type': unsupported model_type 'gpt2' "
      "(supported: deepseek_v2, deepseek_v3, falcon_h1, gemma2, gemma3_text, "
      "glm4_moe, gpt_oss, granitemoe, llama, mamba2, mistral, mixtral, "
      "nemotron_h, olmo2, olmoe, phi3, qwen2, qwen3, qwen3_5_moe_text, "
      "qwen3_5_text, qwen3_moe, qwen3_next, smollm3)");
  EXPECT_EQ(parseError(""), "config.json: empty file, expected a JSON object");
  EXPECT_EQ(parseError("[]"),
            "config.json: expected a JSON object at the top level, got array");
  EXPECT_NE(parseError("{\"model_type\": ").find("config.json: not valid JSON"),
            std::string::npos);
}

TEST(HFConfigErrors, NonStrictNumbers) {
  std::string text = base("llama").dump();
  text.insert(text.size() - 1,
              ", \"a\": Infinity, \"b\": -Infinity, \"c\": NaN, \"d\": "
              "[NaN, Infinity], \"e\": \"Infinity NaN\"");
  EXPECT_EQ(parseError(text), "");
  // Where a finite number is needed they are errors, not crashes.
  text = base("llama").dump();
  text.insert(text.size() - 1, ", \"rms_norm_eps\": -Infinity");
  EXPECT_EQ(parseError(text), "config.json: field 'rms_norm_eps': must be a "
                              "positive finite number, got -Infinity");
  // A literal beyond the double range is an error, not a crash.
  EXPECT_NE(parseError("{\"x\": 1e999}").find("not valid JSON"),
            std::string::npos);
}

TEST(HFConfigErrors, SupportedModelTypes) {
  std::vector<std::string> expected = {"deepseek_v2",
                                       "deepseek_v3",
                                       "falcon_h1",
                                       "gemma2",
                                       "gemma3_text",
                                       "glm4_moe",
                                       "gpt_oss",
                                       "granitemoe",
                                       "llama",
                                       "mamba2",
                                       "mistral",
                                       "mixtral",
                                       "nemotron_h",
                                       "olmo2",
                                       "olmoe",
                                       "phi3",
                                       "qwen2",
                                       "qwen3",
                                       "qwen3_5_moe_text",
                                       "qwen3_5_text",
                                       "qwen3_moe",
                                       "qwen3_next",
                                       "smollm3"};
  EXPECT_EQ(supportedModelTypes(), expected);
}

} // namespace
