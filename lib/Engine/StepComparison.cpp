//===- StepComparison.cpp - a device's step against the CPU's -------------===//
//
// The tolerance policy of --check-against-cpu (TrainingStep.h states it).
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/TrainingStep.h"
#include "tfm/Support/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tfm;

/// Worst |a - b| / (atol + rtol |b|) over two arrays (<= 1 passes); a NaN
/// on either side (unless on both) or a size mismatch is infinitely bad.
static double worstRatio(const std::vector<float> &a,
                         const std::vector<float> &b, double atol,
                         double rtol) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (a.size() != b.size())
    return kInf;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i]))
        return kInf;
      continue;
    }
    double ratio =
        std::abs(double(a[i]) - b[i]) / (atol + rtol * std::abs(b[i]));
    if (!(ratio <= worst))
      worst = std::isnan(ratio) ? kInf : ratio; // inf - inf is NaN
  }
  return worst;
}

/// The largest |x|.
static double maxAbs(const std::vector<float> &a) {
  double m = 0;
  for (float v : a)
    m = std::max(m, double(std::abs(v)));
  return m;
}

llvm::Expected<StepComparison>
mlir::tfm::compareSteps(const StepResult &result, const StepResult &reference,
                        Precision precision) {
  if (result.loss.has_value() != reference.loss.has_value() ||
      result.parameterGradients.size() != reference.parameterGradients.size())
    return makeError("different numbers of results");
  if (result.logits.shape != reference.logits.shape)
    return makeError("the logits have different shapes");
  for (size_t g = 0; g < result.parameterGradients.size(); ++g)
    if (result.parameterGradients[g].shape !=
        reference.parameterGradients[g].shape)
      return makeError("gradient #" + llvm::Twine(g) + " has different shapes");
  bool bf16 = precision == Precision::bf16;
  StepComparison c;
  const std::vector<float> &logits = result.logits.f32,
                           &refLogits = reference.logits.f32;
  c.logits = bf16 ? worstRatio(logits, refLogits, 1e-2 * maxAbs(refLogits), 0)
                  : worstRatio(logits, refLogits, 1e-4, 1e-4);
  if (result.loss) {
    std::vector<float> loss = {*result.loss}, refLoss = {*reference.loss};
    c.loss = bf16 ? worstRatio(loss, refLoss, 0, 1e-2)
                  : worstRatio(loss, refLoss, 1e-5, 0);
  }
  double rel = bf16 ? 5e-2 : 1e-4;
  for (size_t g = 0; g < result.parameterGradients.size(); ++g) {
    const std::vector<float> &ref = reference.parameterGradients[g].f32;
    c.gradients =
        std::max(c.gradients, worstRatio(result.parameterGradients[g].f32, ref,
                                         rel * maxAbs(ref) + 1e-30, 0));
  }
  return c;
}

llvm::Expected<StepComparison>
mlir::tfm::compareWithCpu(const TrainingStep &step, const TokenBatch &batch,
                          const StepResult &result) {
  auto reference = [&]() -> llvm::Expected<StepResult> {
    auto cpu = step.retarget(
        {Device::cpu, step.getOptions().compile.useBlas, /*chip=*/""});
    if (!cpu)
      return cpu.takeError();
    return (*cpu)->run(batch);
  }();
  if (!reference)
    return makeError("CPU reference: " + llvm::toString(reference.takeError()));
  auto compared = compareSteps(result, *reference, step.getOptions().precision);
  if (!compared)
    return makeError("GPU and CPU results differ: " +
                     llvm::toString(compared.takeError()));
  return compared;
}

std::string StepComparison::summary() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "logits " << llvm::format("%.3g", logits) << ", loss "
     << llvm::format("%.3g", loss) << ", gradients "
     << llvm::format("%.3g", gradients) << " of the tolerance"
     << (ok() ? " (ok)" : " (FAILED)");
  return text;
}
