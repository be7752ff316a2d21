//===- LearningRate.h - learning-rate schedules ------------------*- C++
//-*-===//
//
// The schedules of transformers' get_scheduler, as HF's Trainer steps them:
// update k (0-based) runs at base_lr * factor(k), so a warm-up's first
// update has a learning rate of 0.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_LEARNINGRATE_H
#define TFM_ENGINE_LEARNINGRATE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir::tfm {

struct LearningRateSchedule {
  enum class Kind {
    /// base_lr after the warm-up (get_constant_schedule_with_warmup).
    constant,
    /// linear to 0 at `totalSteps` (get_linear_schedule_with_warmup).
    linear,
    /// half a cosine to 0 at `totalSteps` (get_cosine_schedule_with_warmup).
    cosine,
  };
  Kind kind = Kind::constant;
  double baseLr = 1e-3;
  /// Updates with a linear ramp from 0 (k / warmupSteps).
  int64_t warmupSteps = 0;
  /// The updates of the whole run (the decays end there).
  int64_t totalSteps = 1;

  /// The learning rate of update `k` (0-based).
  double at(int64_t k) const;
};

/// "constant", "linear", "cosine"; an error names the accepted values.
llvm::Expected<LearningRateSchedule::Kind> parseSchedule(llvm::StringRef name);
llvm::StringRef scheduleName(LearningRateSchedule::Kind kind);

} // namespace mlir::tfm

#endif // TFM_ENGINE_LEARNINGRATE_H
