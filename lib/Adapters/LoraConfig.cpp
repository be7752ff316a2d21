//===- LoraConfig.cpp - a LoRA adapter's configuration, PEFT's way --------===//

#include "tfm/Adapters/LoraConfig.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <regex>

using namespace mlir;
using namespace mlir::tfm;
using json = nlohmann::ordered_json;

namespace {

/// Python's re.fullmatch for the patterns PEFT configs use (ECMAScript
/// regular expressions agree with Python's on them).
bool fullMatch(const std::string &pattern, llvm::StringRef text) {
  return std::regex_match(text.str(), std::regex(pattern));
}

/// Whether `pattern` compiles; `why` says why not.
bool validRegex(const std::string &pattern, std::string &why) {
  try {
    std::regex r(pattern);
    return true;
  } catch (const std::regex_error &e) {
    why = e.what();
    return false;
  }
}

/// PEFT's get_pattern_key: key k names module m when m matches
/// "(.*\.)?(k)$" from its start.
bool patternKeyMatches(const std::string &key, llvm::StringRef module) {
  return fullMatch("(.*\\.)?(" + key + ")", module);
}

bool matchesList(const std::vector<std::string> &names,
                 llvm::StringRef module) {
  return llvm::any_of(names, [&](const std::string &n) {
    return moduleMatchesName(module, n);
  });
}

/// How a field PEFT defines but tfm does not implement must be set: the
/// default (or anything, for fields that only describe the file).
enum class Accept { anything, null, falseOrNull, emptyOrNull, zero, none };

struct KnownField {
  const char *name;
  Accept accept;
  const char *why; // what tfm does instead, for the error
};

/// LoraConfig's fields in PEFT 0.21 that tfm reads itself are handled in
/// parseLoraConfig; these are the others.
const KnownField kOtherFields[] = {
    {"alora_invocation_tokens", Accept::null, "aLoRA is not supported"},
    {"arrow_config", Accept::null, "Arrow routing is not supported"},
    {"auto_mapping", Accept::anything, ""},
    {"bias", Accept::none, "adapters without bias terms only"},
    {"corda_config", Accept::null, "CorDA initialisation is not supported"},
    {"ensure_weight_tying", Accept::falseOrNull, "not supported"},
    {"eva_config", Accept::null, "EVA initialisation is not supported"},
    {"fan_in_fan_out", Accept::falseOrNull,
     "no supported model stores Conv1D weights"},
    {"inference_mode", Accept::anything, ""},
    {"init_lora_weights", Accept::anything, ""},
    {"kasa_config", Accept::null, "KaSA is not supported"},
    {"layer_replication", Accept::null, "layer replication is not supported"},
    {"loftq_config", Accept::emptyOrNull, "LoftQ is not supported"},
    {"lora_bias", Accept::falseOrNull, "adapters without bias terms only"},
    {"lora_dropout", Accept::zero,
     "tfm trains LoRA without dropout (set it to 0)"},
    {"lora_ga_config", Accept::null, "LoRA-GA is not supported"},
    {"megatron_config", Accept::null, "Megatron layers are not supported"},
    {"megatron_core", Accept::anything, ""},
    {"modules_to_save", Accept::emptyOrNull,
     "modules_to_save is not supported (train them with --freeze instead)"},
    {"monteclora_config", Accept::null, "MonteCLoRA is not supported"},
    {"peft_version", Accept::anything, ""},
    {"qalora_group_size", Accept::anything, ""},
    {"revision", Accept::anything, ""},
    {"trainable_token_indices", Accept::null,
     "trainable tokens are not supported"},
    {"use_bdlora", Accept::null, "BD-LoRA is not supported"},
    {"use_dora", Accept::falseOrNull, "DoRA is not supported"},
    {"use_qalora", Accept::falseOrNull, "QA-LoRA is not supported"},
    {"velora_config", Accept::null, "VeLoRA is not supported"},
};

bool accepted(const json &v, Accept a) {
  switch (a) {
  case Accept::anything:
    return true;
  case Accept::null:
    return v.is_null();
  case Accept::falseOrNull:
    return v.is_null() || (v.is_boolean() && !v.get<bool>());
  case Accept::emptyOrNull:
    return v.is_null() || ((v.is_array() || v.is_object()) && v.empty());
  case Accept::zero:
    return v.is_null() || (v.is_number() && v.get<double>() == 0);
  case Accept::none:
    return v.is_string() && v.get<std::string>() == "none";
  }
  return false;
}

/// A list of strings or one string (target_modules, exclude_modules).
llvm::Error readModules(const json &v, const std::string &field,
                        const std::string &source,
                        std::vector<std::string> &list,
                        std::optional<std::string> &regex) {
  auto bad = [&](const std::string &why) {
    return makeError(source + ": field '" + field + "': " + why);
  };
  if (v.is_null())
    return llvm::Error::success();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    std::string why;
    if (!validRegex(s, why))
      return bad("'" + s + "' is not a regular expression: " + why);
    regex = s;
    return llvm::Error::success();
  }
  if (!v.is_array())
    return bad("expected a list of module names or a regular expression");
  for (const json &e : v) {
    if (!e.is_string() || e.get<std::string>().empty())
      return bad("expected module names (non-empty strings)");
    list.push_back(e.get<std::string>());
  }
  return llvm::Error::success();
}

} // namespace

