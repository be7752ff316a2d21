//===- VerifierTest.cpp - building tfm ops from C++ -----------------------===//
//
// The importer builds IR through these builders; check that a model built in
// C++ verifies, and that the repeat schedule maps layers to kinds.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

TEST(VerifierTest, BuiltMatmulVerifiesAndRejectsMismatch) {
  MLIRContext ctx;
  ctx.loadDialect<TfmDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  int64_t dyn = ShapedType::kDynamic;
  auto f32 = b.getF32Type();
  auto xT = RankedTensorType::get({dyn, dyn, 64}, f32);
  auto wT = RankedTensorType::get({128, 64}, f32);
  auto yT = RankedTensorType::get({dyn, dyn, 128}, f32);
  auto fn =
      func::FuncOp::create(b, loc, "f", b.getFunctionType({xT, wT, wT}, {yT}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  auto nt = TransposeAttr::get(&ctx, Transpose::nt);
  Value good = MatmulOp::create(b, loc, yT, entry->getArgument(0),
                                entry->getArgument(1), Value(), nt);
  func::ReturnOp::create(b, loc, good);
  EXPECT_TRUE(succeeded(verify(module)));

  // The same weight read as [K, N] no longer contracts over 64.
  b.setInsertionPoint(entry->getTerminator());
  auto nn = TransposeAttr::get(&ctx, Transpose::nn);
  auto bad = MatmulOp::create(b, loc, yT, entry->getArgument(0),
                              entry->getArgument(2), Value(), nn);
  std::string msg;
  ScopedDiagnosticHandler h(&ctx, [&](Diagnostic &d) {
    msg = d.str();
    return success();
  });
  EXPECT_TRUE(failed(verify(bad)));
  EXPECT_NE(msg.find("contraction size mismatch"), std::string::npos) << msg;
  module->destroy();
}

TEST(VerifierTest, ScheduleMapsLayersToKinds) {
  MLIRContext ctx;
  ctx.loadDialect<TfmDialect, func::FuncDialect>();
  const char *text = R"mlir(
    func.func @f(%h: tensor<?x?x8xf32>, %w: tensor<3x8xf32>) -> tensor<?x?x8xf32> {
      %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%w : tensor<3x8xf32>)
          {num_layers = 3 : i64, schedule = array<i64: 1, 0, 1>} -> tensor<?x?x8xf32> {
      ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8xf32>):
        tfm.yield %x : tensor<?x?x8xf32>
      }, {
      ^bb0(%x: tensor<?x?x8xf32>, %wl: tensor<8xf32>):
        %y = tfm.silu %x : tensor<?x?x8xf32>
        tfm.yield %y : tensor<?x?x8xf32>
      }
      return %r : tensor<?x?x8xf32>
    })mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  ASSERT_TRUE(module);
  RepeatOp repeat;
  module->walk([&](RepeatOp op) { repeat = op; });
  ASSERT_TRUE(repeat);
  EXPECT_EQ(repeat.getKindOfLayer(0), 1u);
  EXPECT_EQ(repeat.getKindOfLayer(1), 0u);
  EXPECT_EQ(repeat.getKinds().size(), 2u);
}

} // namespace
