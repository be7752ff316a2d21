//===- HFConfig.cpp - read a Hugging Face config.json ---------------------===//
//
// Every rule here is the one the transformers 5.x config class or modeling
// code applies; docs/importer.md lists them per family. Families are rows of
// a table, not code paths: adding a family means adding a row (and, only
// if it brings a new kind of rule, a new enum value).
//
//===----------------------------------------------------------------------===//

#include "tfm/Import/HFConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <set>

using namespace mlir::tfm;
using json = nlohmann::json;

namespace {

//===----------------------------------------------------------------------===//
// Family rules
//===----------------------------------------------------------------------===//

/// Which projections carry a bias.
enum class BiasRule {
  none,          // mistral, phi3: hard-coded bias=False
  attentionKey,  // q/k/v/o follow `attention_bias`
  qwen2,         // q/k/v always, o never
};

/// Which layers attend through a sliding window.
enum class WindowRule {
  none,            // llama, olmo2
  allLayers,       // mistral, phi3: `sliding_window` (null: none) on every layer
  qwen,            // `use_sliding_window`: layers >= max_window_layers
  alternate,       // gemma2: layers 0, 2, 4, ... (or `layer_types`)
  pattern,         // gemma3: (i + 1) % sliding_window_pattern != 0
  noRopeOnly,      // smollm3: only NoPE layers, when use_sliding_window
};

struct FamilyRules {
  const char *modelType;
  const char *architecture;
  /// Class default of num_key_value_heads; 0: same as num_attention_heads.
  int64_t defaultKvHeads;
  /// The field is `int | None`: an explicit null means num_attention_heads
  /// (otherwise the class rejects null).
  bool kvHeadsNullable;
  /// Class default of head_dim; 0: hidden_size / num_attention_heads.
  int64_t defaultHeadDim;
  const char *activationKey;
  const char *defaultActivation;
  double defaultEps;
  double defaultTheta;
  /// Class default of max_position_embeddings (feeds yarn/longrope/llama3).
  int64_t defaultMaxPositions;
  bool defaultTied;
  BiasRule bias;
  bool readsMlpBias;
  BlockStyle style;
  bool unitOffsetNorm;
  QkNorm qkNorm;
  bool embeddingScale;
  /// softmax scale from query_pre_attn_scalar (class default 256).
  bool queryPreAttnScalar;
  /// Class defaults of the softcaps (NaN: none); gemma3 never applies the
  /// attention softcap, so it has no key here.
  const char *attnSoftcapKey;
  double defaultAttnSoftcap;
  double defaultFinalSoftcap;
  WindowRule window;
  /// Class default of sliding_window when the key is absent (0: none).
  int64_t defaultWindow;
  /// Per layer type rope parameters (gemma3_text).
  bool ropePerLayerType;
  /// partial_rotary_factor is honoured (only phi3 implements it).
  bool partialRotary;
  /// Class default of a top-level original_max_position_embeddings field,
  /// which overrides the one in the rope dict (phi3: 4096); 0: no field.
  int64_t defaultTopLevelOriginal;
  /// Fused qkv_proj and gate_up_proj checkpoints (phi3).
  bool fusedProjections;
  /// The config class rejects hidden_size % num_attention_heads != 0.
  bool checkHeadsDivideHidden;
  /// Rope types the family accepts (empty: all).
  std::vector<std::string> ropeTypes;
};

constexpr double kNone = NAN;

const std::vector<FamilyRules> &families() {
  static const std::vector<FamilyRules> table = {
      // clang-format off
      {"gemma2", "Gemma2ForCausalLM", 4, false, 256, "hidden_activation",
       "gelu_pytorch_tanh", 1e-6, 1e4, 8192, true, BiasRule::attentionKey,
       false, BlockStyle::sandwich, true, QkNorm::none, true, true,
       "attn_logit_softcapping", 50.0, 30.0, WindowRule::alternate, 4096,
       false, false, 0, false, true, {}},
      {"gemma3_text", "Gemma3ForCausalLM", 4, false, 256, "hidden_activation",
       "gelu_pytorch_tanh", 1e-6, 1e6, 131072, true, BiasRule::attentionKey,
       false, BlockStyle::sandwich, true, QkNorm::perHead, true, true,
       nullptr, kNone, kNone, WindowRule::pattern, 4096,
       true, false, 0, false, true, {}},
      {"llama", "LlamaForCausalLM", 0, true, 0, "hidden_act", "silu", 1e-6,
       1e4, 2048, false, BiasRule::attentionKey, true, BlockStyle::preNorm,
       false, QkNorm::none, false, false, nullptr, kNone, kNone,
       WindowRule::none, 0, false, false, 0, false, true, {}},
      {"mistral", "MistralForCausalLM", 8, false, 0, "hidden_act", "silu",
       1e-6, 1e4, 131072, false, BiasRule::none, false, BlockStyle::preNorm,
       false, QkNorm::none, false, false, nullptr, kNone, kNone,
       WindowRule::allLayers, 4096, false, false, 0, false, false, {}},
      {"olmo2", "Olmo2ForCausalLM", 0, true, 0, "hidden_act", "silu", 1e-5,
       1e4, 2048, false, BiasRule::attentionKey, false, BlockStyle::postNorm,
       false, QkNorm::whole, false, false, nullptr, kNone, kNone,
       WindowRule::none, 0, false, false, 0, false, false, {}},
      {"phi3", "Phi3ForCausalLM", 0, true, 0, "hidden_act", "silu", 1e-5,
       1e4, 4096, false, BiasRule::none, false, BlockStyle::preNorm, false,
       QkNorm::none, false, false, nullptr, kNone, kNone,
       WindowRule::allLayers, 0, false, true, 4096, true, false,
       {"default", "longrope"}},
      {"qwen2", "Qwen2ForCausalLM", 32, true, 0, "hidden_act", "silu", 1e-6,
       1e4, 32768, false, BiasRule::qwen2, false, BlockStyle::preNorm, false,
       QkNorm::none, false, false, nullptr, kNone, kNone, WindowRule::qwen,
       4096, false, false, 0, false, false, {}},
      {"qwen3", "Qwen3ForCausalLM", 32, true, 128, "hidden_act", "silu", 1e-6,
       1e4, 32768, false, BiasRule::attentionKey, false, BlockStyle::preNorm,
       false, QkNorm::perHead, false, false, nullptr, kNone, kNone,
       WindowRule::qwen, 4096, false, false, 0, false, false, {}},
      {"smollm3", "SmolLM3ForCausalLM", 4, true, 0, "hidden_act", "silu",
       1e-6, 2e6, 32768, true, BiasRule::attentionKey, true,
       BlockStyle::preNorm, false, QkNorm::none, false, false, nullptr, kNone,
       kNone, WindowRule::noRopeOnly, 0, false, false, 0, false, false, {}},
      // clang-format on
  };
  return table;
}

//===----------------------------------------------------------------------===//
// Typed field access with one-line errors
//===----------------------------------------------------------------------===//

/// Sizes above this are rejected as absurd: no real model dimension is
/// near it, and products of several stay far from int64 overflow.
constexpr int64_t kMaxSize = int64_t(1) << 31;

/// A JSON number, or HF's tag for a non-finite float,
/// {"__float__": "Infinity" | "-Infinity" | "NaN"} (which bare Infinity,
/// -Infinity and NaN tokens are rewritten to before parsing).
std::optional<double> asNumber(const json &v) {
  if (v.is_number())
    return v.get<double>();
  if (v.is_object() && v.size() == 1 && v.contains("__float__") &&
      v.at("__float__").is_string()) {
    const std::string &s = v.at("__float__").get_ref<const std::string &>();
    if (s == "Infinity")
      return HUGE_VAL;
    if (s == "-Infinity")
      return -HUGE_VAL;
    if (s == "NaN")
      return NAN;
  }
  return std::nullopt;
}

/// A number as it reads in config.json (nlohmann prints inf and NaN as null).
std::string formatNumber(double x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "Infinity" : "-Infinity";
  return json(x).dump();
}

/// Reads fields of one JSON object; the first problem is kept as the error
/// and later reads return defaults, so a parser reads straight through.
class Fields {
public:
  Fields(const json &obj, std::string source, std::string prefix = "")
      : obj(obj), source(std::move(source)), prefix(std::move(prefix)) {}