bool mlir::tfm::moduleMatchesName(llvm::StringRef module,
                                  llvm::StringRef name) {
  return module == name ||
         (module.ends_with(name) && module.size() > name.size() &&
          module[module.size() - name.size() - 1] == '.');
}

void LoraConfig::setTargetModules(llvm::ArrayRef<std::string> names) {
  allLinear = names.size() == 1 &&
              llvm::StringRef(names[0]).equals_insensitive("all-linear");
  targetModules.clear();
  if (!allLinear)
    targetModules.assign(names.begin(), names.end());
}

int64_t LoraConfig::rankOf(llvm::StringRef module) const {
  for (const auto &[key, rank] : rankPattern)
    if (patternKeyMatches(key, module))
      return rank;
  return r;
}

double LoraConfig::scalingOf(llvm::StringRef module) const {
  double a = alpha;
  for (const auto &[key, value] : alphaPattern)
    if (patternKeyMatches(key, module)) {
      a = value;
      break;
    }
  double rank = double(rankOf(module));
  return useRslora ? a / std::sqrt(rank) : a / rank;
}

bool LoraConfig::excludes(llvm::StringRef module) const {
  if (excludeRegex)
    return fullMatch(*excludeRegex, module);
  return matchesList(excludeModules, module);
}

std::string mlir::tfm::leafName(llvm::StringRef name) {
  size_t dot = name.rfind('.');
  return (dot == llvm::StringRef::npos ? name : name.substr(dot + 1)).str();
}

bool LoraConfig::targetsParameter(llvm::StringRef key) const {
  return matchesList(targetParameters, key);
}

/// PEFT's check_target_module_exists for layers_to_transform: the layer
/// index in `module`, if the name has one where `patterns` say.
static std::optional<int64_t>
layerIndexOf(llvm::StringRef module, const std::vector<std::string> &patterns) {
  std::smatch m;
  std::string name = module.str();
  auto index = [&](const std::string &re) -> std::optional<int64_t> {
    int64_t layer;
    if (!std::regex_search(name, m, std::regex(re),
                           std::regex_constants::match_continuous) ||
        llvm::StringRef(m[1].str()).getAsInteger(10, layer))
      return std::nullopt;
    return layer;
  };
  if (patterns.empty())
    return index(R"(.*?\.[^.]*\.(\d+)\.)");
  for (const std::string &p : patterns)
    if (auto i = index("(?:^|.*?\\.)" + p + R"(\.(\d+)\.)"))
      return i;
  return std::nullopt;
}

bool LoraConfig::targets(llvm::StringRef module) const {
  if (excludes(module))
    return false;
  bool found = allLinear     ? true
               : targetRegex ? fullMatch(*targetRegex, module)
                             : matchesList(targetModules, module);
  if (!found || layersToTransform.empty())
    return found;
  std::optional<int64_t> layer = layerIndexOf(module, layersPattern);
  return layer && llvm::is_contained(layersToTransform, *layer);
}

