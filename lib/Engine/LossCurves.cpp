//===- LossCurves.cpp - a run's loss curves as an SVG picture -------------===//

#include "tfm/Engine/LossCurves.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr double kWidth = 640, kHeight = 400;
constexpr double kLeft = 64, kRight = 16, kTop = 32, kBottom = 48;

/// A "nice" tick spacing (1, 2 or 5 times a power of ten) giving about
/// `ticks` intervals over `span`.
double tickStep(double span, int ticks) {
  double raw = span / ticks;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power)
      return m * power;
  return 10 * power;
}

} // namespace

std::string mlir::tfm::lossCurvesSvg(llvm::ArrayRef<UpdateLog> log,
                                     llvm::ArrayRef<EvalLog> evals) {
  double xMax = 1, yMin = INFINITY, yMax = -INFINITY;
  for (const UpdateLog &l : log) {
    xMax = std::max(xMax, double(l.step));
    yMin = std::min(yMin, l.loss);
    yMax = std::max(yMax, l.loss);
  }
  for (const EvalLog &e : evals) {
    xMax = std::max(xMax, double(e.step));
    yMin = std::min(yMin, e.loss);
    yMax = std::max(yMax, e.loss);
  }
  if (!(yMin <= yMax)) // no finite point
    yMin = 0, yMax = 1;
  double pad = std::max((yMax - yMin) * 0.05, 1e-3);
  yMin -= pad;
  yMax += pad;
  double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  auto px = [&](double step) { return kLeft + plotW * step / xMax; };
  auto py = [&](double loss) {
    return kTop + plotH * (yMax - loss) / (yMax - yMin);
  };
  std::string text;
  llvm::raw_string_ostream os(text);
  auto num = [](double v) { return llvm::format("%.2f", v); };
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(kWidth)
     << "\" height=\"" << num(kHeight) << "\" viewBox=\"0 0 " << num(kWidth)
     << " " << num(kHeight)
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << num(kLeft)
     << "\" y=\"20\" font-size=\"13\">loss by update step</text>\n";
  // Axes and ticks.
  os << "<g stroke=\"#999\" fill=\"none\"><rect x=\"" << num(kLeft) << "\" y=\""
     << num(kTop) << "\" width=\"" << num(plotW) << "\" height=\"" << num(plotH)
     << "\"/></g>\n<g fill=\"#333\">\n";
  double ys = tickStep(yMax - yMin, 5);
  for (double y = std::ceil(yMin / ys) * ys; y <= yMax; y += ys)
    os << "<text x=\"" << num(kLeft - 6) << "\" y=\"" << num(py(y) + 4)
       << "\" text-anchor=\"end\">" << llvm::format("%g", y) << "</text>\n";
  double xs = std::max(1.0, tickStep(xMax, 6));
  for (double x = 0; x <= xMax; x += xs)
    os << "<text x=\"" << num(px(x)) << "\" y=\"" << num(kHeight - kBottom + 16)
       << "\" text-anchor=\"middle\">" << llvm::format("%g", x) << "</text>\n";
  os << "<text x=\"" << num(kLeft + plotW / 2) << "\" y=\"" << num(kHeight - 10)
     << "\" text-anchor=\"middle\">step</text>\n</g>\n";
  auto polyline = [&](auto points, const char *color, const char *name,
                      double legendY) {
    os << "<polyline fill=\"none\" stroke=\"" << color
       << "\" stroke-width=\"1.5\" points=\"";
    for (auto [x, y] : points)
      if (std::isfinite(y))
        os << num(px(x)) << "," << num(py(y)) << " ";
    os << "\"/>\n";
    for (auto [x, y] : points)
      if (std::isfinite(y) && points.size() <= 64)
        os << "<circle cx=\"" << num(px(x)) << "\" cy=\"" << num(py(y))
           << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
    os << "<line x1=\"" << num(kWidth - kRight - 120) << "\" y1=\""
       << num(legendY) << "\" x2=\"" << num(kWidth - kRight - 100) << "\" y2=\""
       << num(legendY) << "\" stroke=\"" << color
       << "\" stroke-width=\"2\"/><text x=\"" << num(kWidth - kRight - 94)
       << "\" y=\"" << num(legendY + 4) << "\">" << name << "</text>\n";
  };
  std::vector<std::pair<double, double>> train, held;
  for (const UpdateLog &l : log)
    train.push_back({double(l.step), l.loss});
  for (const EvalLog &e : evals)
    held.push_back({double(e.step), e.loss});
  polyline(train, "#1f77b4", "training", kTop + 14);
  if (!held.empty())
    polyline(held, "#d62728", "held-out", kTop + 30);
  os << "</svg>\n";
  return text;
}
