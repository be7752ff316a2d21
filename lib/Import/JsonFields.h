//===- JsonFields.h - typed config.json fields, one-line errors -*- C++ -*-===//
//
// Reading a config.json field as the HF config classes type it (positive
// size, number, boolean, ...) and reporting the first problem as
// "<source>: field '<key>': <problem>". Also the number syntax of Python's
// json module (bare Infinity and NaN), which nlohmann does not accept.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_IMPORT_JSONFIELDS_H
#define TFM_LIB_IMPORT_JSONFIELDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::hf {

using json = nlohmann::json;

/// Sizes above this are rejected as absurd: no real model dimension is
/// near it, and products of several stay far from int64 overflow.
constexpr int64_t kMaxSize = int64_t(1) << 31;
/// Layers beyond this are rejected before any per-layer work (the largest
/// real models have about 128).
constexpr int64_t kMaxLayers = 10000;

/// A JSON number, or HF's tag for a non-finite float,
/// {"__float__": "Infinity" | "-Infinity" | "NaN"} (which bare Infinity,
/// -Infinity and NaN tokens are rewritten to before parsing).
std::optional<double> asNumber(const json &v);

/// A number as it reads in config.json (nlohmann prints inf and NaN as null).
std::string formatNumber(double x);

/// Python's json module (and so HF) accepts bare Infinity, -Infinity and NaN.
/// Rewrites them outside strings into HF's {"__float__": ...} tags, which
/// nlohmann parses and asNumber() decodes.
/// Where the rewrite moved text: (end in the rewritten text, end in the
/// original) of each replaced token, in order.
using TextShifts = std::vector<std::pair<size_t, size_t>>;
std::string acceptNonStrictNumbers(llvm::StringRef text,
                                   TextShifts *shifts = nullptr);

/// A JSON parse error of the rewritten text as the user's file has it: its
/// byte, line and column in `original`.
std::string describeParseError(const json::parse_error &e,
                               llvm::StringRef original,
                               const TextShifts &shifts);

/// Reads fields of one JSON object; the first problem is kept as the error
/// and later reads return defaults, so a parser reads straight through.
class Fields {
public:
  Fields(const json &obj, std::string source, std::string prefix = "")
      : obj(obj), source(std::move(source)), prefix(std::move(prefix)) {}

  bool failed() const { return error.has_value(); }
  const std::string &message() const { return *error; }

  void fail(llvm::StringRef key, const llvm::Twine &problem);
  void adoptError(const Fields &other);

  bool has(llvm::StringRef key) const {
    return obj.contains(key.str()) && !obj.at(key.str()).is_null();
  }
  bool present(llvm::StringRef key) const { return obj.contains(key.str()); }
  const json &at(llvm::StringRef key) const { return obj.at(key.str()); }

  /// A required positive size.
  int64_t size(llvm::StringRef key);
  /// A positive size with a default (used when absent; null is an error
  /// where the HF field is typed int).
  int64_t size(llvm::StringRef key, int64_t dflt);
  /// A required layer count, at most kMaxLayers.
  int64_t layerCount(llvm::StringRef key);
  /// A string with a default when absent; null is an error, as for the HF
  /// config fields typed `str` (HF refuses None there).
  std::string requiredString(llvm::StringRef key, llvm::StringRef dflt);
  /// A non-negative count with a default (used when absent).
  int64_t count(llvm::StringRef key, int64_t dflt);
  /// A size where absent and null both mean "derive".
  std::optional<int64_t> optionalSize(llvm::StringRef key);
  int64_t sizeValue(llvm::StringRef key, const json &v);

  /// A number (integer or float); absent or null gives `dflt`.
  double number(llvm::StringRef key, double dflt);
  double positiveNumber(llvm::StringRef key, double dflt);
  /// A number that is neither NaN nor infinite (a NaN RoPE parameter would
  /// only show up as NaN logits).
  double finiteNumber(llvm::StringRef key, double dflt);
  /// A list of positive finite numbers.
  std::vector<double> positiveNumberList(llvm::StringRef key);
  /// An optional number where null means "none".
  std::optional<double> optionalNumber(llvm::StringRef key,
                                       std::optional<double> dflt);

  bool boolean(llvm::StringRef key, bool dflt);
  std::string string(llvm::StringRef key, llvm::StringRef dflt);
  std::vector<double> numberList(llvm::StringRef key);

  /// The type of `v` (and its value, when short) for error messages.
  static std::string typeName(const json &v);

  const json &obj;
  std::string source;
  std::string prefix;
  std::optional<std::string> error;
};

} // namespace mlir::tfm::hf

#endif // TFM_LIB_IMPORT_JSONFIELDS_H
