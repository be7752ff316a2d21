//===- JsonFields.cpp - typed config.json fields, one-line errors ---------===//
//
// The messages here are part of the importer's interface (errors.test and
// HFConfigTest check them), so each names the field and what was found.
//
//===----------------------------------------------------------------------===//

#include "JsonFields.h"

#include <cmath>

using namespace mlir::tfm;
using namespace mlir::tfm::hf;

std::optional<double> hf::asNumber(const json &v) {
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

std::string hf::formatNumber(double x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "Infinity" : "-Infinity";
  return json(x).dump();
}

std::string hf::acceptNonStrictNumbers(llvm::StringRef text,
                                       TextShifts *shifts) {
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
    if (shifts)
      shifts->push_back({out.size(), i + 1});
  }
  return out;
}

std::string hf::describeParseError(const json::parse_error &e,
                                   llvm::StringRef original,
                                   const TextShifts &shifts) {
  std::string what = e.what();
  // e.byte is 1-based in the rewritten text; before any rewrite, positions
  // are the original's already.
  size_t byte = e.byte;
  size_t outEnd = 0, origEnd = 0;
  for (const auto &[o, g] : shifts)
    if (o < byte) {
      outEnd = o;
      origEnd = g;
    }
  if (outEnd == 0)
    return "(byte " + std::to_string(byte) + "): " + what;
  byte = origEnd + (byte - outEnd);
  size_t index = std::min(byte - 1, original.size());
  llvm::StringRef before = original.take_front(index);
  size_t line = 1 + before.count('\n');
  size_t lastNewline = before.rfind('\n');
  size_t column =
      index - (lastNewline == llvm::StringRef::npos ? 0 : lastNewline + 1) + 1;
  // nlohmann's text says "... at line L, column C: ..." of the rewritten
  // text; give the original's instead.
  size_t at = what.find(" at line ");
  size_t colon = what.find(": ", at == std::string::npos ? 0 : at);
  if (at != std::string::npos && colon != std::string::npos)
    what = what.substr(0, at) + " at line " + std::to_string(line) +
           ", column " + std::to_string(column) + what.substr(colon);
  return "(byte " + std::to_string(byte) + "): " + what;
}

//===----------------------------------------------------------------------===//
// Fields
//===----------------------------------------------------------------------===//

void Fields::fail(llvm::StringRef key, const llvm::Twine &problem) {
  if (!error)
    error = source + ": field '" + prefix + key.str() + "': " + problem.str();
}

void Fields::adoptError(const Fields &other) {
  if (!error && other.error)
    error = other.error;
}

int64_t Fields::size(llvm::StringRef key) {
  if (!obj.contains(key.str())) {
    fail(key, "required field is missing");
    return 1;
  }
  return sizeValue(key, obj.at(key.str()));
}

int64_t Fields::size(llvm::StringRef key, int64_t dflt) {
  if (!obj.contains(key.str()))
    return dflt;
  return sizeValue(key, obj.at(key.str()));
}

int64_t Fields::count(llvm::StringRef key, int64_t dflt) {
  if (!present(key))
    return dflt;
  const json &v = obj.at(key.str());
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() == 0)
    return 0;
  if (v.is_number_unsigned() && v.get<uint64_t>() == 0)
    return 0;
  return sizeValue(key, v);
}

int64_t Fields::layerCount(llvm::StringRef key) {
  int64_t n = size(key);
  if (n > kMaxLayers) {
    fail(key, llvm::Twine(n) + " layers is beyond the limit of " +
                  llvm::Twine(kMaxLayers));
    return 1;
  }
  return n;
}

std::string Fields::requiredString(llvm::StringRef key, llvm::StringRef dflt) {
  if (present(key) && at(key).is_null()) {
    fail(key, "must be a string, got null");
    return dflt.str();
  }
  return string(key, dflt);
}

std::optional<int64_t> Fields::optionalSize(llvm::StringRef key) {
  if (!has(key))
    return std::nullopt;
  return sizeValue(key, obj.at(key.str()));
}

int64_t Fields::sizeValue(llvm::StringRef key, const json &v) {
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

double Fields::number(llvm::StringRef key, double dflt) {
  if (!has(key))
    return dflt;
  std::optional<double> x = asNumber(obj.at(key.str()));
  if (!x) {
    fail(key, "must be a number, got " + typeName(obj.at(key.str())));
    return dflt;
  }
  return *x;
}

double Fields::positiveNumber(llvm::StringRef key, double dflt) {
  double x = number(key, dflt);
  if (!(x > 0) || std::isinf(x))
    fail(key, "must be a positive finite number, got " + formatNumber(x));
  return x;
}

double Fields::finiteNumber(llvm::StringRef key, double dflt) {
  double x = number(key, dflt);
  if (!std::isfinite(x))
    fail(key, "must be a finite number, got " + formatNumber(x));
  return x;
}

std::vector<double> Fields::positiveNumberList(llvm::StringRef key) {
  std::vector<double> out = numberList(key);
  for (size_t i = 0; i < out.size(); ++i)
    if (!(out[i] > 0) || std::isinf(out[i])) {
      fail(key, "entry " + llvm::Twine(i) +
                    " must be a positive finite number, got " +
                    formatNumber(out[i]));
      return {};
    }
  return out;
}

std::optional<double> Fields::optionalNumber(llvm::StringRef key,
                                             std::optional<double> dflt) {
  if (!obj.contains(key.str()))
    return dflt;
  if (obj.at(key.str()).is_null())
    return std::nullopt;
  return number(key, 0.0);
}

bool Fields::boolean(llvm::StringRef key, bool dflt) {
  if (!has(key))
    return dflt;
  const json &v = obj.at(key.str());
  if (!v.is_boolean()) {
    fail(key, "must be true or false, got " + typeName(v));
    return dflt;
  }
  return v.get<bool>();
}

std::string Fields::string(llvm::StringRef key, llvm::StringRef dflt) {
  if (!has(key))
    return dflt.str();
  const json &v = obj.at(key.str());
  if (!v.is_string()) {
    fail(key, "must be a string, got " + typeName(v));
    return dflt.str();
  }
  return v.get<std::string>();
}

std::vector<double> Fields::numberList(llvm::StringRef key) {
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
      fail(key,
           "must be a list of numbers, got an element of type " + typeName(x));
      return {};
    }
    out.push_back(*d);
  }
  return out;
}

std::string Fields::typeName(const json &v) {
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