  bool failed() const { return error.has_value(); }
  const std::string &message() const { return *error; }

  void fail(llvm::StringRef key, const llvm::Twine &problem) {
    if (!error)
      error = source + ": field '" + prefix + key.str() + "': " + problem.str();
  }
  void failTop(const llvm::Twine &problem) {
    if (!error)
      error = source + ": " + problem.str();
  }
  void adoptError(const Fields &other) {
    if (!error && other.error)
      error = other.error;
  }

  bool has(llvm::StringRef key) const {
    return obj.contains(key.str()) && !obj.at(key.str()).is_null();
  }
  bool present(llvm::StringRef key) const { return obj.contains(key.str()); }
  const json &at(llvm::StringRef key) const { return obj.at(key.str()); }

  /// A required positive size.
  int64_t size(llvm::StringRef key) {
    if (!obj.contains(key.str())) {
      fail(key, "required field is missing");
      return 1;
    }
    return sizeValue(key, obj.at(key.str()));
  }

  /// A positive size with a default (used when absent; null is an error
  /// where the HF field is typed int).
  int64_t size(llvm::StringRef key, int64_t dflt) {
    if (!obj.contains(key.str()))
      return dflt;
    return sizeValue(key, obj.at(key.str()));
  }

  /// A size where absent and null both mean "derive".
  std::optional<int64_t> optionalSize(llvm::StringRef key) {
    if (!has(key))
      return std::nullopt;
    return sizeValue(key, obj.at(key.str()));
  }

