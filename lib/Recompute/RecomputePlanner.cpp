//===- RecomputePlanner.cpp - the exact save/recompute/offload plan -------===//
//
// One integer program per layer kind (binary variables; v a body value, p an
// op):
//
//   s_v  v saved on the device      o_v  v offloaded to the host
//   r_p  p run again in the backward
//
//   every value the backward reads:  s_v + o_v + r_def(v) >= 1
//   a rebuilt op has its operands:   s_u + o_u + r_def(u) >= r_p
//                                    (an input u, which nothing defines:
//                                     s_u + o_u >= r_p)
//   memory:                          sum_v bytes_v s_v <= budget
//   offload hidden by the forward:   sum_v bytes_v o_v <= bandwidth *
//                                      forward FLOPs / device FLOP/s
//   minimise                         sum_p flops_p r_p
//
// then, with the FLOPs held at that optimum, minimise the saved plus
// offloaded bytes. CBC solves both to proven optimality (zero gap), so the
// plan is the exact optimum of this model. Presets fix variables: `full`
// allows saving inputs only, `selective` rebuilding cheap ops only (its
// first objective is the bytes, its second the FLOPs).
//
//===----------------------------------------------------------------------===//

#include "tfm/Recompute/RecomputePlanner.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <Cbc_C_Interface.h>

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

llvm::Expected<RecomputeBudget> RecomputeBudget::parse(llvm::StringRef text) {
  RecomputeBudget b;
  b.spelling = text.str();
  auto bad = [&](llvm::StringRef why = "") {
    return makeError(
        "recompute budget '" + text + "': " +
        (why.empty() ? llvm::StringRef("expected a fraction in (0, 1] "
                                       "(0.5 or 50%), a size per token and "
                                       "layer with a unit (4096B, 68KiB, "
                                       "1.5MiB), or one of save-all, "
                                       "selective, full")
                     : why));
  };
  llvm::StringRef t = text.trim();
  if (t == "save-all") {
    b.kind = Kind::SaveAll;
    return b;
  }
  if (t == "selective") {
    b.kind = Kind::Selective;
    return b;
  }
  if (t == "full") {
    b.kind = Kind::Full;
    return b;
  }
  struct Unit {
    llvm::StringLiteral suffix;
    double scale;
  };
  static const Unit units[] = {{"GiB", 1024.0 * 1024 * 1024},
                               {"MiB", 1024.0 * 1024},
                               {"KiB", 1024.0},
                               {"B", 1.0},
                               {"%", 0.01}};
  double scale = 0;
  llvm::StringRef number = t;
  for (const Unit &u : units)
    if (t.ends_with(u.suffix)) {
      number = t.drop_back(u.suffix.size()).trim();
      scale = u.scale;
      break;
    }
  double v = 0;
  if (number.empty() || number.getAsDouble(v) || !std::isfinite(v))
    return bad();
  bool isSize = scale != 0 && !t.ends_with("%");
  if (isSize) {
    if (v <= 0)
      return bad("a size must be positive");
    b.kind = Kind::BytesPerToken;
    b.value = v * scale;
    return b;
  }
  if (scale != 0)
    v *= scale;
  if (!(v > 0 && v <= 1))
    return bad("a fraction must be in (0, 1] (of the save-all bytes)");
  b.kind = Kind::Fraction;
  b.value = v;
  return b;
}

double LayerKindGraph::saveAllBytesPerToken() const {
  double bytes = 0;
  for (const PlanValue &v : values)
    if (v.needed)
      bytes += v.bytesPerToken;
  return bytes;
}

namespace {

/// What a solve minimises: recompute FLOPs, the bytes rebuilt ops move, or
/// the bytes kept (saved and offloaded).
enum class Goal { Flops, Traffic, Bytes };

/// A 0/1 program over the plan's variables, rebuilt for every solve (a CBC
/// model is not reusable after Cbc_solve).
class PlanProgram {
public:
  PlanProgram(const LayerKindGraph &g, bool offload) : g(g), offload(offload) {
    numValues = g.values.size();
    numOps = g.ops.size();
  }
  int s(unsigned v) const { return v; }
  int o(unsigned v) const { return numValues + v; }
  int r(unsigned p) const { return 2 * numValues + p; }
  unsigned numCols() const { return 2 * numValues + numOps; }

  /// Upper bounds: a variable fixed to 0 has bound 0.
  std::vector<double> upper;
  struct Row {
    std::vector<int> cols;
    std::vector<double> coefs;
    char sense; // 'G', 'L'
    double rhs;
  };
  std::vector<Row> rows;

