//===- LearningRate.cpp - learning-rate schedules -------------------------===//
//
// transformers/optimization.py's lambdas, in the same floating-point order.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/LearningRate.h"
#include "tfm/Support/Error.h"

#include <algorithm>
#include <cmath>

using namespace mlir::tfm;

double LearningRateSchedule::at(int64_t k) const {
  if (k < warmupSteps)
    return baseLr * (double(k) / double(std::max<int64_t>(1, warmupSteps)));
  double factor = 1.0;
  switch (kind) {
  case Kind::constant:
    break;
  case Kind::linear:
    factor = std::max(
        0.0, double(totalSteps - k) /
                 double(std::max<int64_t>(1, totalSteps - warmupSteps)));
    break;
  case Kind::cosine: {
    double progress = double(k - warmupSteps) /
                      double(std::max<int64_t>(1, totalSteps - warmupSteps));
    factor = std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 0.5 * 2.0 * progress)));
    break;
  }
  }
  return baseLr * factor;
}

llvm::StringRef mlir::tfm::scheduleName(LearningRateSchedule::Kind kind) {
  switch (kind) {
  case LearningRateSchedule::Kind::constant:
    return "constant";
  case LearningRateSchedule::Kind::linear:
    return "linear";
  case LearningRateSchedule::Kind::cosine:
    return "cosine";
  }
  return "";
}

llvm::Expected<LearningRateSchedule::Kind>
mlir::tfm::parseSchedule(llvm::StringRef name) {
  using Kind = LearningRateSchedule::Kind;
  for (Kind k : {Kind::constant, Kind::linear, Kind::cosine})
    if (name == scheduleName(k))
      return k;
  return makeError("--schedule " + name +
                   ": expected constant, linear or cosine");
}