  int64_t sizeValue(llvm::StringRef key, const json &v) {
    if (v.is_null()) {
      fail(key, "must be a positive integer, got null");
      return 1;
    }
    if (!v.is_number_integer()) {
      fail(key, "must be a positive integer, got " + typeName(v));
      return 1;
    }
    if (v.is_number_unsigned() ? v.get<uint64_t>() >= uint64_t(kMaxSize)
                               : v.get<int64_t>() >= kMaxSize) {
      fail(key, "size " + v.dump() + " is absurdly large (limit 2^31)");
      return 1;
    }
    int64_t x = v.get<int64_t>();
    if (x <= 0) {
      fail(key, "must be a positive integer, got " + std::to_string(x));
      return 1;
    }
    return x;
  }

  /// A number (integer or float); absent or null gives `dflt`.
  double number(llvm::StringRef key, double dflt) {
    if (!has(key))
      return dflt;
    std::optional<double> x = asNumber(obj.at(key.str()));
    if (!x) {
      fail(key, "must be a number, got " + typeName(obj.at(key.str())));
      return dflt;
    }
    return *x;
  }

  /// A required number.
  double requiredNumber(llvm::StringRef key) {
    if (!has(key)) {
      fail(key, "required field is missing");
      return 1.0;
    }
    return number(key, 1.0);
  }

  double positiveNumber(llvm::StringRef key, double dflt) {
    double x = number(key, dflt);
    if (!(x > 0) || std::isinf(x))
      fail(key, "must be a positive finite number, got " + formatNumber(x));
    return x;
  }

