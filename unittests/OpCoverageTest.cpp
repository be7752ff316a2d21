//===- OpCoverageTest.cpp - every tfm op has its cost and adjoint ---------===//
//
// Walks the ops the tfm dialect registers (in a context set up the way
// every tool and the engine set one up, tfm/InitAll.h) and fails for an op
// without a cost model, or without an adjoint rule unless it carries the
// documented Tfm_NotDifferentiable marker. The models are attached from the
// generated op list, so this guards the registration itself.
//
//===----------------------------------------------------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/InitAll.h"
#include "tfm/Interfaces/CostOpInterface.h"
#include "tfm/Interfaces/DifferentiableOpInterface.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

std::vector<RegisteredOperationName> tfmOps(MLIRContext &ctx) {
  std::vector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : ctx.getRegisteredOperations())
    if (name.getDialectNamespace() == TfmDialect::getDialectNamespace())
      ops.push_back(name);
  return ops;
}

class OpCoverageTest : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    registerAllTfmDialects(registry);
    ctx = std::make_unique<MLIRContext>(registry);
    ctx->loadDialect<TfmDialect>();
  }
  std::unique_ptr<MLIRContext> ctx;
};

TEST_F(OpCoverageTest, DialectRegistersOps) {
  // The forward and backward ops of docs/spec.md; a wrong namespace filter
  // would make the checks below vacuous.
  EXPECT_GE(tfmOps(*ctx).size(), 40u);
}

TEST_F(OpCoverageTest, EveryOpHasACostModel) {
  for (RegisteredOperationName op : tfmOps(*ctx))
    EXPECT_TRUE(op.hasInterface<CostOpInterface>())
        << op.getStringRef().str() << " has no cost model (TfmCosts.cpp)";
}

TEST_F(OpCoverageTest, EveryOpHasAnAdjointOrIsMarkedNotDifferentiable) {
  for (RegisteredOperationName op : tfmOps(*ctx)) {
    bool marked = op.hasTrait<OpTrait::tfm::NotDifferentiable>();
    bool rule = op.hasInterface<DifferentiableOpInterface>();
    EXPECT_NE(marked, rule)
        << op.getStringRef().str()
        << (marked ? " is marked Tfm_NotDifferentiable but has an adjoint"
                   : " has no adjoint rule (TfmAdjoints.cpp) and no "
                     "Tfm_NotDifferentiable marker");
  }
}

TEST_F(OpCoverageTest, ForwardOpsAreDifferentiableBackwardOpsAreNot) {
  EXPECT_TRUE(RegisteredOperationName::lookup("tfm.matmul", ctx.get())
                  ->hasInterface<DifferentiableOpInterface>());
  EXPECT_TRUE(RegisteredOperationName::lookup("tfm.repeat", ctx.get())
                  ->hasInterface<DifferentiableOpInterface>());
  EXPECT_TRUE(RegisteredOperationName::lookup("tfm.rmsnorm_backward", ctx.get())
                  ->hasTrait<OpTrait::tfm::NotDifferentiable>());
}

} // namespace
