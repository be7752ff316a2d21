//===- ReportOptions.cpp - what the report passes check alike -------------===//

#include "tfm/Analysis/ReportOptions.h"
#include "tfm/Support/CommandLine.h"
#include "tfm/Support/OutputPath.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

LogicalResult mlir::tfm::checkReportOptions(
    Operation *op, StringRef pass, int64_t batch, int64_t seq,
    ArrayRef<std::pair<StringRef, StringRef>> outputs) {
  for (auto [name, value] : {std::pair<StringRef, int64_t>("batch", batch),
                             std::pair<StringRef, int64_t>("seq", seq)})
    if (value < 1 || value > kMaxReportTokens)
      return mlir::emitError(op->getLoc())
             << pass << ": option '" << name << "' must lie in [1, 2^40], got "
             << value;
  if (batch > kMaxReportTokens / seq)
    return mlir::emitError(op->getLoc())
           << pass << ": batch * seq = " << batch << " * " << seq
           << " exceeds 2^40 tokens";
  for (auto [name, path] : outputs) {
    if (path.empty())
      continue;
    if (llvm::Expected<OutputTarget> target = resolveOutputPath(path); !target)
      return mlir::emitError(op->getLoc())
             << pass << ": option '" << name
             << "': " << llvm::toString(target.takeError());
  }
  return success();
}

LogicalResult mlir::tfm::checkReportRate(Operation *op, StringRef pass,
                                         StringRef name, double value,
                                         double low, double high) {
  if (std::isfinite(value) && value >= low && value <= high)
    return success();
  return mlir::emitError(op->getLoc())
         << pass << ": option '" << name << "' must lie in ["
         << formatOptionNumber(low) << ", " << formatOptionNumber(high)
         << "], got " << formatOptionNumber(value);
}

LogicalResult
mlir::tfm::writeReportFile(Operation *op, StringRef pass, StringRef path,
                           function_ref<void(raw_ostream &)> write) {
  if (llvm::Error e = writeOutputFile(path, write))
    return mlir::emitError(op->getLoc())
           << pass << ": " << llvm::toString(std::move(e));
  return success();
}
