//===- HFConfig.cpp - read a Hugging Face config.json ---------------------===//
//
// Every rule here is the one the transformers 5.x config class or modeling
// code applies; docs/importer.md lists them per family. Families are data
// (FamilyRules, defined in Families.cpp), not code paths: nothing here tests
// a model_type, so adding a family means adding its definition (and, only if
// it brings a new kind of rule, a new field or enum value).
//
//===----------------------------------------------------------------------===//

#include "tfm/Import/HFConfig.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "DeltaNetConfig.h"
#include "FamilyRules.h"
#include "JsonFields.h"
#include "MambaConfig.h"
#include "RopeConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir::tfm;
using namespace mlir::tfm::hf;

namespace {

//===----------------------------------------------------------------------===//
// Layer types
//===----------------------------------------------------------------------===//

/// `layer_types` when present: one "full_attention"/"sliding_attention" per
/// layer. Returns an empty vector when absent.
std::vector<bool> readSlidingLayerTypes(Fields &f, int64_t numLayers) {
  std::vector<bool> sliding;
  if (!f.has("layer_types"))
    return sliding;
  const json &v = f.at("layer_types");
  if (!v.is_array()) {
    f.fail("layer_types", "must be a list, got " + Fields::typeName(v));
    return {};
  }
  if (int64_t(v.size()) != numLayers) {
    f.fail("layer_types", "has " + std::to_string(v.size()) +
                              " entries, expected num_hidden_layers = " +
                              std::to_string(numLayers));
    return {};
  }
  for (const json &t : v) {
    std::string s = t.is_string() ? t.get<std::string>() : "";
    if (s == "attention")
      s = "full_attention"; // HF remap_legacy_layer_types
    if (s != "full_attention" && s != "sliding_attention") {
      f.fail("layer_types", "entries must be \"full_attention\" or "
                            "\"sliding_attention\", got " +
                                t.dump());
      return {};
    }
    sliding.push_back(s == "sliding_attention");
  }
  return sliding;
}

/// smollm3: which layers use RoPE (1) or not (0).
std::vector<bool> readRopeLayers(Fields &f, int64_t numLayers) {
  std::vector<bool> useRope(numLayers, true);
  if (f.has("no_rope_layers")) {
    const json &v = f.at("no_rope_layers");
    if (!v.is_array() || int64_t(v.size()) != numLayers) {
      f.fail("no_rope_layers",
             "must be a list of num_hidden_layers = " +
                 std::to_string(numLayers) + " entries (1 = RoPE, 0 = NoPE)" +
                 (v.is_array() ? ", got " + std::to_string(v.size()) : ""));
      return useRope;
    }
    for (int64_t i = 0; i < numLayers; ++i) {
      const json &x = v[i];
      if (!x.is_number_integer() ||
          (x.get<int64_t>() != 0 && x.get<int64_t>() != 1)) {
        f.fail("no_rope_layers", "entries must be 0 or 1, got " + x.dump());
        return useRope;
      }
      useRope[i] = x.get<int64_t>() == 1;
    }
    return useRope;
  }
  int64_t interval = f.size("no_rope_layer_interval", 4);
  for (int64_t i = 0; i < numLayers; ++i)
    useRope[i] = (i + 1) % interval != 0;
  return useRope;
}

/// The layers whose MLP is dense in a Qwen-MoE model: `mlp_only_layers`, and
/// those with (i + 1) % decoder_sparse_step != 0.
std::vector<bool> readDenseLayers(Fields &f, int64_t numLayers) {
  std::vector<bool> dense(numLayers, false);
  int64_t step = f.size("decoder_sparse_step", 1);
  for (int64_t i = 0; i < numLayers; ++i)
    dense[i] = (i + 1) % step != 0;
  if (!f.has("mlp_only_layers"))
    return dense;
  const json &v = f.at("mlp_only_layers");
  if (!v.is_array()) {
    f.fail("mlp_only_layers",
           "must be a list of layer indices, got " + Fields::typeName(v));
    return dense;
  }
  for (const json &x : v) {
    if (!x.is_number_integer() || x.get<int64_t>() < 0 ||
        x.get<int64_t>() >= numLayers) {
      f.fail("mlp_only_layers", "entries must be layer indices in [0, " +
                                    std::to_string(numLayers) + "), got " +
                                    x.dump());
      return dense;
    }
    dense[x.get<int64_t>()] = true;
  }
  return dense;
}

/// The MoE MLP: expert count, top-k, width, routing and checkpoint names.
llvm::Expected<MoeSpec> readMoe(Fields &f, const MoeRules &m,
                                const ModelSpec &spec) {
  MoeSpec moe;
  const char *expertsKey = m.expertsKey;
  if (!f.present(expertsKey) && *m.expertsAlias && f.present(m.expertsAlias))
    expertsKey = m.expertsAlias;
  moe.numExperts = f.size(expertsKey, m.defaultExperts);
  moe.topK = m.defaultTopK ? f.size("num_experts_per_tok", m.defaultTopK)
                           : f.size("num_experts_per_tok");
  moe.intermediateSize = m.defaultIntermediate
                             ? f.size(m.intermediateKey, m.defaultIntermediate)
                             : f.size(m.intermediateKey);
  moe.topkThenSoftmax = m.topkThenSoftmax;
  moe.normalize =
      m.alwaysNormalize || (m.readsNormTopkProb &&
                            f.boolean("norm_topk_prob", m.defaultNormTopkProb));
  moe.hasAuxLoss = m.hasAuxLoss;
  if (m.hasAuxLoss) {
    moe.auxLossCoef =
        f.finiteNumber("router_aux_loss_coef", m.defaultAuxLossCoef);
    moe.outputRouterLogits = f.boolean("output_router_logits", false);
  }
  if (m.deepseek != MoeRules::Deepseek::none) {
    bool grouped = true;
    if (m.deepseek == MoeRules::Deepseek::v3) {
      moe.sigmoidScores = moe.correctionBias = true;
      moe.normalizeEps = 1e-20;
    } else {
      // DeepseekV2TopkRouter: softmax, then greedy or group-limited top-k;
      // the weights are never renormalised.
      moe.normalize = false;
      moe.groupMax = true;
      std::string method = f.string("topk_method", "greedy");
      if (method != "greedy" && method != "group_limited_greedy" && !f.failed())
        f.fail("topk_method", "unsupported '" + method +
                                  "' (HF's DeepSeek-V2 implements greedy and "
                                  "group_limited_greedy)");
      grouped = method == "group_limited_greedy";
    }
    if (grouped) {
      moe.numGroups = f.size("n_group", m.defaultGroups);
      moe.topkGroups = f.size("topk_group", m.defaultTopkGroups);
    }
    moe.routedScale =
        f.positiveNumber("routed_scaling_factor", m.defaultRoutedScale);
    moe.sharedExperts = f.count("n_shared_experts", m.defaultSharedExperts);
    if (m.sharedWidthKey) {
      // NemotronHMoE always has its one shared expert, this wide.
      moe.sharedExperts = 1;
      moe.sharedIntermediate = f.size(m.sharedWidthKey, m.defaultSharedWidth);
    }
    if (m.readsLatentSize)
      moe.latentSize = f.optionalSize("moe_latent_size").value_or(0);
    moe.gatedExperts = m.gatedExperts;
    if (f.failed())
      return makeError(f.message());
    if (moe.numExperts % moe.numGroups != 0)
      return makeError(f.source + ": field 'n_group': " +
                       llvm::Twine(moe.numGroups) + " does not divide the " +
                       llvm::Twine(moe.numExperts) + " routed experts");
    if (moe.numGroups > 1 && !moe.groupMax &&
        moe.numExperts / moe.numGroups < 2)
      return makeError(f.source +
                       ": field 'n_group': each group needs at "
                       "least 2 experts (HF scores a group by its "
                       "top 2), got " +
                       llvm::Twine(moe.numExperts / moe.numGroups));
    if (moe.numGroups > 64)
      return makeError(f.source + ": field 'n_group': at most 64 groups, got " +
                       llvm::Twine(moe.numGroups));
    if (moe.topkGroups > moe.numGroups)
      return makeError(f.source +
                       ": field 'topk_group': " + llvm::Twine(moe.topkGroups) +
                       " exceeds n_group = " + llvm::Twine(moe.numGroups));
    if (moe.topK > moe.topkGroups * (moe.numExperts / moe.numGroups))
      return makeError(
          f.source + ": field 'num_experts_per_tok': " + llvm::Twine(moe.topK) +
          " exceeds the experts of the topk_group kept groups (" +
          llvm::Twine(moe.topkGroups * (moe.numExperts / moe.numGroups)) + ")");
  }
  if (f.failed())
    return makeError(f.message());
  if (moe.topK > moe.numExperts)
    return makeError(f.source +
                     ": field 'num_experts_per_tok': " + llvm::Twine(moe.topK) +
                     " exceeds the number of experts (" + expertsKey + " = " +
                     llvm::Twine(moe.numExperts) + ")");
  if (double(spec.numLayers) * double(moe.numExperts) *
          double(moe.intermediateSize) * double(spec.hiddenSize) >=
      1e15)
    return makeError(f.source + ": field '" + expertsKey +
                     "': num_hidden_layers * experts * expert width * "
                     "hidden_size is absurdly large (limit 10^15 elements "
                     "per weight)");
  moe.routerBias = m.routerBias;
  moe.expertBias = m.expertBias;
  moe.transposedExperts = m.transposedExperts;
  if (m.clampedSwiglu) {
    moe.swigluLimit = f.positiveNumber("swiglu_limit", 7.0);
    moe.swigluAlpha = f.finiteNumber("swiglu_alpha", 1.702);
    if (f.failed())
      return makeError(f.message());
  }
  if (m.gatedSharedExpert) {
    moe.sharedExperts = 1;
    moe.sharedIntermediate =
        f.size("shared_expert_intermediate_size", m.defaultGatedSharedWidth);
    moe.sharedName = "shared_expert";
    moe.sharedExpertGate = true;
    if (f.failed())
      return makeError(f.message());
  }
  moe.block = m.block;
  moe.router = m.router;
  moe.legacyRouter = m.legacyRouter;
  moe.legacyGate = m.legacyGate;
  moe.legacyUp = m.legacyUp;
  moe.legacyDown = m.legacyDown;
  moe.legacyStacked = m.legacyStacked;
  return moe;
}

/// NemotronH's schedule: `layers_block_type` (the attribute HF stores, also
/// read as `layer_types`) or `hybrid_override_pattern`, one mixer per layer.
/// Returns one letter per layer (M, *, -, E); the error names the field.
std::string readHybridPattern(Fields &f, const HybridRules &rules) {
  static const std::pair<const char *, char> kTypes[] = {
      {"linear_attention", 'M'},
      {"full_attention", '*'},
      {"mlp", '-'},
      {"moe", 'E'}};
  for (const char *key : {"layers_block_type", "layer_types"}) {
    if (!f.has(key))
      continue;
    const json &v = f.at(key);
    if (!v.is_array() || v.empty()) {
      f.fail(key, "must be a non-empty list of layer types, got " +
                      Fields::typeName(v));
      return "";
    }
    std::string pattern;
    for (const json &t : v) {
      std::string name = t.is_string() ? t.get<std::string>() : "";
      if (name == "mamba")
        name = "linear_attention"; // HF remap_legacy_layer_types
      if (name == "attention")
        name = "full_attention";
      auto it = llvm::find_if(kTypes, [&](auto &p) { return name == p.first; });
      if (it == std::end(kTypes)) {
        f.fail(key, "entries must be linear_attention, full_attention, mlp or "
                    "moe, got " +
                        t.dump());
        return "";
      }
      pattern.push_back(it->second);
    }
    return pattern;
  }
  std::string pattern =
      f.string("hybrid_override_pattern", rules.defaultPattern);
  if (f.failed())
    return "";
  if (pattern.empty()) {
    f.fail("hybrid_override_pattern", "must not be empty");
    return "";
  }
  for (size_t i = 0; i < pattern.size(); ++i)
    if (!llvm::is_contained(llvm::StringRef("M*-E"), pattern[i])) {
      f.fail("hybrid_override_pattern",
             "letter '" + std::string(1, pattern[i]) + "' at layer " +
                 std::to_string(i) +
                 " is not one of M (Mamba2), * (attention), - (MLP), E (MoE)");
      return "";
    }
  return pattern;
}

/// A model of Mamba2 layers only (Mamba2Config): no attention, no MLP.
llvm::Expected<ModelSpec> parseMambaModel(Fields &f, const FamilyRules &family,
                                          ModelSpec spec) {
  spec.vocabSize = f.size("vocab_size");
  spec.hiddenSize = f.size("hidden_size");
  spec.numLayers = f.layerCount("num_hidden_layers");
  spec.rmsNormEps =
      f.positiveNumber(family.mamba.epsKey, family.mamba.defaultEps);
  spec.tiedEmbeddings = f.boolean("tie_word_embeddings", family.defaultTied);
  if (f.failed())
    return makeError(f.message());
  if (double(spec.vocabSize) * double(spec.hiddenSize) >= 1e15)
    return makeError(f.source +
                     ": field 'vocab_size': vocab_size * hidden_size is "
                     "absurdly large (limit 10^15 elements per weight)");
  if (llvm::Error err = readMamba(f, family.mamba, spec))
    return std::move(err);
  LayerSpec layer;
  layer.mixer = LayerMixer::mamba;
  spec.layers.assign(spec.numLayers, layer);
  return spec;
}

} // namespace

