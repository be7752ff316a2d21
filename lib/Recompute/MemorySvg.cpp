//===- MemorySvg.cpp - the memory report as a picture ---------------------===//
//
// Two panels written as plain SVG: activation memory after every op of the
// step (forward, then the backward shaded), and each layer kind's frontier
// of saved bytes per token against recompute FLOPs (as % of the layer's
// step FLOPs), the chosen plan circled.
//
//===----------------------------------------------------------------------===//

#include "tfm/Recompute/MemoryTimeline.h"

#include "llvm/Support/Format.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr double kWidth = 900, kPanel = 320, kMargin = 70;
const char *const kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c",
                               "#9467bd", "#8c564b", "#e377c2"};

/// "12.5 MiB" and the like.
std::string humanBytes(double b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.1f %s", b, units[u]);
  return s;
}

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

/// Axes of a panel whose plot area starts at y = `top`.
void axes(llvm::raw_ostream &os, double top, llvm::StringRef xLabel,
          llvm::StringRef yLabel) {
  double x0 = kMargin, y0 = top + kPanel - 40, x1 = kWidth - 20, y1 = top + 30;
  os << llvm::format("<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                     "stroke='black'/>\n",
                     x0, y0, x1, y0)
     << llvm::format("<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                     "stroke='black'/>\n",
                     x0, y0, x0, y1)
     << llvm::format("<text x='%.1f' y='%.1f' text-anchor='middle'>",
                     (x0 + x1) / 2, y0 + 30)
     << escape(xLabel) << "</text>\n"
     << llvm::format("<text x='15' y='%.1f' transform='rotate(-90 15 %.1f)' "
                     "text-anchor='middle'>",
                     (y0 + y1) / 2, (y0 + y1) / 2)
     << escape(yLabel) << "</text>\n";
}

} // namespace

void mlir::tfm::writeMemorySvg(llvm::raw_ostream &os, llvm::StringRef title,
                               const MemoryTimeline &timeline,
                               llvm::ArrayRef<FrontierSeries> frontiers) {
  double height = 2 * kPanel + 40;
  os << llvm::format("<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
                     "height='%.0f' font-family='sans-serif' font-size='12'>\n",
                     kWidth, height)
     << "<rect width='100%' height='100%' fill='white'/>\n"
     << "<text x='" << kMargin << "' y='20' font-size='14'>Activation memory, "
     << escape(title) << " (peak " << humanBytes(timeline.peak) << ")</text>\n";

  // Panel 1: bytes over the step.
  double top = 10;
  axes(os, top, "ops of the step (forward, then backward)", "activation bytes");
  double x0 = kMargin, y0 = top + kPanel - 40, w = kWidth - 20 - kMargin,
         h = kPanel - 70;
  size_t n = std::max<size_t>(timeline.bytes.size(), 1);
  double peak = std::max(timeline.peak, 1.0);
  if (timeline.backwardStart < timeline.bytes.size()) {
    double xb = x0 + w * double(timeline.backwardStart) / double(n);
    os << llvm::format("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                       "fill='#eeeeee'/>\n",
                       xb, y0 - h, x0 + w - xb, h)
       << llvm::format("<text x='%.1f' y='%.1f'>backward</text>\n", xb + 4,
                       y0 - h + 14);
  }
  os << "<polyline fill='none' stroke='" << kColors[0] << "' points='";
  for (size_t i = 0; i < timeline.bytes.size(); ++i)
    os << llvm::format("%.1f,%.1f ", x0 + w * double(i) / double(n),
                       y0 - h * timeline.bytes[i] / peak);
  os << "'/>\n"
     << llvm::format("<text x='%.1f' y='%.1f' text-anchor='end'>", x0 - 4,
                     y0 - h + 4)
     << humanBytes(peak) << "</text>\n"
     << llvm::format("<text x='%.1f' y='%.1f' text-anchor='end'>0</text>\n",
                     x0 - 4, y0 + 4);

  // Panel 2: frontiers, bytes saved (x) against recompute FLOPs (y).
  top = kPanel + 20;
  axes(os, top, "saved bytes per token and layer",
       "recompute FLOPs (% of the layer's step)");
  y0 = top + kPanel - 40;
  double maxBytes = 1, maxPct = 1;
  auto pct = [](const FrontierSeries &s, double flops) {
    return s.stepFlopsPerToken > 0 ? 100 * flops / s.stepFlopsPerToken : 0.0;
  };
  for (const FrontierSeries &s : frontiers) {
    maxBytes = std::max({maxBytes, s.saveAllBytesPerToken, s.chosen.first});
    for (auto [b, f] : s.points)
      maxPct = std::max(maxPct, pct(s, f));
    maxPct = std::max(maxPct, pct(s, s.chosen.second));
  }
  auto px = [&](double b) { return x0 + w * b / maxBytes; };
  auto py = [&](double p) { return y0 - h * p / maxPct; };
  for (auto [i, s] : llvm::enumerate(frontiers)) {
    const char *color = kColors[i % std::size(kColors)];
    std::vector<std::pair<double, double>> pts(s.points);
    llvm::sort(pts);
    os << "<polyline fill='none' stroke='" << color << "' points='";
    for (auto [b, f] : pts)
      os << llvm::format("%.1f,%.1f ", px(b), py(pct(s, f)));
    os << "'/>\n";
    for (auto [b, f] : pts)
      os << llvm::format("<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
                         px(b), py(pct(s, f)), color);
    os << llvm::format("<circle cx='%.1f' cy='%.1f' r='7' fill='none' "
                       "stroke='red' stroke-width='2'/>\n",
                       px(s.chosen.first), py(pct(s, s.chosen.second)))
       << llvm::format("<text x='%.1f' y='%.1f' fill='%s'>", x0 + w - 200,
                       top + 40 + 16 * double(i), color)
       << escape(s.name) << "</text>\n";
  }
  os << llvm::format(
            "<text x='%.1f' y='%.1f' text-anchor='end'>%.1f%%</text>\n", x0 - 4,
            y0 - h + 4, maxPct)
     << llvm::format("<text x='%.1f' y='%.1f' text-anchor='end'>", x0 + w,
                     y0 + 16)
     << humanBytes(maxBytes) << "</text>\n"
     << "<text x='" << kMargin + 10 << "' y='" << top + 40
     << "' fill='red'>circled: the chosen plan</text>\n"
     << "</svg>\n";
}
