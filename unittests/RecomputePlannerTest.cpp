//===- RecomputePlannerTest.cpp - the ILP against brute force -------------===//
//
// The planner's plan must be the exact optimum. On random layer graphs
// small enough to enumerate, every subset of values to keep is tried: its
// cheapest completion rebuilds exactly the ops the needed values reach
// through values not kept (it is infeasible if that reaches an input or an
// op that cannot be rebuilt). The least FLOPs over subsets that fit the
// budget is the optimum the ILP must match; presets and budget parsing are
// checked on hand-made graphs.
//
//===----------------------------------------------------------------------===//

#include "tfm/Recompute/RecomputePlanner.h"

#include "gtest/gtest.h"

#include <optional>
#include <random>

using namespace mlir::tfm;

namespace {

/// A random DAG: `inputs` carried inputs, then ops each reading 1-3 earlier
/// values and defining one or two.
LayerKindGraph randomGraph(std::mt19937 &rng, unsigned inputs, unsigned ops) {
  LayerKindGraph g;
  g.name = "random";
  g.layers = 1;
  std::uniform_int_distribution<int> bytes(1, 64), flops(0, 200), coin(0, 3);
  for (unsigned i = 0; i < inputs; ++i)
    g.values.push_back(
        {mlir::Value(), "input", double(bytes(rng)), -1, coin(rng) == 0});
  for (unsigned p = 0; p < ops; ++p) {
    PlanOp op;
    op.flopsPerToken = flops(rng);
    op.recomputable = coin(rng) != 0;
    op.cheap = coin(rng) < 2;
    std::uniform_int_distribution<int> pick(0, int(g.values.size()) - 1);
    unsigned reads = 1 + coin(rng) % 3;
    for (unsigned r = 0; r < reads; ++r)
      op.inputs.push_back(pick(rng));
    g.ops.push_back(op);
    g.forwardFlopsPerToken += op.flopsPerToken;
    unsigned results = 1 + (coin(rng) == 0);
    for (unsigned r = 0; r < results; ++r)
      g.values.push_back(
          {mlir::Value(), "v", double(bytes(rng)), int(p), coin(rng) != 0});
  }
  return g;
}

/// FLOPs of the cheapest plan keeping exactly `kept` (and, with `onlyCheap`,
/// rebuilding cheap ops only); none when infeasible.
std::optional<double> completion(const LayerKindGraph &g,
                                 const std::vector<bool> &kept,
                                 bool onlyCheap) {
  std::vector<bool> rebuilt(g.ops.size(), false);
  std::vector<int> stack;
  bool ok = true;
  auto use = [&](int v) {
    if (kept[v])
      return;
    int def = g.values[v].def;
    if (def < 0 || !g.ops[def].recomputable ||
        (onlyCheap && !g.ops[def].cheap)) {
      ok = false;
      return;
    }
    if (!rebuilt[def]) {
      rebuilt[def] = true;
      stack.push_back(def);
    }
  };
  for (unsigned v = 0; v < g.values.size(); ++v)
    if (g.values[v].needed)
      use(v);
  while (ok && !stack.empty()) {
    int p = stack.back();
    stack.pop_back();
    for (int u : g.ops[p].inputs)
      use(u);
  }
  if (!ok)
    return std::nullopt;
  double f = 0;
  for (unsigned p = 0; p < g.ops.size(); ++p)
    if (rebuilt[p])
      f += g.ops[p].flopsPerToken;
  return f;
}

double keptBytes(const LayerKindGraph &g, const std::vector<bool> &kept) {
  double b = 0;
  for (unsigned v = 0; v < g.values.size(); ++v)
    if (kept[v])
      b += g.values[v].bytesPerToken;
  return b;
}

/// The least FLOPs over every kept set within `budget` bytes.
std::optional<double> bruteForce(const LayerKindGraph &g, double budget) {
  std::optional<double> best;
  unsigned n = g.values.size();
  for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
    std::vector<bool> kept(n);
    for (unsigned v = 0; v < n; ++v)
      kept[v] = mask >> v & 1;
    if (keptBytes(g, kept) > budget)
      continue;
    if (auto f = completion(g, kept, false); f && (!best || *f < *best))
      best = f;
  }
  return best;
}