/// Multimodal configs whose `text_config` is a supported text model.
struct TextWrapper {
  const char *modelType, *architecture, *textModelType;
};
constexpr TextWrapper kTextWrappers[] = {
    {"qwen3_5", "Qwen3_5ForConditionalGeneration", "qwen3_5_text"},
    {"qwen3_5_moe", "Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe_text"},
};

/// Replaces a multimodal wrapper config by its text model's (what
/// get_text_config() gives HF), keeping the top-level tie_word_embeddings;
/// `prefix` becomes "text_config." for error messages. Other configs are
/// left alone.
static llvm::Error unwrapTextModel(json &root, llvm::StringRef source,
                                   std::string &prefix) {
  if (!root.contains("model_type") || !root["model_type"].is_string())
    return llvm::Error::success();
  std::string type = root["model_type"].get<std::string>();
  const TextWrapper *w = llvm::find_if(
      kTextWrappers, [&](const TextWrapper &t) { return type == t.modelType; });
  if (w == std::end(kTextWrappers))
    return llvm::Error::success();
  if (root.contains("architectures")) {
    const json &archs = root["architectures"];
    if (!archs.is_array() || archs.empty() || !archs[0].is_string() ||
        archs[0].get<std::string>() != w->architecture)
      return makeError(source + ": field 'architectures': expected [\"" +
                       w->architecture + "\"] for model_type '" + type +
                       "', got " + archs.dump());
  }
  if (!root.contains("text_config") || !root["text_config"].is_object())
    return makeError(source + ": field 'text_config': model_type '" + type +
                     "' needs its text model's config as an object");
  json text = root["text_config"];
  if (!text.contains("model_type"))
    text["model_type"] = w->textModelType;
  if (text["model_type"] != w->textModelType)
    return makeError(source + ": field 'text_config.model_type': expected '" +
                     w->textModelType + "' inside a '" + type +
                     "' config, got " + text["model_type"].dump());
  text.erase("architectures");
  if (root.contains("tie_word_embeddings"))
    text["tie_word_embeddings"] = root["tie_word_embeddings"];
  root = std::move(text);
  prefix = "text_config.";
  return llvm::Error::success();
}

