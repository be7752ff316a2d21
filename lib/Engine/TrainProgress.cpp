//===- TrainProgress.cpp - tfm-train's progress lines ---------------------===//

#include "tfm/Engine/TrainProgress.h"

#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

/// Weight of the newest update in the averages (tqdm's default smoothing).
static constexpr double kSmoothing = 0.3;

TrainProgress::TrainProgress(llvm::raw_ostream *os, int64_t steps,
                             int64_t logEvery)
    : os(os), steps(steps), logEvery(std::max<int64_t>(logEvery, 1)) {}

std::string TrainProgress::formatDuration(double seconds) {
  int64_t s =
      std::isfinite(seconds) && seconds > 0 ? int64_t(seconds + 0.5) : 0;
  std::string text;
  llvm::raw_string_ostream out(text);
  if (s >= 3600)
    out << s / 3600 << ":" << llvm::format("%02d", int(s / 60 % 60));
  else
    out << s / 60;
  out << ":" << llvm::format("%02d", int(s % 60));
  return text;
}

void TrainProgress::update(const UpdateLog &l) {
  auto now = std::chrono::steady_clock::now();
  // The clock starts when the first update began (compiling is not
  // training time).
  if (!start)
    start = now - std::chrono::microseconds(int64_t(l.ms * 1e3));
  double rate = l.ms > 0 ? double(l.tokens) / (l.ms / 1e3) : 0;
  if (first) {
    tokensPerS = rate;
    msPerUpdate = l.ms;
    first = false;
  } else {
    tokensPerS += kSmoothing * (rate - tokensPerS);
    msPerUpdate += kSmoothing * (l.ms - msPerUpdate);
  }
  if (!os)
    return;
  bool due = l.step % logEvery == 0 || l.step == steps || l.step == 1;
  if (!due)
    return;
  double elapsed = std::chrono::duration<double>(now - *start).count();
  double left = double(steps - l.step) * msPerUpdate / 1e3;
  *os << "step " << l.step << "/" << steps << "  loss "
      << llvm::format("%.6f", l.loss) << "  grad_norm "
      << llvm::format("%.4f", l.gradNorm) << "  lr "
      << llvm::format("%.3e", l.lr) << "  " << llvm::format("%.0f", tokensPerS)
      << " tok/s  elapsed " << formatDuration(elapsed) << "  eta "
      << formatDuration(left) << "\n";
  os->flush();
}