  /// An optional number where null means "none".
  std::optional<double> optionalNumber(llvm::StringRef key,
                                       std::optional<double> dflt) {
    if (!obj.contains(key.str()))
      return dflt;
    if (obj.at(key.str()).is_null())
      return std::nullopt;
    return number(key, 0.0);
  }

  bool boolean(llvm::StringRef key, bool dflt) {
    if (!has(key))
      return dflt;
    const json &v = obj.at(key.str());
    if (!v.is_boolean()) {
      fail(key, "must be true or false, got " + typeName(v));
      return dflt;
    }
    return v.get<bool>();
  }

  std::string string(llvm::StringRef key, llvm::StringRef dflt) {
    if (!has(key))
      return dflt.str();
    const json &v = obj.at(key.str());
    if (!v.is_string()) {
      fail(key, "must be a string, got " + typeName(v));
      return dflt.str();
    }
    return v.get<std::string>();
  }

  std::vector<double> numberList(llvm::StringRef key) {
    std::vector<double> out;
    if (!has(key))
      return out;
    const json &v = obj.at(key.str());
    if (!v.is_array()) {
      fail(key, "must be a list of numbers, got " + typeName(v));
      return out;
    }
    for (const json &x : v) {
      std::optional<double> d = asNumber(x);
      if (!d) {
        fail(key, "must be a list of numbers, got an element of type " +
                      typeName(x));
        return {};
      }
      out.push_back(*d);
    }
    return out;
  }

  static std::string typeName(const json &v) {
    if (v.is_boolean())
      return "boolean";
    if (v.is_number_integer())
      return "integer " + v.dump();
    if (v.is_number())
      return "number " + v.dump();
    if (std::optional<double> x = asNumber(v))
      return "number " + formatNumber(*x);
    if (v.is_string())
      return "string " + v.dump();
    return v.type_name();
  }