std::vector<std::string> mlir::tfm::supportedModelTypes() {
  std::vector<std::string> names;
  for (const FamilyRules &f : families())
    names.push_back(f.modelType);
  llvm::sort(names);
  return names;
}

//===----------------------------------------------------------------------===//
// parseHFConfig
//===----------------------------------------------------------------------===//

llvm::Expected<ModelSpec> mlir::tfm::parseHFConfig(llvm::StringRef text,
                                                   llvm::StringRef source) {
  if (text.trim().empty())
    return makeError(source + ": empty file, expected a JSON object");
  if (auto e = checkJsonText(text, source))
    return std::move(e);
  json root;
  TextShifts shifts;
  try {
    root = json::parse(acceptNonStrictNumbers(text, &shifts));
  } catch (const json::parse_error &e) {
    return makeError(source + ": not valid JSON " +
                     describeParseError(e, text, shifts));
  } catch (const json::exception &e) {
    // e.g. a number literal beyond the double range (out_of_range.406).
    return makeError(source + ": not valid JSON: " + e.what());
  }
  if (!root.is_object())
    return makeError(source +
                     ": expected a JSON object at the top level, got " +
                     root.type_name());
  if (isMambaSsmConfig(root)) {
    llvm::Expected<json> converted = mambaSsmToHF(root, source);
    if (!converted)
      return converted.takeError();
    root = std::move(*converted);
  }

  std::string fieldPrefix;
  if (llvm::Error err = unwrapTextModel(root, source, fieldPrefix))
    return std::move(err);
  Fields f(root, source.str(), fieldPrefix);
  ModelSpec spec;

  // --- Family ----------------------------------------------------------------
  if (!root.contains("model_type"))
    return makeError(source +
                     ": field 'model_type': required field is missing");
  spec.modelType = f.string("model_type", "");
  if (f.failed())
    return makeError(f.message());
  const FamilyRules *family = findFamily(spec.modelType);
  if (!family)
    return makeError(source + ": field 'model_type': unsupported model_type '" +
                     spec.modelType + "' (supported: " +
                     llvm::join(supportedModelTypes(), ", ") + ")");
  spec.architecture = family->architecture;
  if (f.has("architectures")) {
    const json &archs = f.at("architectures");
    if (!archs.is_array() || archs.empty() || !archs[0].is_string())
      return makeError(source +
                       ": field 'architectures': must be a non-empty list of "
                       "strings");
    std::string arch = archs[0].get<std::string>();
    if (arch != family->architecture)
      return makeError(source +
                       ": field 'architectures': unsupported architecture '" +
                       arch + "' for model_type '" + spec.modelType +
                       "' (expected " + family->architecture + ")");
  }

  spec.names = family->names;
  if (family->mamba.attentionFree)
    return parseMambaModel(f, *family, std::move(spec));

  // --- Sizes -----------------------------------------------------------------
  spec.vocabSize = f.size("vocab_size");
  spec.hiddenSize = f.size("hidden_size");
  if (family->moe.everyLayer)
    spec.intermediateSize = f.optionalSize("intermediate_size").value_or(0);
  else if (family->moe.defaultDenseIntermediate)
    spec.intermediateSize =
        f.size("intermediate_size", family->moe.defaultDenseIntermediate);
  else
    spec.intermediateSize = f.size("intermediate_size");
  std::string pattern;
  if (family->hybrid.enabled) {
    // The schedule decides the layer count; num_hidden_layers, which HF
    // keeps only for older files, must agree with it.
    pattern = readHybridPattern(f, family->hybrid);
    if (f.failed())
      return makeError(f.message());
    spec.numLayers = int64_t(pattern.size());
    if (spec.numLayers > kMaxLayers)
      return makeError(
          source + ": the layer schedule has " + llvm::Twine(spec.numLayers) +
          " layers, beyond the limit of " + llvm::Twine(kMaxLayers));
    if (f.has("num_hidden_layers") &&
        f.size("num_hidden_layers", 1) != spec.numLayers && !f.failed())
      return makeError(source + ": field 'num_hidden_layers': " +
                       llvm::Twine(f.size("num_hidden_layers", 1)) +
                       " layers, but the layer schedule (" +
                       (f.has("layers_block_type") ? "layers_block_type"
                        : f.has("layer_types")     ? "layer_types"
                                               : "hybrid_override_pattern") +
                       ") has " + llvm::Twine(spec.numLayers));
  } else {
    spec.numLayers = f.layerCount("num_hidden_layers");
  }
  spec.numHeads = f.size("num_attention_heads");
  int64_t defaultKv =
      family->defaultKvHeads ? family->defaultKvHeads : spec.numHeads;
  if (!f.present("num_key_value_heads"))
    spec.numKvHeads = defaultKv;
  else if (family->kvHeadsNullable)
    spec.numKvHeads =
        f.optionalSize("num_key_value_heads").value_or(spec.numHeads);
  else
    spec.numKvHeads = f.size("num_key_value_heads", defaultKv);
  if (f.failed())
    return makeError(f.message());
  if (spec.numHeads % spec.numKvHeads != 0)
    return makeError(
        source +
        ": field 'num_key_value_heads': " + llvm::Twine(spec.numKvHeads) +
        " does not divide num_attention_heads = " + llvm::Twine(spec.numHeads));
  if (family->checkHeadsDivideHidden && spec.hiddenSize % spec.numHeads != 0)
    return makeError(
        source +
        ": field 'num_attention_heads': " + llvm::Twine(spec.numHeads) +
        " does not divide hidden_size = " + llvm::Twine(spec.hiddenSize));
  if (family->defaultHeadDim) {
    spec.headDim = f.size("head_dim", family->defaultHeadDim);
  } else if (auto hd = f.optionalSize("head_dim")) {
    spec.headDim = *hd;
  } else {
    if (spec.hiddenSize % spec.numHeads != 0)
      return makeError(source +
                       ": field 'head_dim': absent, and hidden_size = " +
                       llvm::Twine(spec.hiddenSize) +
                       " is not divisible by num_attention_heads = " +
                       llvm::Twine(spec.numHeads));
    spec.headDim = spec.hiddenSize / spec.numHeads;
  }
  if (f.failed())
    return makeError(f.message());
  // An older key HF no longer reads: refuse it where it disagrees.
  if (family->headDimAlias && f.has(family->headDimAlias) &&
      f.size(family->headDimAlias, 1) != spec.headDim && !f.failed())
    return makeError(source + ": field '" + family->headDimAlias +
                     "': " + llvm::Twine(f.size(family->headDimAlias, 1)) +
                     " differs from head_dim = " + llvm::Twine(spec.headDim) +
                     " (HF's class reads only head_dim; set it)");
  if (family->mla) {
    MlaSpec mla;
    // q_lora_rank null: one q_proj (DeepSeek-V2-Lite).
    if (!f.present("q_lora_rank"))
      mla.qLoraRank = family->defaultQLoraRank;
    else
      mla.qLoraRank = f.optionalSize("q_lora_rank").value_or(0);
    mla.kvLoraRank = f.size("kv_lora_rank");
    mla.nopeDim = f.size("qk_nope_head_dim", family->defaultNopeDim);
    mla.ropeDim = f.size("qk_rope_head_dim", family->defaultRopeDim);
    mla.vDim = f.size("v_head_dim", family->defaultVDim);
    if (f.failed())
      return makeError(f.message());
    if (mla.ropeDim % 2 != 0)
      return makeError(source +
                       ": field 'qk_rope_head_dim': RoPE needs an "
                       "even dimension, got " +
                       llvm::Twine(mla.ropeDim));
    // Every head has its own key and value from the latent.
    if (spec.numKvHeads != spec.numHeads)
      return makeError(source +
                       ": field 'num_key_value_heads': multi-head "
                       "latent attention needs num_attention_heads "
                       "(" +
                       llvm::Twine(spec.numHeads) + "), got " +
                       llvm::Twine(spec.numKvHeads));
    // HF forces head_dim to the rotary part.
    spec.headDim = mla.ropeDim;
    spec.mla = mla;
  }
  if (family->mtpLayers)
    spec.mtpLayers = f.count("num_nextn_predict_layers", 1);
  // Products that size tensors must stay far from overflow.
  auto absurd = [&](llvm::StringRef key, llvm::StringRef product,
                    double value) {
    return makeError(source + ": field '" + key + "': " + product + " = " +
                     json(value).dump() +
                     " is absurdly large (limit 10^15 elements per weight)");
  };
  if (spec.numHeads * spec.headDim >= kMaxSize)
    return absurd("head_dim", "num_attention_heads * head_dim",
                  double(spec.numHeads) * double(spec.headDim));
  if (double(spec.vocabSize) * double(spec.hiddenSize) >= 1e15)
    return absurd("vocab_size", "vocab_size * hidden_size",
                  double(spec.vocabSize) * double(spec.hiddenSize));
  if (double(spec.numLayers) * double(spec.hiddenSize) *
          double(spec.intermediateSize) >=
      1e15)
    return absurd("intermediate_size",
                  "num_hidden_layers * hidden_size * intermediate_size",
                  double(spec.numLayers) * double(spec.hiddenSize) *
                      double(spec.intermediateSize));

  // --- Scalars ---------------------------------------------------------------
  spec.rmsNormEps = f.positiveNumber(family->epsKey, family->defaultEps);
  std::string act =
      f.requiredString(family->activationKey, family->defaultActivation);
  if (act == "silu" || act == "swish")
    spec.activation = Activation::silu;
  else if (act == "gelu_pytorch_tanh" || act == "gelu_new")
    spec.activation = Activation::gelu_tanh;
  else if (act == "relu2")
    spec.activation = Activation::relu2;
  else if (!f.failed())
    f.fail(family->activationKey,
           "unsupported activation '" + act +
               "' (supported: silu, swish, gelu_pytorch_tanh, gelu_new, "
               "relu2)");
  spec.gatedMlp = family->gatedMlp;
  spec.style = family->style;
  spec.unitOffsetNorm = family->unitOffsetNorm;
  spec.qkNorm = family->qkNorm;
  spec.fusedQkv = spec.fusedGateUp = family->fusedProjections;
  spec.tiedEmbeddings = f.boolean("tie_word_embeddings", family->defaultTied);
  spec.attentionSinks = family->attentionSinks;
  spec.gatedAttention = family->gatedAttention;
  spec.ignoredPrefixes = family->ignoredPrefixes;
  switch (family->bias) {
  case BiasRule::none:
    break;
  case BiasRule::attentionKey:
    spec.qkvBias = spec.oBias =
        f.boolean("attention_bias", family->defaultAttentionBias);
    break;
  case BiasRule::qwen2:
    spec.qkvBias = true;
    break;
  case BiasRule::qkvKey:
    spec.qkvBias = f.boolean("attention_bias", family->defaultAttentionBias);
    break;
  }
  if (family->readsUseQkNorm && f.boolean("use_qk_norm", false))
    spec.qkNorm = QkNorm::perHead;
  if (family->readsMlpBias)
    spec.mlpBias = f.boolean("mlp_bias", false);
  if (family->embeddingScale) {
    spec.embeddingScale = std::sqrt(double(spec.hiddenSize));
    spec.embeddingScaleRounded = true;
  }
  spec.attentionScale =
      family->queryPreAttnScalar
          ? 1.0 / std::sqrt(f.positiveNumber("query_pre_attn_scalar", 256))
          : 1.0 / std::sqrt(double(spec.headDim));
  auto optionalCap = [&](const char *key, std::optional<double> dflt) {
    std::optional<double> cap = f.optionalNumber(key, dflt);
    if (cap && (!(*cap > 0) || std::isinf(*cap)))
      f.fail(key, "must be a positive finite number or null, got " +
                      formatNumber(*cap));
    return cap;
  };
  if (family->readsAttnSoftcap)
    spec.attnSoftcap =
        optionalCap("attn_logit_softcapping", family->defaultAttnSoftcap);
  if (family->readsFinalLogitSoftcap)
    spec.finalSoftcap = optionalCap("final_logit_softcapping",
                                    family->defaultFinalLogitSoftcap);
  if (f.failed())
    return makeError(f.message());

  // --- Per-layer attention windows ------------------------------------------
  int64_t numLayers = spec.numLayers;
  std::vector<bool> sliding(numLayers, false);
  std::optional<int64_t> window;
  auto readWindow = [&]() -> std::optional<int64_t> {
    if (!f.present("sliding_window"))
      return family->defaultWindow
                 ? std::optional<int64_t>(family->defaultWindow)
                 : std::nullopt;
    return f.optionalSize("sliding_window");
  };
  std::vector<bool> useRope(numLayers, true);
  switch (family->window) {
  case WindowRule::none:
    break;
  case WindowRule::allLayers:
    window = readWindow();
    if (window)
      sliding.assign(numLayers, true);
    break;
  case WindowRule::gatedAll:
    window =
        f.boolean("use_sliding_window", false) ? readWindow() : std::nullopt;
    if (window)
      sliding.assign(numLayers, true);
    break;
  case WindowRule::qwen: {
    bool use = f.boolean("use_sliding_window", false);
    window = use ? readWindow() : std::nullopt;
    std::vector<bool> types = readSlidingLayerTypes(f, numLayers);
    if (!types.empty()) {
      sliding = types;
    } else if (window) {
      // 0 is meaningful here (every layer slides).
      int64_t maxWindowLayers =
          f.has("max_window_layers") &&
                  f.at("max_window_layers").is_number_integer() &&
                  f.at("max_window_layers").get<int64_t>() == 0
              ? 0
              : f.size("max_window_layers", 28);
      for (int64_t i = 0; i < numLayers; ++i)
        sliding[i] = i >= maxWindowLayers;
    }
    break;
  }
  case WindowRule::alternate:
  case WindowRule::pattern: {
    window = readWindow();
    std::vector<bool> types = readSlidingLayerTypes(f, numLayers);
    if (!types.empty()) {
      sliding = types;
    } else {
      int64_t period = family->window == WindowRule::alternate
                           ? 2
                           : f.size("sliding_window_pattern", 6);
      for (int64_t i = 0; i < numLayers; ++i)
        sliding[i] = (i + 1) % period != 0;
    }
    break;
  }
  case WindowRule::noRopeOnly: {
    useRope = readRopeLayers(f, numLayers);
    bool use = f.boolean("use_sliding_window", false);
    window = readWindow();
    std::vector<bool> types = readSlidingLayerTypes(f, numLayers);
    if (!types.empty()) {
      sliding = types;
    } else {
      for (int64_t i = 0; i < numLayers; ++i)
        sliding[i] = use && window && !useRope[i];
    }
    break;
  }
  }
  if (f.failed())
    return makeError(f.message());
  if (!window && llvm::is_contained(sliding, true))
    return makeError(source + ": field 'sliding_window': some layers are "
                              "sliding_attention but no window size is set");
  // Refuse rather than mis-import a model that is not a causal LM.
  if (family->rejectsBidirectionalAttention &&
      f.boolean("use_bidirectional_attention", false))
    return makeError(source + ": field 'use_bidirectional_attention': "
                              "bidirectional attention is not supported (only "
                              "causal language models)");
  if (f.failed())
    return makeError(f.message());

  // --- Mixture of experts and multipliers ----------------------------------
  // Layers of an MoE model whose MLP is dense (Qwen's mlp_only_layers).
  std::vector<bool> denseMlp(numLayers, false);
  if (family->moe.enabled &&
      (!family->hybrid.enabled || llvm::is_contained(pattern, 'E'))) {
    llvm::Expected<MoeSpec> moe = readMoe(f, family->moe, spec);
    if (!moe)
      return moe.takeError();
    spec.moe = std::move(*moe);
    if (family->moe.readsSparseLayers)
      denseMlp = readDenseLayers(f, numLayers);
    if (family->moe.deepseek != MoeRules::Deepseek::none) {
      // HF: MoE iff layer >= first_k_dense_replace; it ignores
      // moe_layer_freq, which the original DeepSeek code honours, so a
      // value other than 1 is ambiguous.
      int64_t firstDense =
          f.count("first_k_dense_replace", family->moe.defaultFirstDense);
      for (int64_t i = 0; i < numLayers; ++i)
        denseMlp[i] = i < firstDense;
      if (f.has("moe_layer_freq") && f.size("moe_layer_freq", 1) != 1)
        f.fail("moe_layer_freq", "only 1 is supported (HF's modeling code "
                                 "ignores it; DeepSeek's own code does not)");
    }
    if (f.failed())
      return makeError(f.message());
    // Every layer dense: HF builds no MoE block at all.
    if (!llvm::is_contained(denseMlp, false))
      spec.moe.reset();
  }
  if (family->parallelMamba) {
    // Falcon-H1's muP multipliers, all 1 by default.
    auto multiplier = [&](const char *key) { return f.finiteNumber(key, 1.0); };
    auto list = [&](const char *key, size_t n, double *out) {
      if (!f.has(key))
        return;
      std::vector<double> v = f.numberList(key);
      if (!f.failed() && v.size() != n)
        f.fail(key, "must have " + std::to_string(n) + " entries, got " +
                        std::to_string(v.size()));
      for (size_t i = 0; !f.failed() && i < n; ++i)
        out[i] = v[i];
    };
    MupSpec mup;
    mup.attentionIn = multiplier("attention_in_multiplier");
    mup.attentionOut = multiplier("attention_out_multiplier");
    mup.key = multiplier("key_multiplier");
    mup.ssmIn = multiplier("ssm_in_multiplier");
    mup.ssmOut = multiplier("ssm_out_multiplier");
    mup.lmHead = multiplier("lm_head_multiplier");
    list("ssm_multipliers", 5, mup.ssm);
    double mlp[2] = {1, 1};
    list("mlp_multipliers", 2, mlp);
    mup.mlpGate = mlp[0];
    mup.mlpDown = mlp[1];
    double embedding = multiplier("embedding_multiplier");
    if (embedding != 1.0)
      spec.embeddingScale = embedding;
    spec.mup = mup;
  }
  if (family->refusesClipQkv && f.has("clip_qkv"))
    return makeError(source + ": field 'clip_qkv': clamping q/k/v is not "
                              "supported (only null)");
  if (family->graniteMultipliers) {
    auto multiplier = [&](const char *key) {
      double v = f.number(key, 1.0);
      if (!std::isfinite(v) || v == 0)
        f.fail(key, "must be a finite non-zero number, got " + formatNumber(v));
      return v;
    };
    double embedding = multiplier("embedding_multiplier");
    double residual = multiplier("residual_multiplier");
    double logits = multiplier("logits_scaling");
    // The softmax scale itself, replacing head_dim^-0.5.
    spec.attentionScale = multiplier("attention_multiplier");
    if (embedding != 1.0)
      spec.embeddingScale = embedding;
    if (residual != 1.0)
      spec.residualMultiplier = residual;
    if (logits != 1.0)
      spec.logitsScaling = logits;
  }
  if (f.failed())
    return makeError(f.message());

  // --- RoPE ------------------------------------------------------------------
  llvm::Expected<ModelRope> rope = readModelRope(f, *family, spec.headDim);
  if (!rope)
    return rope.takeError();
  if (spec.mla) {
    rope->global.interleaved = rope->local.interleaved =
        !family->readsRopeInterleave || f.boolean("rope_interleave", true);
    // yarn_apply_mscale: the softmax scale of the whole q·k head.
    const RopeSpec &r = rope->global;
    spec.attentionScale =
        1.0 / std::sqrt(double(spec.mla->nopeDim + spec.mla->ropeDim));
    if (r.type != "default" && r.mscaleAllDim != 0.0) {
      double m = yarnMscale(r.factor, r.mscaleAllDim);
      spec.attentionScale *= m * m;
    }
    if (f.failed())
      return makeError(f.message());
  }

  if (family->mamba.enabled)
    if (llvm::Error err = readMamba(f, family->mamba, spec))
      return std::move(err);
  std::vector<bool> linear(numLayers, false);
  if (family->deltaNet.enabled) {
    linear = readLinearLayers(f, numLayers);
    if (f.failed())
      return makeError(f.message());
    if (llvm::Error err = readDeltaNet(f, family->deltaNet, spec))
      return std::move(err);
  }
  for (int64_t i = 0; i < numLayers; ++i) {
    LayerSpec layer;
    if (sliding[i])
      layer.slidingWindow = window;
    if (useRope[i] && !family->noRope)
      layer.rope = sliding[i] ? rope->local : rope->global;
    layer.denseMlp = spec.moe && denseMlp[i];
    if (family->hybrid.enabled) {
      char c = pattern[i];
      layer.mixer = c == 'M'   ? LayerMixer::mamba
                    : c == '*' ? LayerMixer::attention
                               : LayerMixer::mlp;
      layer.denseMlp = c == '-';
    }
    if (family->parallelMamba)
      layer.mixer = LayerMixer::attentionMambaMlp;
    if (linear[i]) {
      layer.mixer = LayerMixer::deltaNetMlp;
      layer.rope.reset();
    }
    spec.layers.push_back(std::move(layer));
  }
  // One-mixer layers without a Mamba2 or an attention layer leave those
  // parameters out (ModelBuilder), so nothing else depends on them.
  return spec;
}