/// The plan is self-consistent: what it keeps and rebuilds completes.
void expectConsistent(const LayerKindGraph &g, const RecomputePlan &plan) {
  std::vector<bool> kept(g.values.size());
  for (unsigned v = 0; v < g.values.size(); ++v)
    kept[v] = plan.saved[v] || plan.offloaded[v];
  std::optional<double> f = completion(g, kept, false);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(*f, plan.recomputeFlopsPerToken);
  EXPECT_DOUBLE_EQ(keptBytes(g, kept),
                   plan.savedBytesPerToken + plan.offloadedBytesPerToken);
}

TEST(RecomputePlanner, MatchesBruteForceOnRandomGraphs) {
  std::mt19937 rng(20261203);
  unsigned checked = 0;
  for (unsigned trial = 0; trial < 120; ++trial) {
    LayerKindGraph g = randomGraph(rng, 1 + trial % 2, 3 + trial % 5);
    if (g.values.size() > 12)
      continue;
    for (double fraction : {1.0, 0.75, 0.5, 0.35, 0.2}) {
      RecomputeBudget budget;
      budget.kind = RecomputeBudget::Kind::Fraction;
      budget.value = fraction;
      double bytes = fraction * g.saveAllBytesPerToken();
      std::optional<double> best = bruteForce(g, bytes);
      llvm::Expected<RecomputePlan> plan =
          planLayerKind(g, budget, PlannerOptions());
      if (!best) {
        // No plan fits: the planner says so, naming the minimum.
        ASSERT_FALSE(bool(plan));
        std::string message = llvm::toString(plan.takeError());
        EXPECT_NE(message.find("below the minimum"), std::string::npos)
            << message;
        continue;
      }
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
      EXPECT_DOUBLE_EQ(plan->recomputeFlopsPerToken, *best)
          << "trial " << trial << " fraction " << fraction;
      EXPECT_LE(plan->savedBytesPerToken, bytes + 1e-9);
      expectConsistent(g, *plan);
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
}

TEST(RecomputePlanner, MinimumMatchesBruteForce) {
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial < 60; ++trial) {
    LayerKindGraph g = randomGraph(rng, 1, 3 + trial % 5);
    unsigned n = g.values.size();
    std::optional<double> least;
    for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
      std::vector<bool> kept(n);
      for (unsigned v = 0; v < n; ++v)
        kept[v] = mask >> v & 1;
      if (completion(g, kept, false)) {
        double b = keptBytes(g, kept);
        if (!least || b < *least)
          least = b;
      }
    }
    llvm::Expected<double> got = minimumSavedBytes(g);
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    ASSERT_TRUE(least.has_value());
    EXPECT_DOUBLE_EQ(*got, *least) << "trial " << trial;
  }
}

/// x (input, 32 B) -> rmsnorm -> y (32 B), rstd (4 B) -> matmul -> z (32 B):
/// the backward reads x, y, rstd and z (test/Recompute/plan-recompute.mlir).
LayerKindGraph normMatmul() {
  LayerKindGraph g;
  g.name = "layer";
  g.layers = 2;
  g.values = {{mlir::Value(), "input#0", 32, -1, true},
              {mlir::Value(), "rmsnorm#0:0", 32, 0, true},
              {mlir::Value(), "rmsnorm#0:1", 4, 0, true},
              {mlir::Value(), "matmul#0", 32, 1, true}};
  g.ops = {{nullptr, 32, true, true, {0}}, {nullptr, 128, true, false, {1}}};
  g.forwardFlopsPerToken = 160;
  return g;
}

