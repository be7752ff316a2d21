//===- LoraConfig.h - a LoRA adapter's configuration -----------*- C++ -*-===//
//
// What HF PEFT's LoraConfig (0.21) says about which projections get an
// adapter and how it scales, read from an adapter_config.json as PEFT
// writes it (or built from command-line flags), and written back the same
// way. Fields tfm does not implement are refused when they are set to
// anything but PEFT's default, naming the field; unknown fields are refused.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ADAPTERS_LORACONFIG_H
#define TFM_ADAPTERS_LORACONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::tfm {

struct LoraConfig {
  int64_t r = 8;
  double alpha = 8;
  /// rsLoRA: scaling alpha / sqrt(r) instead of alpha / r.
  bool useRslora = false;
  /// target_modules as a list: a module is targeted when its name equals an
  /// entry or ends with "." + entry.
  std::vector<std::string> targetModules;
  /// target_modules as a string: a regular expression the whole module name
  /// must match (Python's re.fullmatch).
  std::optional<std::string> targetRegex;
  /// target_modules = "all-linear": every linear projection but the output
  /// head (and the MoE router, which HF does not hold as nn.Linear).
  bool allLinear = false;
  /// exclude_modules, list or regular expression, as target_modules.
  std::vector<std::string> excludeModules;
  std::optional<std::string> excludeRegex;
  /// layers_to_transform / layers_pattern: target_modules select only the
  /// modules of these layer indices (empty: every layer); the index is the
  /// number after the first "<pattern>." in the name (without a pattern,
  /// after the second dotted component, as PEFT reads it).
  std::vector<int64_t> layersToTransform;
  std::vector<std::string> layersPattern;
  /// target_parameters: parameters adapted as PEFT's ParamWrapper does
  /// (stacked MoE experts, or a projection's weight), by name or suffix.
  std::vector<std::string> targetParameters;
  /// rank_pattern / alpha_pattern: per-module overrides, tried in order;
  /// key k matches module m when m fully matches "(.*\.)?(k)".
  std::vector<std::pair<std::string, int64_t>> rankPattern;
  std::vector<std::pair<std::string, double>> alphaPattern;
  /// base_model_name_or_path, written back as read.
  std::string baseModel;

  /// The rank and the output scale of the adapter on module `module`.
  int64_t rankOf(llvm::StringRef module) const;
  double scalingOf(llvm::StringRef module) const;
  /// Whether target_modules (and not exclude_modules) selects `module`.
  bool targets(llvm::StringRef module) const;
  /// Whether target_parameters selects the parameter `key` (its HF name:
  /// equal to an entry or ending in "." + entry).
  bool targetsParameter(llvm::StringRef key) const;
  /// Whether exclude_modules names `module`.
  bool excludes(llvm::StringRef module) const;
  /// target_modules from a list of names, where the one name "all-linear"
  /// (any case) means all-linear, as PEFT reads it.
  void setTargetModules(llvm::ArrayRef<std::string> names);
  /// Whether any target_modules are given (list, regex or all-linear).
  bool hasTargetModules() const {
    return allLinear || targetRegex || !targetModules.empty();
  }
};

/// The last dotted component of a module or parameter name ("q_proj").
std::string leafName(llvm::StringRef name);

/// PEFT's rule for a target_modules (or exclude_modules) list entry: the
/// module is `name` or ends with "." + `name`.
bool moduleMatchesName(llvm::StringRef module, llvm::StringRef name);

/// Reads an adapter_config.json's text; `source` names it in errors
/// ("<source>: field 'lora_dropout': ...").
llvm::Expected<LoraConfig> parseLoraConfig(llvm::StringRef text,
                                           llvm::StringRef source);
/// Reads `dir`/adapter_config.json (or the file itself).
llvm::Expected<LoraConfig> readLoraConfig(llvm::StringRef path);
/// Checks a configuration built from flags (r > 0, alpha finite, a target,
/// valid regular expressions), naming the flag.
llvm::Error checkLoraConfig(const LoraConfig &config);
/// The adapter_config.json PEFT writes for `config` (task CAUSAL_LM).
std::string writeLoraConfig(const LoraConfig &config);

} // namespace mlir::tfm

#endif // TFM_ADAPTERS_LORACONFIG_H
