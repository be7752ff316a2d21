//===- ParamSummary.h - parameter counts from a tfm module ------*- C++ -*-===//

#ifndef TFM_IMPORT_PARAMSUMMARY_H
#define TFM_IMPORT_PARAMSUMMARY_H

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::tfm {

struct ParamSummary {
  /// Unique parameters: each function argument with a #tfm.param once (tied
  /// aliases are the same argument), stacked ones over all layers.
  int64_t total = 0;
  /// By the `kind` of each #tfm.param.
  std::map<std::string, int64_t> byKind;
  /// Elements of HF buffers (#tfm.param `buffer`), not in `total`.
  int64_t buffers = 0;
  /// Checkpoint name prefixes the model skips (`tfm.ignored`: MTP layers).
  std::vector<std::string> ignored;
  /// Layer kind name -> number of layers (from tfm.repeat).
  std::map<std::string, int64_t> layerKinds;
};

/// Counts the parameters of function `funcName` in `module`; fails (with a
/// diagnostic) when a count would overflow int64.
FailureOr<ParamSummary> summarizeParams(ModuleOp module, StringRef funcName);

/// The `--summary` JSON object of tfm-import-hf.
std::string formatSummaryJson(ModuleOp module, const ParamSummary &summary);

} // namespace mlir::tfm

#endif // TFM_IMPORT_PARAMSUMMARY_H