llvm::Expected<LoraConfig> mlir::tfm::parseLoraConfig(llvm::StringRef text,
                                                      llvm::StringRef src) {
  std::string source = src.str();
  // Parsed without exceptions: nlohmann's parser is one template shared
  // with files built without them, and the linker keeps one instance.
  if (llvm::Error e = checkJsonText(text, source))
    return std::move(e);
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded())
    return makeError(source + ": not valid JSON");
  if (!j.is_object())
    return makeError(source + ": expected a JSON object (PEFT's "
                              "adapter_config.json)");
  auto bad = [&](const std::string &field, const std::string &why) {
    return makeError(source + ": field '" + field + "': " + why);
  };
  LoraConfig c;
  for (auto &[key, v] : j.items()) {
    if (key == "peft_type") {
      if (!v.is_string() || v.get<std::string>() != "LORA")
        return bad(key, "only LORA adapters are supported, not " + v.dump());
    } else if (key == "task_type") {
      if (!v.is_null() &&
          !(v.is_string() && v.get<std::string>() == "CAUSAL_LM"))
        return bad(key, "expected CAUSAL_LM, not " + v.dump());
    } else if (key == "r") {
      if (!v.is_number_integer() || v.get<int64_t>() <= 0 ||
          v.get<int64_t>() > (int64_t(1) << 20))
        return bad(key, "expected a positive rank, not " + v.dump());
      c.r = v.get<int64_t>();
    } else if (key == "lora_alpha") {
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        return bad(key, "expected a finite number, not " + v.dump());
      c.alpha = v.get<double>();
    } else if (key == "use_rslora") {
      if (!v.is_boolean())
        return bad(key, "expected true or false, not " + v.dump());
      c.useRslora = v.get<bool>();
    } else if (key == "target_modules") {
      std::vector<std::string> names;
      if (llvm::Error e = readModules(v, key, source, names, c.targetRegex))
        return std::move(e);
      // "all-linear", as a string or the one name of a list.
      if (c.targetRegex &&
          llvm::StringRef(*c.targetRegex).equals_insensitive("all-linear")) {
        c.targetRegex.reset();
        names = {"all-linear"};
      }
      c.setTargetModules(names);
    } else if (key == "exclude_modules") {
      if (llvm::Error e =
              readModules(v, key, source, c.excludeModules, c.excludeRegex))
        return std::move(e);
    } else if (key == "target_parameters") {
      if (v.is_null())
        continue;
      if (!v.is_array())
        return bad(key, "expected a list of parameter names");
      for (const json &e : v) {
        if (!e.is_string() || e.get<std::string>().empty())
          return bad(key, "expected parameter names (non-empty strings)");
        c.targetParameters.push_back(e.get<std::string>());
      }
    } else if (key == "rank_pattern" || key == "alpha_pattern") {
      if (v.is_null())
        continue;
      if (!v.is_object())
        return bad(key, "expected an object of module pattern -> value");
      for (auto &[pattern, value] : v.items()) {
        std::string why;
        if (!validRegex("(.*\\.)?(" + pattern + ")", why))
          return bad(key,
                     "'" + pattern + "' is not a regular expression: " + why);
        if (key == "rank_pattern") {
          if (!value.is_number_integer() || value.get<int64_t>() <= 0 ||
              value.get<int64_t>() > (int64_t(1) << 20))
            return bad(key, "'" + pattern +
                                "': expected a positive rank, not " +
                                value.dump());
          c.rankPattern.push_back({pattern, value.get<int64_t>()});
        } else {
          if (!value.is_number() || !std::isfinite(value.get<double>()))
            return bad(key, "'" + pattern +
                                "': expected a finite number, not " +
                                value.dump());
          c.alphaPattern.push_back({pattern, value.get<double>()});
        }
      }
    } else if (key == "layers_to_transform") {
      // An index or a list of them.
      auto layer = [&](const json &e) {
        return e.is_number_integer() && e.get<int64_t>() >= 0;
      };
      if (v.is_null())
        continue;
      if (layer(v)) {
        c.layersToTransform = {v.get<int64_t>()};
        continue;
      }
      if (!v.is_array() || !llvm::all_of(v, layer))
        return bad(key,
                   "expected a layer index or a list of them, not " + v.dump());
      for (const json &e : v)
        c.layersToTransform.push_back(e.get<int64_t>());
    } else if (key == "layers_pattern") {
      if (v.is_null())
        continue;
      std::vector<std::string> patterns;
      if (v.is_string())
        patterns = {v.get<std::string>()};
      else if (v.is_array() &&
               llvm::all_of(v, [](const json &e) { return e.is_string(); }))
        for (const json &e : v)
          patterns.push_back(e.get<std::string>());
      else
        return bad(key, "expected a name or a list of names, not " + v.dump());
      for (const std::string &p : patterns) {
        std::string why;
        if (!validRegex(p, why))
          return bad(key, "'" + p + "' is not a regular expression: " + why);
      }
      c.layersPattern = std::move(patterns);
    } else if (key == "base_model_name_or_path") {
      if (v.is_string())
        c.baseModel = v.get<std::string>();
    } else {
      const KnownField *known = nullptr;
      for (const KnownField &f : kOtherFields)
        if (key == f.name)
          known = &f;
      if (!known)
        return bad(key, "not a field of PEFT 0.21's LoraConfig");
      if (!accepted(v, known->accept))
        return bad(key, v.dump() + " is not supported: " + known->why);
    }
  }
  if (!j.contains("peft_type"))
    return makeError(source + ": no 'peft_type' (not a PEFT adapter config)");
  if (!c.hasTargetModules() && c.targetParameters.empty())
    return makeError(source + ": neither 'target_modules' nor "
                              "'target_parameters' names a target");
  return c;
}