TEST(RecomputePlanner, Presets) {
  LayerKindGraph g = normMatmul();
  auto plan = [&](llvm::StringRef text) {
    llvm::Expected<RecomputeBudget> b = RecomputeBudget::parse(text);
    EXPECT_TRUE(bool(b));
    llvm::Expected<RecomputePlan> p = planLayerKind(g, *b, PlannerOptions());
    EXPECT_TRUE(bool(p));
    return *p;
  };
  RecomputePlan all = plan("save-all");
  EXPECT_EQ(all.savedBytesPerToken, 100);
  EXPECT_EQ(all.recomputeFlopsPerToken, 0);
  RecomputePlan full = plan("full");
  EXPECT_EQ(full.savedBytesPerToken, 32);
  EXPECT_EQ(full.recomputeFlopsPerToken, 160);
  EXPECT_EQ(full.saved, (std::vector<bool>{true, false, false, false}));
  RecomputePlan selective = plan("selective");
  EXPECT_EQ(selective.savedBytesPerToken, 64); // x and z: no matmul rebuilt
  EXPECT_EQ(selective.recomputeFlopsPerToken, 32);
  RecomputePlan part = plan("0.7");
  EXPECT_EQ(part.saved, (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(part.recomputed, (std::vector<bool>{true, false}));
  EXPECT_EQ(plan("64B").recomputeFlopsPerToken, 32);
  EXPECT_EQ(plan("63B").recomputeFlopsPerToken, 160);
}

TEST(RecomputePlanner, OffloadOnlyWhatComputeHides) {
  LayerKindGraph g = normMatmul();
  RecomputeBudget budget = *RecomputeBudget::parse("32B");
  PlannerOptions options;
  // 160 FLOP/token of forward at 1e12 FLOP/s hides 160e-12 s per token; at
  // 0.2 TB/s that moves 32 bytes: x or z (32 B each; the plans tie)
  // offloaded, the other saved, saves the matmul.
  options.deviceFlopsPerSecond = 1e12;
  options.offloadBytesPerSecond = 0.2e12;
  llvm::Expected<RecomputePlan> p = planLayerKind(g, budget, options);
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(p->offloadedBytesPerToken, 32);
  EXPECT_TRUE(p->offloaded[0] != p->offloaded[3]);
  EXPECT_EQ(p->recomputed, (std::vector<bool>{true, false}));
  EXPECT_EQ(p->recomputeFlopsPerToken, 32);
  EXPECT_EQ(p->savedBytesPerToken, 32);
  // A slower link hides less than z: nothing is offloaded.
  options.offloadBytesPerSecond = 0.1e12;
  p = planLayerKind(g, budget, options);
  ASSERT_TRUE(bool(p));
  EXPECT_EQ(p->offloadedBytesPerToken, 0);
  EXPECT_EQ(p->recomputeFlopsPerToken, 160);
}

TEST(RecomputeBudget, Parse) {
  auto kind = [](llvm::StringRef t) { return RecomputeBudget::parse(t); };
  EXPECT_EQ(kind("0.5")->kind, RecomputeBudget::Kind::Fraction);
  EXPECT_DOUBLE_EQ(kind("50%")->value, 0.5);
  EXPECT_DOUBLE_EQ(kind("68KiB")->value, 68 * 1024.0);
  EXPECT_DOUBLE_EQ(kind("1.5MiB")->value, 1.5 * 1024 * 1024);
  EXPECT_EQ(kind("4096B")->kind, RecomputeBudget::Kind::BytesPerToken);
  EXPECT_EQ(kind("full")->kind, RecomputeBudget::Kind::Full);
  for (const char *bad : {"", "1.01", "0", "-1", "abc", "12MB", "0x", "nan"}) {
    llvm::Expected<RecomputeBudget> b = kind(bad);
    EXPECT_FALSE(bool(b)) << bad;
    if (!b)
      llvm::consumeError(b.takeError());
  }
}

} // namespace
