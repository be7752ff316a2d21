//===- ParamAttrTest.cpp - #tfm.param unit tests --------------------------===//

#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

class ParamAttrTest : public ::testing::Test {
protected:
  ParamAttrTest() { ctx.loadDialect<TfmDialect>(); }

  /// Parses `text`, collecting any diagnostic instead of printing it.
  Attribute parse(StringRef text) {
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      lastError = d.str();
      return success();
    });
    return parseAttribute(text, &ctx);
  }

  MLIRContext ctx;
  std::string lastError;
};

TEST_F(ParamAttrTest, ExpandsLayerPlaceholder) {
  auto p = dyn_cast_or_null<ParamAttr>(parse(
      R"(#tfm.param<name = "model.layers.{layer}.mlp.up_proj.weight", stacked = true>)"));
  ASSERT_TRUE(p) << lastError;
  EXPECT_EQ(p.nameForLayer(0), "model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(p.nameForLayer(125), "model.layers.125.mlp.up_proj.weight");
  EXPECT_EQ(p.getMapping(), ParamMapping::direct);
}

TEST_F(ParamAttrTest, DefaultsAreOmittedWhenPrinted) {
  Attribute a =
      parse(R"(#tfm.param<name = "model.norm.weight", kind = "norm">)");
  ASSERT_TRUE(a) << lastError;
  std::string s;
  llvm::raw_string_ostream os(s);
  a.print(os);
  EXPECT_EQ(s, R"(#tfm.param<name = "model.norm.weight", kind = "norm">)");
}

TEST_F(ParamAttrTest, StackedNeedsPlaceholder) {
  EXPECT_FALSE(
      parse(R"(#tfm.param<name = "model.norm.weight", stacked = true>)"));
  EXPECT_NE(lastError.find("'{layer}'"), std::string::npos) << lastError;
}

TEST_F(ParamAttrTest, PlaceholderNeedsStacked) {
  EXPECT_FALSE(parse(R"(#tfm.param<name = "model.layers.{layer}.w">)"));
  EXPECT_NE(lastError.find("not stacked"), std::string::npos) << lastError;
}

TEST_F(ParamAttrTest, FuseNeedsTwoSources) {
  EXPECT_FALSE(
      parse(R"(#tfm.param<name = "qkv", mapping = fuse, sources = ["q"]>)"));
  EXPECT_NE(lastError.find("at least two sources"), std::string::npos)
      << lastError;
  EXPECT_TRUE(parse(
      R"(#tfm.param<name = "qkv", mapping = fuse, sources = ["q", "k", "v"]>)"))
      << lastError;
}

TEST_F(ParamAttrTest, RopeScalingKeepsExactFactors) {
  auto r = dyn_cast_or_null<RopeScalingAttr>(
      parse("#tfm.rope_scaling<kind = yarn, factor = 40.0, original = 4096, "
            "attention_factor = 1.3465735902799727>"));
  ASSERT_TRUE(r) << lastError;
  EXPECT_EQ(r.getAttentionFactor().convertToDouble(), 1.3465735902799727);
  EXPECT_EQ(r.getBetaFast().convertToDouble(), 32.0);
}

TEST_F(ParamAttrTest, Llama3NeedsOriginal) {
  EXPECT_FALSE(parse("#tfm.rope_scaling<kind = llama3, factor = 8.0>"));
  EXPECT_NE(lastError.find("original_max_position_embeddings"),
            std::string::npos)
      << lastError;
}

} // namespace
