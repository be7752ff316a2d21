//===- ExpertTargetNames.cpp - PEFT's v4 expert names on v5 MoE models ----===//
//
// Mirrors peft.utils.transformers_weight_conversion._convert_peft_config_moe
// (PEFT 0.21.2) and the families transformers 5 maps to its two patterns
// (transformers.conversion_mapping._MODEL_TO_CONVERSION_PATTERN, with
// PEFT's own entry for mixtral).
//
//===----------------------------------------------------------------------===//

#include "tfm/Adapters/ExpertTargetNames.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// One v4 name and the v5 target_parameters entry that replaces it.
struct Rename {
  const char *v4, *v5;
};

struct Pattern {
  /// In PEFT's order (the first entry a target ends with wins).
  std::vector<Rename> renames;
  /// The v4 halves of the fused gate_up_proj.
  std::vector<std::string> fusedHalves;
};

const Pattern kMixtral = {{{"gate", "gate.weight"},
                           {"w1", "gate_up_proj"},
                           {"w3", "gate_up_proj"},
                           {"w2", "down_proj"}},
                          {"w1", "w3"}};
const Pattern kQwen2Moe = {{{"gate", "gate.weight"},
                            {"gate_proj", "gate_up_proj"},
                            {"up_proj", "gate_up_proj"},
                            {"down_proj", "down_proj"}},
                           {"gate_proj", "up_proj"}};
constexpr llvm::StringLiteral kFused = "gate_up_proj";

const Pattern *patternOf(llvm::StringRef modelType) {
  return llvm::StringSwitch<const Pattern *>(modelType)
      .Cases({"mixtral", "minimax", "minimax_m2"}, &kMixtral)
      .Cases({"Dots3NoteTextModel", "afmoe", "deepseek_v2", "deepseek_v3",
              "deepseek_v32", "dots1", "ernie4_5_moe", "glm4_moe",
              "glm4_moe_lite", "glm_moe_dsa", "glm4v_moe", "longcat_flash",
              "solar_open", "mellum", "qwen3_moe", "beam"},
             &kQwen2Moe)
      .Cases({"qwen3_omni_moe", "qwen3_omni_moe_thinker", "qwen3_omni_moe_text",
              "qwen3_next", "hunyuan_v1_moe", "flex_olmo", "olmoe",
              "sarvam_mla", "exaone_moe", "cohere2_moe"},
             &kQwen2Moe)
      .Default(nullptr);
}

/// PEFT's _resolve_string_target_modules: the leaf names a regular
/// expression or all-linear selects, with the v4 names recovered.
std::set<std::string> resolveStringTargets(const LoraConfig &config,
                                           const Pattern &pattern,
                                           const ModelNames &names) {
  std::set<std::string> matched;
  if (config.allLinear) {
    for (const std::string &m : names.linearModules)
      matched.insert(leafName(m));
    for (const Rename &r : pattern.renames)
      matched.insert(r.v4);
    return matched;
  }
  for (const auto *list : {&names.modules, &names.parameters})
    for (const std::string &key : *list)
      if (config.targets(key))
        matched.insert(leafName(key));
  // A v4 name lives inside a stacked parameter: probe it beside that
  // parameter (model.layers.0.mlp.experts.gate_proj).
  for (const Rename &r : pattern.renames) {
    if (matched.count(r.v4))
      continue;
    for (const std::string &p : names.parameters) {
      auto [container, leaf] = llvm::StringRef(p).rsplit('.');
      if (leaf == r.v5 && config.targets((container + "." + r.v4).str())) {
        matched.insert(r.v4);
        break;
      }
    }
  }
  return matched;
}

} // namespace

bool mlir::tfm::hasStackedExpertTargetNames(llvm::StringRef modelType) {
  return patternOf(modelType) != nullptr;
}

llvm::Error mlir::tfm::convertExpertTargetNames(LoraConfig &config,
                                                llvm::StringRef modelType,
                                                const ModelNames &names) {
  const Pattern *pattern = patternOf(modelType);
  if (!pattern)
    return llvm::Error::success();
  if (config.allLinear || config.targetRegex) {
    std::set<std::string> resolved =
        resolveStringTargets(config, *pattern, names);
    // Nothing selected: left for the usual "matches nothing" error.
    if (resolved.empty())
      return llvm::Error::success();
    config.allLinear = false;
    config.targetRegex.reset();
    config.targetModules.assign(resolved.begin(), resolved.end());
  }
  std::vector<std::string> modules;
  std::set<std::string> halves;
  for (const std::string &t : config.targetModules) {
    auto r = llvm::find_if(pattern->renames, [&](const Rename &r) {
      return moduleMatchesName(t, r.v4);
    });
    if (r == pattern->renames.end()) {
      modules.push_back(t);
      continue;
    }
    if (!llvm::is_contained(config.targetParameters, r->v5))
      config.targetParameters.push_back(r->v5);
    if (r->v5 == kFused)
      halves.insert(r->v4);
  }
  if (!halves.empty() && halves.size() < pattern->fusedHalves.size()) {
    std::string present, missing;
    for (const std::string &h : pattern->fusedHalves)
      (halves.count(h) ? present : missing) +=
          ((halves.count(h) ? present : missing).empty() ? "" : ", ") + h;
    return makeError("LoRA target_modules: cannot target " + present +
                     " without " + missing + " on model_type '" +
                     modelType.str() +
                     "': transformers 5 fuses them into "
                     "the experts' " +
                     kFused.str() + " (as PEFT refuses)");
  }
  if (halves.size() > 1) {
    // Each half keeps r and alpha / r in the fused adapter.
    int64_t n = int64_t(halves.size());
    std::string key = std::string(".*\\.") + kFused.str();
    auto set = [&](auto &patterns, auto value) {
      for (auto &[k, v] : patterns)
        if (k == key) {
          v = value;
          return;
        }
      patterns.push_back({key, value});
    };
    set(config.rankPattern, config.r * n);
    set(config.alphaPattern, config.alpha * double(n));
  }
  config.targetModules = std::move(modules);
  return llvm::Error::success();
}
