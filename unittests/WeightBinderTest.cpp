//===- WeightBinderTest.cpp - weight-map mappings round trip --------------===//
//
// The importer only emits `direct` parameters today; fusion will emit
// `fuse`/`split`. These tests bind each mapping from a real safetensors file
// and check the values element by element, then write gradients back and
// check they land in the source tensors' places.
//
//===----------------------------------------------------------------------===//

#include "tfm/Runtime/WeightBinder.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Runtime/Safetensors.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <numeric>

using namespace mlir;
using namespace mlir::tfm;

namespace {

class WeightBinderTest : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<TfmDialect, func::FuncDialect>();
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tfm-binder", dir));
    // q [2, 3] = 0..5, k [1, 3] = 10..12, stacked l.{0,1}.n [3], t [2, 3].
    auto iota = [](int n, float start) {
      std::vector<float> v(n);
      std::iota(v.begin(), v.end(), start);
      return v;
    };
    q = iota(6, 0);
    k = iota(3, 10);
    n0 = iota(3, 20);
    n1 = iota(3, 30);
    t = iota(6, 40);
    llvm::SmallString<128> file(dir);
    llvm::sys::path::append(file, "model.safetensors");
    ASSERT_FALSE(
        bool(writeSafetensors(file, {{"q", DType::F32, {2, 3}, q.data()},
                                     {"k", DType::F32, {1, 3}, k.data()},
                                     {"l.0.n", DType::F32, {3}, n0.data()},
                                     {"l.1.n", DType::F32, {3}, n1.data()},
                                     {"t", DType::F32, {2, 3}, t.data()}})));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  func::FuncOp parseFunc(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &ctx);
    if (!module)
      return {};
    return cast<func::FuncOp>(module->getBody()->front());
  }

  /// Binds the function in `text` against the test checkpoint, which must
  /// fail with a message containing `expected`; returns "" when it does,
  /// otherwise what happened instead.
  std::string bindError(StringRef text, StringRef expected) {
    func::FuncOp f = parseFunc(text);
    if (!f)
      return "cannot parse the function";
    auto ckpt = Checkpoint::open(dir);
    if (!ckpt)
      return llvm::toString(ckpt.takeError());
    auto bound = bindParameters(f, *ckpt);
    if (bound)
      return "binding succeeded";
    std::string msg = llvm::toString(bound.takeError());
    return msg.find(expected.str()) == std::string::npos ? msg : "";
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  llvm::SmallString<128> dir;
  std::vector<float> q, k, n0, n1, t;
};

TEST_F(WeightBinderTest, FuseSplitStackTranspose) {
  func::FuncOp f = parseFunc(R"mlir(
    func.func @f(
      %qk: tensor<3x3xf32> {tfm.param = #tfm.param<name = "qk", mapping = fuse, sources = ["q", "k"], dim = 0>},
      %k: tensor<1x3xf32> {tfm.param = #tfm.param<name = "k_part", mapping = split, sources = ["q"], dim = 0, offset = 1>},
      %n: tensor<2x3xf32> {tfm.param = #tfm.param<name = "l.{layer}.n", stacked = true>},
      %t: tensor<3x2xf32> {tfm.param = #tfm.param<name = "t", mapping = transpose>}) {
      return
    })mlir");
  ASSERT_TRUE(f);
  auto ckpt = Checkpoint::open(dir);
  ASSERT_TRUE(bool(ckpt)) << llvm::toString(ckpt.takeError());
  // "k" is read by the fuse, "q" by fuse and split: nothing is left unused.
  auto bound = bindParameters(f, *ckpt);
  ASSERT_TRUE(bool(bound)) << llvm::toString(bound.takeError());
  EXPECT_EQ((*bound)[0], (std::vector<float>{0, 1, 2, 3, 4, 5, 10, 11, 12}));
  EXPECT_EQ((*bound)[1], (std::vector<float>{3, 4, 5}));
  EXPECT_EQ((*bound)[2], (std::vector<float>{20, 21, 22, 30, 31, 32}));
  EXPECT_EQ((*bound)[3], (std::vector<float>{40, 43, 41, 44, 42, 45}));

  // Gradients go back to the checkpoint tensors: the fuse splits into q and
  // k, the split adds into rows 1.. of q, the transpose transposes back.
  std::vector<ParamAttr> params;
  std::vector<std::vector<int64_t>> shapes;
  for (BlockArgument a : f.getArguments()) {
    params.push_back(
        f.getArgAttrOfType<ParamAttr>(a.getArgNumber(), kParamAttrName));
    shapes.emplace_back(cast<RankedTensorType>(a.getType()).getShape());
  }
  std::vector<float> gqk(9, 1.0f), gk(3, 5.0f), gn = {1, 2, 3, 4, 5, 6},
                                                gt = {1, 2, 3, 4, 5, 6};
  auto grads = unbindGradients(
      params, shapes, {gqk.data(), gk.data(), gn.data(), gt.data()}, *ckpt);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());
  std::map<std::string, std::vector<float>> byName;
  for (const NamedGradient &g : *grads)
    byName[g.name] = g.data;
  EXPECT_EQ(byName["q"], (std::vector<float>{1, 1, 1, 6, 6, 6}));
  EXPECT_EQ(byName["k"], (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(byName["l.0.n"], (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(byName["l.1.n"], (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(byName["t"], (std::vector<float>{1, 3, 5, 2, 4, 6}));
}

TEST_F(WeightBinderTest, ErrorsNameTheTensor) {
  EXPECT_EQ(bindError(R"mlir(
    func.func @f(%q: tensor<3x2xf32> {tfm.param = #tfm.param<name = "q">}) { return })mlir",
                      "tensor 'q' has shape [2, 3], the model expects [3, 2]"),
            "");
}

TEST_F(WeightBinderTest, FusedSourcesMustFit) {
  // q [2, 3] and k [1, 3] fused along dim 0 give [3, 3]: neither [4, 3]
  // nor [3, 2] fits.
  EXPECT_EQ(bindError(R"mlir(
    func.func @f(%x: tensor<4x3xf32> {tfm.param = #tfm.param<name = "x", mapping = fuse, sources = ["q", "k"], dim = 0>}) { return })mlir",
                      "fused parameter 'x': sources give 3 rows along dim 0, "
                      "the model expects 4"),
            "");
  EXPECT_EQ(bindError(R"mlir(
    func.func @g(%x: tensor<3x2xf32> {tfm.param = #tfm.param<name = "x", mapping = fuse, sources = ["q", "k"], dim = 0>}) { return })mlir",
                      "tensor 'q' has shape [2, 3], which does not fit "
                      "parameter 'x' [3, 2]"),
            "");
}

TEST_F(WeightBinderTest, UnusedTensorsAreErrors) {
  EXPECT_EQ(bindError(R"mlir(
    func.func @f(%q: tensor<2x3xf32> {tfm.param = #tfm.param<name = "q">}) { return })mlir",
                      "is not a parameter of this model"),
            "");
}

} // namespace
