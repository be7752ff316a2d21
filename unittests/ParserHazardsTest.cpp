//===- ParserHazardsTest.cpp - text MLIR 22's linalg parsers crash on -----===//
//
// The lexical cases of findParserHazard; test/Fuzz/parser-hazards.test
// checks the tools' errors and, with upstream mlir-opt as the oracle, that
// refused text does crash MLIR 22's parser.
//
//===----------------------------------------------------------------------===//

#include "tfm/Support/ParserHazards.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir::tfm;

namespace {

std::string transpose(const std::string &rest) {
  return "%0 = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : "
         "tensor<3x2xf32>) permutation = " +
         rest + "\n";
}

TEST(ParserHazardsTest, IntegerListsPass) {
  for (const char *list :
       {"[1, 0]", "[]", "[ ]", "[0x1,0x0]", "[-1, 0]", "[- 1, 0]",
        "[1, // one\n 0]", "[9223372036854775807]", "[-9223372036854775808]"})
    EXPECT_FALSE(findParserHazard(transpose(list))) << list;
}

TEST(ParserHazardsTest, AnythingElseIsAHazardAtTheKeyword) {
  for (const char *list :
       {"1", "", "[1, 0", "[1,]", "[,]", "[1.0]", "[1 0]", "[0x]", "[12ab]",
        "[9223372036854775808]", "[-9223372036854775809]", "array<i64: 1>",
        "[0,nc @f(%l: tensor<?xf32>) {"}) {
    std::string text = transpose(list);
    std::optional<ParserHazard> hazard = findParserHazard(text);
    ASSERT_TRUE(hazard) << list;
    EXPECT_EQ(hazard->offset, text.find("permutation")) << list;
    EXPECT_NE(hazard->message.find("'linalg.transpose'"), std::string::npos);
  }
}

TEST(ParserHazardsTest, EachOpItsKeyword) {
  EXPECT_TRUE(findParserHazard("linalg.broadcast ins() outs() dimensions = x"));
  EXPECT_TRUE(findParserHazard("linalg.reduce {arith.addf} ins() outs() "
                               "dimensions = x"));
  // transpose's keyword is permutation; `dimensions` there is a parse
  // error, not the crash.
  EXPECT_FALSE(findParserHazard("linalg.transpose ins() dimensions = x"));
  EXPECT_FALSE(findParserHazard("linalg.broadcast ins() permutation = x"));
  // A payload op named before the reduce's own keyword.
  EXPECT_TRUE(findParserHazard("linalg.reduce { linalg.transpose } ins() "
                               "outs() dimensions = x"));
}

TEST(ParserHazardsTest, LookalikesPass) {
  // The generic form, comments, strings, SSA names and symbols.
  EXPECT_FALSE(findParserHazard(
      "%1 = \"linalg.transpose\"(%a, %b) <{permutation = array<i64: 1, 0>}>"));
  EXPECT_FALSE(findParserHazard("// linalg.transpose permutation = x\n"));
  EXPECT_FALSE(
      findParserHazard("x {note = \"linalg.transpose permutation = x\"}"));
  EXPECT_FALSE(findParserHazard(
      "linalg.transpose ins(%permutation : t) outs(@permutation) "
      "permutation = [0]"));
  EXPECT_FALSE(findParserHazard("#linalg.transpose permutation = x"));
  // No `=` after the keyword: the parser fails cleanly.
  EXPECT_FALSE(findParserHazard("linalg.transpose ins() permutation [1]"));
  // The keyword is looked for once per op: a later attribute dictionary's
  // `permutation = array<...>` belongs to another op.
  EXPECT_FALSE(findParserHazard(
      transpose("[1, 0]") + "%2 = \"x.y\"() {permutation = array<i64: 0>}"));
}

TEST(ParserHazardsTest, UnterminatedTextEnds) {
  EXPECT_FALSE(findParserHazard("\"linalg.transpose"));
  EXPECT_FALSE(findParserHazard("%"));
  EXPECT_TRUE(findParserHazard("linalg.transpose permutation ="));
  EXPECT_TRUE(findParserHazard("linalg.transpose permutation = [-"));
}

} // namespace
