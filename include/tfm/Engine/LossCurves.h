//===- LossCurves.h - a run's loss curves as an SVG picture -----*- C++ -*-===//
//
// OUT/loss.svg: the training loss of every update and the held-out loss of
// every evaluation against the update step, on shared axes with ticks and
// a legend; a file any browser opens. Written by tfm-train at each save and
// at the end; the same log gives the same bytes.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_LOSSCURVES_H
#define TFM_ENGINE_LOSSCURVES_H

#include "tfm/Engine/Trainer.h"

#include <string>

namespace mlir::tfm {

/// The SVG text of `log`'s and `evals`' losses.
std::string lossCurvesSvg(llvm::ArrayRef<UpdateLog> log,
                          llvm::ArrayRef<EvalLog> evals);

} // namespace mlir::tfm

#endif // TFM_ENGINE_LOSSCURVES_H