  void addStructure() {
    upper.assign(numCols(), 1);
    for (unsigned v = 0; v < numValues; ++v)
      if (!offload)
        upper[o(v)] = 0;
    for (unsigned p = 0; p < numOps; ++p)
      if (!g.ops[p].recomputable)
        upper[r(p)] = 0;
    // Needed values are saved, offloaded or rebuilt.
    for (auto [v, value] : llvm::enumerate(g.values)) {
      if (!value.needed)
        continue;
      Row row{{s(v), o(v)}, {1, 1}, 'G', 1};
      if (value.def >= 0) {
        row.cols.push_back(r(value.def));
        row.coefs.push_back(1);
      }
      rows.push_back(std::move(row));
    }
    // A rebuilt op needs each body operand saved, offloaded or rebuilt.
    for (auto [p, op] : llvm::enumerate(g.ops))
      for (int u : op.inputs) {
        Row row{{s(u), o(u), r(p)}, {1, 1, -1}, 'G', 0};
        int def = g.values[u].def;
        if (def >= 0) {
          row.cols.push_back(r(def));
          row.coefs.push_back(1);
        }
        rows.push_back(std::move(row));
      }
  }

  /// What a plan costs per token: per op (rebuilt) or per value (kept).
  std::vector<double> objective(Goal goal, bool withOffloaded) const {
    std::vector<double> c(numCols(), 0);
    if (goal == Goal::Bytes) {
      for (unsigned v = 0; v < numValues; ++v) {
        c[s(v)] = g.values[v].bytesPerToken;
        if (withOffloaded)
          c[o(v)] = g.values[v].bytesPerToken;
      }
      return c;
    }
    for (unsigned p = 0; p < numOps; ++p)
      c[r(p)] = goal == Goal::Flops ? g.ops[p].flopsPerToken
                                    : g.ops[p].trafficPerToken;
    return c;
  }
  /// A goal's costs as CBC gets them: whole numbers of units of 2^-k,
  /// with the largest k that keeps the largest cost within 2^26 units.
  /// The cost model's sizes and counts are sums of power-of-two fractions,
  /// so this is exact for them; anything else rounds to the nearest unit
  /// (a nonzero cost stays at least one). In whole-number data the bounds
  /// CBC derives while it holds a goal at its optimum cannot cross by
  /// rounding; with costs from 1 to 1e8 as doubles they did, and Debian's
  /// Clp asserts on that (Qwen3-Next, DeepSeek-V3 layers) instead of
  /// going on.
  struct Scaled {
    std::vector<double> units;
    double unit;
  };
  Scaled scaled(Goal goal, bool withOffloaded) const {
    std::vector<double> c = objective(goal, withOffloaded);
    double largest = 0;
    for (double x : c)
      largest = std::max(largest, std::abs(x));
    int exp = 0;
    if (largest > 0)
      std::frexp(largest, &exp); // largest < 2^exp
    double unit = std::ldexp(1.0, exp - 26);
    for (double &x : c)
      if (x != 0) {
        double u = std::round(x / unit);
        x = u != 0 ? u : std::copysign(1.0, x);
      }
    return {std::move(c), unit};
  }
  /// What `plan` costs in `costs`' units.
  double unitsOf(const Scaled &costs, const RecomputePlan &plan) const {
    double sum = 0;
    for (unsigned v = 0; v < numValues; ++v) {
      if (plan.saved[v])
        sum += costs.units[s(v)];
      if (plan.offloaded[v])
        sum += costs.units[o(v)];
    }
    for (unsigned p = 0; p < numOps; ++p)
      if (plan.recomputed[p])
        sum += costs.units[r(p)];
    return sum;
  }
  /// costs <= bound (in their units), as a row; only the columns `use`
  /// accepts, when given.
  Row atMost(const Scaled &costs, double bound,
             llvm::function_ref<bool(unsigned)> use = nullptr) const {
    Row row{{}, {}, 'L', bound};
    for (unsigned col = 0; col < numCols(); ++col)
      if (costs.units[col] != 0 && (!use || use(col))) {
        row.cols.push_back(col);
        row.coefs.push_back(costs.units[col]);
      }
    return row;
  }
  /// A bound in bytes, FLOPs, ... in `costs`' units, rounded down: a plan
  /// within it is within the bound (exactly so for exact units). A bound
  /// computed in doubles (a fraction of the save-all bytes, what a link
  /// moves in a layer's time) may fall a rounding error short of a whole
  /// unit; that error is forgiven.
  static double unitsBelow(const Scaled &costs, double bound) {
    double units = bound / costs.unit;
    return std::floor(units + 1e-9 * std::abs(units) + 1e-9);
  }

