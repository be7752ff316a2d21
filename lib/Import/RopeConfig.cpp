//===- RopeConfig.cpp - read the RoPE keys of a config.json ---------------===//
//
// Every rule is the one transformers' modeling_rope_utils (and, for the
// top-level keys, the family's config class) applies; docs/importer.md
// lists them.
//
//===----------------------------------------------------------------------===//

#include "RopeConfig.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <set>

using namespace mlir::tfm;
using namespace mlir::tfm::hf;

double hf::yarnMscale(double scale, double m) {
  return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
}

namespace {

const std::set<std::string> kRopeTypes = {"default", "linear", "llama3", "yarn",
                                          "longrope"};

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
  bool needsOriginal =
      spec.type == "llama3" || spec.type == "yarn" || spec.type == "longrope";
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
    // HF (5.x) refuses yarn without a factor ("Missing required keys").
    if (!f.has("factor"))
      f.fail("factor", "required by yarn rope");
    spec.factor = f.positiveNumber("factor", 1.0);
    double mscale = f.finiteNumber("mscale", 0.0);
    double mscaleAllDim = f.finiteNumber("mscale_all_dim", 0.0);
    spec.mscaleAllDim = mscaleAllDim;
    double given = f.finiteNumber("attention_factor", 0.0);
    if (given != 0.0)
      spec.attentionFactor = given;
    else if (mscale != 0.0 && mscaleAllDim != 0.0)
      spec.attentionFactor = yarnMscale(spec.factor, mscale) /
                             yarnMscale(spec.factor, mscaleAllDim);
    else
      spec.attentionFactor = yarnMscale(spec.factor, 1.0);
    // HF: rope_parameters.get("beta_fast") or 32 (null or 0 fall back).
    // HF takes log(beta): a negative or NaN one raises there.
    double bf = f.number("beta_fast", 0.0), bs = f.number("beta_slow", 0.0);
    spec.betaFast = bf != 0.0 ? bf : 32.0;
    spec.betaSlow = bs != 0.0 ? bs : 1.0;
    if (!(spec.betaFast > 0) || std::isinf(spec.betaFast))
      f.fail("beta_fast",
             "must be a positive finite number, got " + formatNumber(bf));
    if (!(spec.betaSlow > 0) || std::isinf(spec.betaSlow))
      f.fail("beta_slow",
             "must be a positive finite number, got " + formatNumber(bs));
    spec.truncate = f.boolean("truncate", true);
  } else if (spec.type == "longrope") {
    spec.factor = f.has("factor")
                      ? f.positiveNumber("factor", 1.0)
                      : double(maxPositions) / double(spec.original);
    double given = f.finiteNumber("attention_factor", 0.0);
    spec.attentionFactor =
        given != 0.0 ? given
        : spec.factor <= 1.0
            ? 1.0
            : std::sqrt(1.0 + std::log(spec.factor) /
                                  std::log(double(spec.original)));
    // Each divides a frequency: zero or NaN would give NaN logits.
    spec.shortFactor = f.positiveNumberList("short_factor");
    spec.longFactor = f.positiveNumberList("long_factor");
    size_t half = size_t(rotaryDim / 2);
    if (!f.failed() && spec.shortFactor.size() != half)
      f.fail("short_factor",
             "must have rotary_dim / 2 = " + std::to_string(half) +
                 " entries, got " + std::to_string(spec.shortFactor.size()));
    if (!f.failed() && spec.longFactor.size() != half)
      f.fail("long_factor",
             "must have rotary_dim / 2 = " + std::to_string(half) +
                 " entries, got " + std::to_string(spec.longFactor.size()));
  }
  top.adoptError(f);
  return spec;
}

} // namespace

llvm::Expected<ModelRope>
hf::readModelRope(Fields &f, const FamilyRules &family, int64_t headDim) {
  const std::string &source = f.source;
  const json &root = f.obj;
  int64_t maxPositions =
      f.size("max_position_embeddings", family.defaultMaxPositions);
  int64_t rotaryDim = headDim;
  for (const char *key : {"rope_scaling", "rope_parameters"})
    if (f.has(key) && !f.at(key).is_object())
      return makeError(source + ": field '" + key +
                       "': must be an object or null, got " +
                       Fields::typeName(f.at(key)));
  json legacyScaling =
      root.contains("rope_scaling") ? root.at("rope_scaling") : json();
  json ropeParameters =
      root.contains("rope_parameters") ? root.at("rope_parameters") : json();
  if (family.partialRotary) {
    double prf = f.number("partial_rotary_factor", family.defaultPartialRotary);
    if (ropeParameters.is_object() &&
        ropeParameters.contains("partial_rotary_factor") &&
        ropeParameters["partial_rotary_factor"].is_number())
      prf = ropeParameters["partial_rotary_factor"].get<double>();
    if (!(prf > 0 && prf <= 1))
      return makeError(source +
                       ": field 'partial_rotary_factor': must be in (0, 1]");
    rotaryDim = int64_t(double(headDim) * prf);
  }
  if (rotaryDim <= 0 || rotaryDim % 2 != 0)
    return makeError(source + ": field 'head_dim': the rotary dimension " +
                     llvm::Twine(rotaryDim) + " must be positive and even");
  // phi3: the top-level field (class default 4096, also when absent)
  // overrides original_max_position_embeddings in the rope dict.
  std::optional<int64_t> originalOverride;
  if (family.defaultTopLevelOriginal)
    originalOverride = f.size("original_max_position_embeddings",
                              family.defaultTopLevelOriginal);
  double topTheta = f.positiveNumber("rope_theta", family.defaultTheta);
  if (f.failed())
    return makeError(f.message());

  ModelRope rope;
  if (family.ropePerLayerType) {
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
    rope.global = readRope(f, full, "rope_parameters.full_attention", topTheta,
                           rotaryDim, maxPositions, originalOverride, family);
    rope.local =
        readRope(f, local, "rope_parameters.sliding_attention", localTheta,
                 rotaryDim, maxPositions, originalOverride, family);
  } else {
    // transformers v5: rope_scaling (legacy) wins over rope_parameters.
    bool legacy = legacyScaling.is_object();
    json rp = legacy ? legacyScaling : ropeParameters;
    if (!legacy && !rp.is_object() && family.defaultRopeParameters)
      rp = json::parse(family.defaultRopeParameters);
    rope.global =
        readRope(f, rp, legacy ? "rope_scaling" : "rope_parameters", topTheta,
                 rotaryDim, maxPositions, originalOverride, family);
    rope.local = rope.global;
  }
  if (f.failed())
    return makeError(f.message());
  return rope;
}
