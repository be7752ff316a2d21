//===- ReportOptions.h - what the report passes check alike -----*- C++ -*-===//
//
// tfm-cost-report, tfm-memory-report and tfm-plan-recompute take a batch
// and a sequence length and may write files. Both are checked before any
// work, with one error naming the pass and the option: sizes in [1, 2^40]
// (every count then stays exact in a double), finite rates, and output
// paths that can be written (resolveOutputPath), so that a bad target is
// never found after the report ran, or as LLVM's "IO failure" at exit.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ANALYSIS_REPORTOPTIONS_H
#define TFM_ANALYSIS_REPORTOPTIONS_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <utility>

namespace mlir::tfm {

/// Sizes a model could run: at least 1, at most this many tokens.
inline constexpr int64_t kMaxReportTokens = int64_t(1) << 40;

/// Checks `batch` and `seq` (each and their product in [1, 2^40]) and that
/// every non-empty output path of `outputs` ({option name, path}) can be
/// written. Emits one error on `op` and fails otherwise.
LogicalResult
checkReportOptions(Operation *op, StringRef pass, int64_t batch, int64_t seq,
                   ArrayRef<std::pair<StringRef, StringRef>> outputs = {});

/// Checks that `value` of option `name` is finite and in [low, high].
LogicalResult checkReportRate(Operation *op, StringRef pass, StringRef name,
                              double value, double low, double high);

/// Writes a report file (writeOutputFile: aside, then renamed); a failure
/// is an error on `op` naming the pass and the path.
LogicalResult writeReportFile(Operation *op, StringRef pass, StringRef path,
                              function_ref<void(raw_ostream &)> write);

} // namespace mlir::tfm

#endif // TFM_ANALYSIS_REPORTOPTIONS_H