  const json &obj;
  std::string source;
  std::string prefix;
  std::optional<std::string> error;
};

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

const std::set<std::string> kRopeTypes = {"default", "linear", "llama3", "yarn",
                                          "longrope"};

double yarnMscale(double scale, double m) {
  return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
}

/// Reads one rope parameter dict (`rp`, may be empty) as
/// modeling_rope_utils does. `theta` is the fallback base.
RopeSpec readRope(Fields &top, const json &rp, llvm::StringRef where,
                  double theta, int64_t rotaryDim, int64_t maxPositions,
                  std::optional<int64_t> originalOverride,
                  const FamilyRules &family) {
  RopeSpec spec;
  spec.rotaryDim = rotaryDim;
  if (!rp.is_object() && !rp.is_null()) {
    top.fail(where, "must be an object or null, got " + Fields::typeName(rp));
    return spec;
  }
  json empty = json::object();
  Fields f(rp.is_object() ? rp : empty, top.source, where.str() + ".");
  spec.theta = f.positiveNumber("rope_theta", theta);
  spec.type = f.string("rope_type", f.string("type", "default"));
  if (!kRopeTypes.count(spec.type)) {
    if (spec.type == "dynamic")
      f.fail("rope_type", "'dynamic' rope changes with the sequence length at "
                          "run time and is not supported");
    else
      f.fail("rope_type", "unknown rope type '" + spec.type +
                              "' (supported: default, linear, llama3, yarn, "
                              "longrope)");
  } else if (!family.ropeTypes.empty() &&
             !llvm::is_contained(family.ropeTypes, spec.type)) {
    f.fail("rope_type", "rope type '" + spec.type + "' is not supported by " +
                            family.modelType + " (supported: " +
                            llvm::join(family.ropeTypes, ", ") + ")");
  }
  bool needsOriginal = spec.type == "llama3" || spec.type == "yarn" ||
                       spec.type == "longrope";
  if (needsOriginal) {
    if (originalOverride)
      spec.original = *originalOverride;
    else
      spec.original = f.size("original_max_position_embeddings", maxPositions);
  }
  if (spec.type == "linear") {
    spec.factor = f.positiveNumber("factor", 1.0);
    if (!f.has("factor"))
      f.fail("factor", "required by linear rope");
  } else if (spec.type == "llama3") {
    for (const char *k : {"factor", "low_freq_factor", "high_freq_factor"})
      if (!f.has(k))
        f.fail(k, "required by llama3 rope");
    spec.factor = f.positiveNumber("factor", 1.0);
    spec.lowFreqFactor = f.positiveNumber("low_freq_factor", 1.0);
    spec.highFreqFactor = f.positiveNumber("high_freq_factor", 4.0);
    if (!f.failed() && !(spec.highFreqFactor > spec.lowFreqFactor))
      f.fail("high_freq_factor", "must exceed low_freq_factor");
  } else if (spec.type == "yarn") {
    spec.factor = f.has("factor")
                      ? f.positiveNumber("factor", 1.0)
                      : double(maxPositions) / double(spec.original);
    double mscale = f.number("mscale", 0.0);
    double mscaleAllDim = f.number("mscale_all_dim", 0.0);
    double given = f.number("attention_factor", 0.0);
    if (given != 0.0)
      spec.attentionFactor = given;
    else if (mscale != 0.0 && mscaleAllDim != 0.0)
      spec.attentionFactor = yarnMscale(spec.factor, mscale) /
                             yarnMscale(spec.factor, mscaleAllDim);
    else
      spec.attentionFactor = yarnMscale(spec.factor, 1.0);
    // HF: rope_parameters.get("beta_fast") or 32 (null or 0 fall back).
    double bf = f.number("beta_fast", 0.0), bs = f.number("beta_slow", 0.0);
    spec.betaFast = bf != 0.0 ? bf : 32.0;
    spec.betaSlow = bs != 0.0 ? bs : 1.0;
    spec.truncate = f.boolean("truncate", true);
  } else if (spec.type == "longrope") {
    spec.factor = f.has("factor")
                      ? f.positiveNumber("factor", 1.0)
                      : double(maxPositions) / double(spec.original);
    double given = f.number("attention_factor", 0.0);
    spec.attentionFactor =
        given != 0.0 ? given
        : spec.factor <= 1.0
            ? 1.0
            : std::sqrt(1.0 + std::log(spec.factor) /
                                  std::log(double(spec.original)));
    spec.shortFactor = f.numberList("short_factor");
    spec.longFactor = f.numberList("long_factor");
    size_t half = size_t(rotaryDim / 2);
    if (!f.failed() && spec.shortFactor.size() != half)
      f.fail("short_factor", "must have rotary_dim / 2 = " +
                                 std::to_string(half) + " entries, got " +
                                 std::to_string(spec.shortFactor.size()));
    if (!f.failed() && spec.longFactor.size() != half)
      f.fail("long_factor", "must have rotary_dim / 2 = " +
                                std::to_string(half) + " entries, got " +
                                std::to_string(spec.longFactor.size()));
  }
  top.adoptError(f);
  return spec;
}

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
      if (!x.is_number_integer() || (x.get<int64_t>() != 0 &&
                                     x.get<int64_t>() != 1)) {
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

//===----------------------------------------------------------------------===//
// Non-strict JSON
//===----------------------------------------------------------------------===//

/// Python's json module (and so HF) accepts bare Infinity, -Infinity and NaN.
/// Rewrites them outside strings into HF's {"__float__": ...} tags, which
/// nlohmann parses and asNumber() decodes.
std::string acceptNonStrictNumbers(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size())
        out.push_back(text[++i]);
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
      out.push_back(c);
      continue;
    }
    llvm::StringRef rest = text.substr(i);
    llvm::StringRef token;
    for (llvm::StringRef t : {"Infinity", "-Infinity", "NaN"})
      if (rest.starts_with(t))
        token = t;
    if (token.empty()) {
      out.push_back(c);
      continue;
    }
    out += "{\"__float__\": \"" + token.str() + "\"}";
    i += token.size() - 1;
  }
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// ModelSpec helpers
//===----------------------------------------------------------------------===//