  /// Minimises `units` (a goal's scaled costs) under the rows plus
  /// `extra`; std::nullopt when infeasible.
  llvm::Expected<std::optional<std::vector<double>>>
  solve(const std::vector<double> &units, llvm::ArrayRef<Row> extra) const {
    // A row no assignment within the bounds can meet is infeasible before
    // any solve.
    auto unreachable = [&](const Row &row) {
      double most = 0, least = 0;
      for (auto [col, c] : llvm::zip(row.cols, row.coefs))
        (c > 0 ? most : least) += c * upper[col];
      return row.sense == 'G' ? most < row.rhs : least > row.rhs;
    };
    if (llvm::any_of(rows, unreachable) || llvm::any_of(extra, unreachable))
      return std::optional<std::vector<double>>();
    Cbc_Model *m = Cbc_newModel();
    Cbc_setLogLevel(m, 0);
    for (unsigned c = 0; c < numCols(); ++c)
      Cbc_addCol(m, "", 0, upper[c], units[c], 1, 0, nullptr, nullptr);
    auto add = [&](const Row &row) {
      Cbc_addRow(m, "", row.cols.size(), row.cols.data(), row.coefs.data(),
                 row.sense, row.rhs);
    };
    for (const Row &row : rows)
      add(row);
    for (const Row &row : extra)
      add(row);
    Cbc_setAllowableGap(m, 0);
    Cbc_setAllowableFractionGap(m, 0);
    Cbc_solve(m);
    if (Cbc_isProvenInfeasible(m)) {
      Cbc_deleteModel(m);
      return std::optional<std::vector<double>>();
    }
    if (!Cbc_isProvenOptimal(m)) {
      Cbc_deleteModel(m);
      return makeError("recompute planner: CBC did not prove the plan of "
                       "layer kind '" +
                       g.name + "' optimal");
    }
    const double *x = Cbc_getColSolution(m);
    std::vector<double> sol(x, x + numCols());
    Cbc_deleteModel(m);
    return std::optional<std::vector<double>>(std::move(sol));
  }

  const LayerKindGraph &g;
  bool offload;
  unsigned numValues, numOps;
};

/// The plan a solution describes, trimmed to what is used: ops rebuilt are
/// those the needed values reach through values not kept (a solution may
/// set r_p on a free op no one needs), and values kept are needed ones or
/// operands of rebuilt ops.
RecomputePlan planFrom(const LayerKindGraph &g, const PlanProgram &prog,
                       const std::vector<double> &x) {
  unsigned n = g.values.size();
  auto on = [&](int col) { return x[col] > 0.5; };
  std::vector<bool> kept(n), offloaded(n);
  for (unsigned v = 0; v < n; ++v) {
    offloaded[v] = on(prog.o(v));
    kept[v] = on(prog.s(v)) || offloaded[v];
  }
  RecomputePlan plan;
  plan.saved.assign(n, false);
  plan.offloaded.assign(n, false);
  plan.recomputed.assign(g.ops.size(), false);
  std::vector<int> stack;
  auto use = [&](int v) {
    if (kept[v]) {
      plan.saved[v] = !offloaded[v];
      plan.offloaded[v] = offloaded[v];
      return;
    }
    int def = g.values[v].def;
    if (def >= 0 && !plan.recomputed[def]) {
      plan.recomputed[def] = true;
      stack.push_back(def);
    }
  };
  for (unsigned v = 0; v < n; ++v)
    if (g.values[v].needed)
      use(v);
  while (!stack.empty()) {
    int p = stack.back();
    stack.pop_back();
    for (int u : g.ops[p].inputs)
      use(u);
  }
  for (unsigned v = 0; v < n; ++v) {
    if (plan.saved[v])
      plan.savedBytesPerToken += g.values[v].bytesPerToken;
    if (plan.offloaded[v])
      plan.offloadedBytesPerToken += g.values[v].bytesPerToken;
  }
  for (unsigned p = 0; p < g.ops.size(); ++p)
    if (plan.recomputed[p]) {
      plan.recomputeFlopsPerToken += g.ops[p].flopsPerToken;
      plan.recomputeTrafficPerToken += g.ops[p].trafficPerToken;
    }
  return plan;
}

RecomputePlan saveAllPlan(const LayerKindGraph &g) {
  RecomputePlan plan;
  plan.saved.assign(g.values.size(), false);
  plan.offloaded.assign(g.values.size(), false);
  plan.recomputed.assign(g.ops.size(), false);
  for (auto [v, value] : llvm::enumerate(g.values))
    if (value.needed) {
      plan.saved[v] = true;
      plan.savedBytesPerToken += value.bytesPerToken;
    }
  return plan;
}

} // namespace