llvm::Expected<ModelSpec> mlir::tfm::readHFConfig(llvm::StringRef path) {
  std::string file = path.str();
  if (llvm::sys::fs::is_directory(path)) {
    llvm::SmallString<256> p(path);
    llvm::sys::path::append(p, "config.json");
    file = std::string(p);
  }
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buffer)
    return makeError(file + ": cannot read: " + buffer.getError().message());
  return parseHFConfig((*buffer)->getBuffer(), file);
}

llvm::Error mlir::tfm::setMoeAuxLoss(ModelSpec &spec, llvm::StringRef mode) {
  if (mode != "auto" && mode != "on" && mode != "off")
    return makeError("--moe-aux-loss: expected auto, on or off, got '" + mode +
                     "'");
  if (mode == "auto")
    return llvm::Error::success();
  if (!spec.moe) {
    if (mode == "on")
      return makeError("--moe-aux-loss=on: " + spec.architecture +
                       " has no MoE layers");
    return llvm::Error::success();
  }
  if (!spec.moe->hasAuxLoss) {
    if (mode == "on")
      return makeError("--moe-aux-loss=on: HF has no load-balancing loss for " +
                       spec.architecture);
    return llvm::Error::success();
  }
  spec.moe->outputRouterLogits = mode == "on";
  return llvm::Error::success();
}
