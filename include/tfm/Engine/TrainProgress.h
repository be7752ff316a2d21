//===- TrainProgress.h - tfm-train's progress lines -------------*- C++ -*-===//
//
// One line per update, or every `logEvery` updates (the first and the last
// always):
//
//   step 3/20  loss 5.340405  grad_norm 4.0177  lr 3.000e-03  601 tok/s
//       elapsed 0:02  eta 0:10
//
// (on one line). tok/s is smoothed over updates (an exponential average, as
// progress bars smooth it, so one slow update does not swing it); elapsed
// counts from the run's first update (after compiling), and the estimate of
// the time left is the smoothed time per update times the updates left.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TRAINPROGRESS_H
#define TFM_ENGINE_TRAINPROGRESS_H

#include "tfm/Engine/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <optional>
#include <string>

namespace mlir::tfm {

class TrainProgress {
public:
  /// Lines for a run of `steps` updates to `os` (none when null).
  TrainProgress(llvm::raw_ostream *os, int64_t steps, int64_t logEvery);

  /// Takes update `l` into the averages and prints its line when due.
  void update(const UpdateLog &l);

  /// "1:02:03" or "2:03" for `seconds`.
  static std::string formatDuration(double seconds);

private:
  llvm::raw_ostream *os;
  int64_t steps, logEvery;
  std::optional<std::chrono::steady_clock::time_point> start;
  /// Smoothed tokens per second and milliseconds per update.
  double tokensPerS = 0, msPerUpdate = 0;
  bool first = true;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_TRAINPROGRESS_H