llvm::Expected<LoraConfig> mlir::tfm::readLoraConfig(llvm::StringRef path) {
  std::string file = path.str();
  if (llvm::sys::fs::is_directory(path))
    file = (path + "/adapter_config.json").str();
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buffer)
    return makeError(file + ": " + buffer.getError().message());
  return parseLoraConfig((*buffer)->getBuffer(), file);
}

llvm::Error mlir::tfm::checkLoraConfig(const LoraConfig &c) {
  if (c.r <= 0 || c.r > (int64_t(1) << 20))
    return makeError("--lora-r " + std::to_string(c.r) +
                     ": expected a positive rank");
  if (!std::isfinite(c.alpha))
    return makeError("--lora-alpha: expected a finite number");
  if (!c.hasTargetModules() && c.targetParameters.empty())
    return makeError("LoRA needs a target: --lora-target-modules "
                     "(names, a regular expression or all-linear) or "
                     "--lora-target-parameters");
  std::string why;
  if (c.targetRegex && !validRegex(*c.targetRegex, why))
    return makeError("--lora-target-modules '" + *c.targetRegex +
                     "': not a regular expression: " + why);
  return llvm::Error::success();
}

std::string mlir::tfm::writeLoraConfig(const LoraConfig &c) {
  json j;
  auto patterns = [](const auto &entries) {
    json o = json::object();
    for (const auto &[k, v] : entries)
      o[k] = v;
    return o;
  };
  auto modules = [&](const std::vector<std::string> &list,
                     const std::optional<std::string> &regex) -> json {
    if (regex)
      return *regex;
    if (list.empty())
      return nullptr;
    return list;
  };
  // PEFT's own field order and defaults (LoraConfig().to_dict(), 0.21).
  j["alpha_pattern"] = patterns(c.alphaPattern);
  j["auto_mapping"] = nullptr;
  j["base_model_name_or_path"] =
      c.baseModel.empty() ? json(nullptr) : json(c.baseModel);
  j["bias"] = "none";
  j["exclude_modules"] = modules(c.excludeModules, c.excludeRegex);
  j["fan_in_fan_out"] = false;
  j["inference_mode"] = true;
  j["init_lora_weights"] = true;
  j["layers_pattern"] = c.layersPattern.empty() ? json(nullptr)
                        : c.layersPattern.size() == 1
                            ? json(c.layersPattern.front())
                            : json(c.layersPattern);
  j["layers_to_transform"] =
      c.layersToTransform.empty() ? json(nullptr) : json(c.layersToTransform);
  // alpha as PEFT typed it: an int when it is one.
  if (c.alpha == std::floor(c.alpha) && std::fabs(c.alpha) < 1e15)
    j["lora_alpha"] = int64_t(c.alpha);
  else
    j["lora_alpha"] = c.alpha;
  j["lora_bias"] = false;
  j["lora_dropout"] = 0.0;
  j["modules_to_save"] = nullptr;
  j["peft_type"] = "LORA";
  j["r"] = c.r;
  j["rank_pattern"] = patterns(c.rankPattern);
  j["revision"] = nullptr;
  j["target_modules"] = c.allLinear ? json("all-linear")
                                    : modules(c.targetModules, c.targetRegex);
  j["target_parameters"] =
      c.targetParameters.empty() ? json(nullptr) : json(c.targetParameters);
  j["task_type"] = "CAUSAL_LM";
  j["use_dora"] = false;
  j["use_rslora"] = c.useRslora;
  return j.dump(2) + "\n";
}