llvm::Expected<double> mlir::tfm::minimumSavedBytes(const LayerKindGraph &g) {
  PlanProgram prog(g, /*offload=*/false);
  prog.addStructure();
  auto x = prog.solve(prog.scaled(Goal::Bytes, false).units, {});
  if (!x)
    return x.takeError();
  if (!*x)
    return makeError("recompute planner: layer kind '" + g.name +
                     "' has no feasible plan");
  return planFrom(g, prog, **x).savedBytesPerToken;
}

llvm::Expected<RecomputePlan>
mlir::tfm::planLayerKind(const LayerKindGraph &g, const RecomputeBudget &budget,
                         const PlannerOptions &options) {
  using Kind = RecomputeBudget::Kind;
  if (budget.kind == Kind::SaveAll)
    return saveAllPlan(g);
  bool offload =
      options.offloadBytesPerSecond > 0 &&
      (budget.kind == Kind::Fraction || budget.kind == Kind::BytesPerToken);
  PlanProgram prog(g, offload);
  prog.addStructure();
  using Row = PlanProgram::Row;
  std::vector<Row> extra;
  if (offload) {
    double hidden = options.offloadBytesPerSecond * g.forwardFlopsPerToken /
                    options.deviceFlopsPerSecond;
    // Offloaded bytes only (the o columns).
    PlanProgram::Scaled bytes = prog.scaled(Goal::Bytes, true);
    extra.push_back(prog.atMost(
        bytes, PlanProgram::unitsBelow(bytes, hidden), [&](unsigned col) {
          return col >= unsigned(prog.o(0)) && col < unsigned(prog.r(0));
        }));
  }

  if (budget.kind == Kind::Full) {
    // Everything that can be rebuilt is: an op the backward cannot re-run
    // (it reads a value from outside the layer, or has effects) keeps its
    // results saved.
    for (auto [v, value] : llvm::enumerate(g.values))
      if (value.def >= 0 && g.ops[value.def].recomputable)
        prog.upper[prog.s(v)] = 0;
  } else if (budget.kind == Kind::Selective) {
    for (auto [p, op] : llvm::enumerate(g.ops))
      if (!op.cheap)
        prog.upper[prog.r(p)] = 0;
  } else {
    double bytes = budget.kind == Kind::Fraction
                       ? budget.value * g.saveAllBytesPerToken()
                       : budget.value;
    PlanProgram::Scaled saved = prog.scaled(Goal::Bytes, false);
    extra.push_back(prog.atMost(saved, PlanProgram::unitsBelow(saved, bytes)));
  }

  // Selective: fewest bytes, then FLOPs, then traffic. Otherwise FLOPs,
  // traffic, bytes. Each solve holds the earlier goals at their optimum.
  Goal goals[3] = {Goal::Flops, Goal::Traffic, Goal::Bytes};
  if (budget.kind == Kind::Selective) {
    goals[0] = Goal::Bytes;
    goals[1] = Goal::Flops;
    goals[2] = Goal::Traffic;
  }
  PlanProgram::Scaled costs[3];
  for (unsigned i = 0; i < 3; ++i)
    costs[i] = prog.scaled(goals[i], offload);
  auto x = prog.solve(costs[0].units, extra);
  if (!x)
    return x.takeError();
  if (!*x) {
    llvm::Expected<double> least = minimumSavedBytes(g);
    if (!least)
      return least.takeError();
    double saveAll = g.saveAllBytesPerToken();
    // Whole bytes as integers (they nearly always are), else two decimals.
    auto bytes = [](double b) {
      return b == std::floor(b) ? llvm::formatv("{0}", int64_t(b)).str()
                                : llvm::formatv("{0:f2}", b).str();
    };
    // The least fraction that fits, rounded up so that it does fit.
    double fraction =
        saveAll > 0 ? std::ceil(1000 * *least / saveAll) / 1000 : 1.0;
    return makeError(llvm::formatv(
        "recompute budget '{0}' is below the minimum for layer kind '{1}': "
        "any plan saves at least {2} bytes per token and layer ({3:f1}% of "
        "its save-all {4} bytes); use budget >= {2}B or {5:f3}, or 'full'",
        budget.spelling, g.name, bytes(*least),
        saveAll > 0 ? 100 * *least / saveAll : 0.0, bytes(saveAll), fraction));
  }
  RecomputePlan plan = planFrom(g, prog, **x);
  for (unsigned i = 1; i < 3; ++i) {
    // The trimmed plan is feasible and no worse: hold the goal at it
    // (exactly: whole units).
    const PlanProgram::Scaled &held = costs[i - 1];
    extra.push_back(prog.atMost(held, prog.unitsOf(held, plan)));
    auto y = prog.solve(costs[i].units, extra);
    if (!y)
      return y.takeError();
    if (*y)
      plan = planFrom(g, prog, **y);
  }
  return plan;
}