bool RopeSpec::operator==(const RopeSpec &o) const {
  return theta == o.theta && rotaryDim == o.rotaryDim && type == o.type &&
         factor == o.factor && lowFreqFactor == o.lowFreqFactor &&
         highFreqFactor == o.highFreqFactor && original == o.original &&
         betaFast == o.betaFast && betaSlow == o.betaSlow &&
         truncate == o.truncate && attentionFactor == o.attentionFactor &&
         shortFactor == o.shortFactor && longFactor == o.longFactor;
}

std::string LayerSpec::kindName() const {
  std::string name = slidingWindow ? "sliding_attention" : "full_attention";
  if (!rope)
    name += "_nope";
  return name;
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
  auto fail = [&](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  if (text.trim().empty())
    return fail(source + ": empty file, expected a JSON object");
  json root;
  try {
    root = json::parse(acceptNonStrictNumbers(text));
  } catch (const json::parse_error &e) {
    return fail(source + ": not valid JSON (byte " + llvm::Twine(e.byte) +
                "): " + e.what());
  } catch (const json::exception &e) {
    // e.g. a number literal beyond the double range (out_of_range.406).
    return fail(source + ": not valid JSON: " + e.what());
  }
  if (!root.is_object())
    return fail(source + ": expected a JSON object at the top level, got " +
                root.type_name());

  Fields f(root, source.str());
  ModelSpec spec;

  // --- Family ----------------------------------------------------------------
  if (!root.contains("model_type"))
    return fail(source + ": field 'model_type': required field is missing");
  spec.modelType = f.string("model_type", "");
  if (f.failed())
    return fail(f.message());
  const FamilyRules *family = nullptr;
  for (const FamilyRules &r : families())
    if (spec.modelType == r.modelType)
      family = &r;
  if (!family)
    return fail(source + ": field 'model_type': unsupported model_type '" +
                spec.modelType + "' (supported: " +
                llvm::join(supportedModelTypes(), ", ") + ")");
  spec.architecture = family->architecture;
  if (f.has("architectures")) {
    const json &archs = f.at("architectures");
    if (!archs.is_array() || archs.empty() || !archs[0].is_string())
      return fail(source +
                  ": field 'architectures': must be a non-empty list of "
                  "strings");
    std::string arch = archs[0].get<std::string>();
    if (arch != family->architecture)
      return fail(source + ": field 'architectures': unsupported "
                           "architecture '" +
                  arch + "' for model_type '" + spec.modelType +
                  "' (expected " + family->architecture + ")");
  }

  // --- Sizes -------------------------------------------------------------------
  spec.vocabSize = f.size("vocab_size");
  spec.hiddenSize = f.size("hidden_size");
  spec.intermediateSize = f.size("intermediate_size");
  spec.numLayers = f.size("num_hidden_layers");
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
    return fail(f.message());
  if (spec.numHeads % spec.numKvHeads != 0)
    return fail(source + ": field 'num_key_value_heads': " +
                llvm::Twine(spec.numKvHeads) +
                " does not divide num_attention_heads = " +
                llvm::Twine(spec.numHeads));
  if (family->checkHeadsDivideHidden && spec.hiddenSize % spec.numHeads != 0)
    return fail(source + ": field 'num_attention_heads': " +
                llvm::Twine(spec.numHeads) + " does not divide hidden_size = " +
                llvm::Twine(spec.hiddenSize));
  if (family->defaultHeadDim) {
    spec.headDim = f.size("head_dim", family->defaultHeadDim);
  } else if (auto hd = f.optionalSize("head_dim")) {
    spec.headDim = *hd;
  } else {
    if (spec.hiddenSize % spec.numHeads != 0)
      return fail(source + ": field 'head_dim': absent, and hidden_size = " +
                  llvm::Twine(spec.hiddenSize) +
                  " is not divisible by num_attention_heads = " +
                  llvm::Twine(spec.numHeads));
    spec.headDim = spec.hiddenSize / spec.numHeads;
  }
  if (f.failed())
    return fail(f.message());
  // Products that size tensors must stay far from overflow.
  auto absurd = [&](llvm::StringRef key, llvm::StringRef product,
                    double value) {
    return fail(source + ": field '" + key + "': " + product + " = " +
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

  // --- Scalars -----------------------------------------------------------------
  spec.rmsNormEps = f.positiveNumber("rms_norm_eps", family->defaultEps);
  std::string act = f.string(family->activationKey, family->defaultActivation);
  if (act == "silu" || act == "swish")
    spec.activation = Activation::silu;
  else if (act == "gelu_pytorch_tanh" || act == "gelu_new")
    spec.activation = Activation::gelu_tanh;
  else if (!f.failed())
    f.fail(family->activationKey,
           "unsupported activation '" + act +
               "' (supported: silu, swish, gelu_pytorch_tanh, gelu_new)");
  spec.style = family->style;
  spec.unitOffsetNorm = family->unitOffsetNorm;
  spec.qkNorm = family->qkNorm;
  spec.fusedQkv = spec.fusedGateUp = family->fusedProjections;
  spec.tiedEmbeddings = f.boolean("tie_word_embeddings", family->defaultTied);
  switch (family->bias) {
  case BiasRule::none:
    break;
  case BiasRule::attentionKey:
    spec.qkvBias = spec.oBias = f.boolean("attention_bias", false);
    break;
  case BiasRule::qwen2:
    spec.qkvBias = true;
    break;
  }
  if (family->readsMlpBias)
    spec.mlpBias = f.boolean("mlp_bias", false);
  if (family->embeddingScale)
    spec.embeddingScale = std::sqrt(double(spec.hiddenSize));
  spec.attentionScale =
      family->queryPreAttnScalar
          ? 1.0 / std::sqrt(f.positiveNumber("query_pre_attn_scalar", 256))
          : 1.0 / std::sqrt(double(spec.headDim));
  auto optionalCap = [&](const char *key, double dflt) {
    std::optional<double> d;
    if (!std::isnan(dflt))
      d = dflt;
    std::optional<double> cap = f.optionalNumber(key, d);
    if (cap && (!(*cap > 0) || std::isinf(*cap)))
      f.fail(key, "must be a positive finite number or null, got " +
                      formatNumber(*cap));
    return cap;
  };
  if (family->attnSoftcapKey)
    spec.attnSoftcap =
        optionalCap(family->attnSoftcapKey, family->defaultAttnSoftcap);
  spec.finalSoftcap =
      family->modelType == std::string("gemma2") ||
              family->modelType == std::string("gemma3_text")
          ? optionalCap("final_logit_softcapping", family->defaultFinalSoftcap)
          : std::nullopt;
  if (f.failed())
    return fail(f.message());

  // --- Per-layer attention windows ------------------------------------------
  int64_t numLayers = spec.numLayers;
  std::vector<bool> sliding(numLayers, false);
  std::optional<int64_t> window;
  auto readWindow = [&]() -> std::optional<int64_t> {
    if (!f.present("sliding_window"))
      return family->defaultWindow ? std::optional<int64_t>(
                                         family->defaultWindow)
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
    return fail(f.message());
  if (!window && llvm::is_contained(sliding, true))
    return fail(source + ": field 'sliding_window': some layers are "
                         "sliding_attention but no window size is set");
  // Gemma: bidirectional attention (an embedding-model variant) is not a
  // causal LM; HF also halves the window. Refuse rather than mis-import.
  if (llvm::StringRef(family->modelType).starts_with("gemma") &&
      f.boolean("use_bidirectional_attention", false))
    return fail(source + ": field 'use_bidirectional_attention': "
                         "bidirectional attention is not supported (only "
                         "causal language models)");
  if (f.failed())
    return fail(f.message());

  // --- RoPE ----------------------------------------------------------------------
  int64_t maxPositions =
      f.size("max_position_embeddings", family->defaultMaxPositions);
  int64_t rotaryDim = spec.headDim;
  for (const char *key : {"rope_scaling", "rope_parameters"})
    if (f.has(key) && !f.at(key).is_object())
      return fail(source + ": field '" + key +
                  "': must be an object or null, got " +
                  Fields::typeName(f.at(key)));
  json legacyScaling = root.contains("rope_scaling") ? root["rope_scaling"]
                                                     : json();
  json ropeParameters = root.contains("rope_parameters")
                            ? root["rope_parameters"]
                            : json();
  if (family->partialRotary) {
    double prf = f.number("partial_rotary_factor", 1.0);
    if (ropeParameters.is_object() && ropeParameters.contains("partial_rotary_factor") &&
        ropeParameters["partial_rotary_factor"].is_number())
      prf = ropeParameters["partial_rotary_factor"].get<double>();
    if (!(prf > 0 && prf <= 1))
      return fail(source + ": field 'partial_rotary_factor': must be in (0, 1]");
    rotaryDim = int64_t(double(spec.headDim) * prf);
  }
  if (rotaryDim <= 0 || rotaryDim % 2 != 0)
    return fail(source + ": field 'head_dim': the rotary dimension " +
                llvm::Twine(rotaryDim) + " must be positive and even");
  // phi3: the top-level field (class default 4096, also when absent)
  // overrides original_max_position_embeddings in the rope dict.
  std::optional<int64_t> originalOverride;
  if (family->defaultTopLevelOriginal)
    originalOverride = f.size("original_max_position_embeddings",
                              family->defaultTopLevelOriginal);
  double topTheta = f.positiveNumber("rope_theta", family->defaultTheta);
  if (f.failed())
    return fail(f.message());

  RopeSpec globalRope, localRope;
  if (family->ropePerLayerType) {
    // gemma3_text: {sliding_attention: {...}, full_attention: {...}}, or the
    // legacy rope_theta / rope_local_base_freq / rope_scaling (global only).
    json full = legacyScaling.is_object() ? legacyScaling : json::object();
    json local = json::object();
    if (!legacyScaling.is_object() && ropeParameters.is_object() &&
        ropeParameters.contains("full_attention")) {
      full = ropeParameters["full_attention"];
      local = ropeParameters.value("sliding_attention", json::object());
    }
    double localTheta = f.positiveNumber("rope_local_base_freq", 1e4);
    globalRope = readRope(f, full, "rope_parameters.full_attention", topTheta,
                          rotaryDim, maxPositions, originalOverride, *family);
    localRope = readRope(f, local, "rope_parameters.sliding_attention",
                         localTheta, rotaryDim, maxPositions, originalOverride,
                         *family);
  } else {
    // transformers v5: rope_scaling (legacy) wins over rope_parameters.
    bool legacy = legacyScaling.is_object();
    const json &rp = legacy ? legacyScaling : ropeParameters;
    globalRope = readRope(f, rp, legacy ? "rope_scaling" : "rope_parameters",
                          topTheta, rotaryDim, maxPositions, originalOverride,
                          *family);
    localRope = globalRope;
  }
  if (f.failed())
    return fail(f.message());

  for (int64_t i = 0; i < numLayers; ++i) {
    LayerSpec layer;
    if (sliding[i])
      layer.slidingWindow = window;
    if (useRope[i])
      layer.rope = sliding[i] ? localRope : globalRope;
    spec.layers.push_back(std::move(layer));
  }
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
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   file + ": cannot read: " +
                                       buffer.getError().message());
  return parseHFConfig((*buffer)->getBuffer(), file);
}
