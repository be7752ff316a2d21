//===- DocumentOps.cpp - tfm.document_starts to loops ---------------------===//
//
// Where each token's document begins is a running value along the sequence
// (the last restart of the positions), so it is a loop over tokens, one per
// row: O(B * T) integer work, once per step, read by every layer's
// attention and scans.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

struct DocumentStartsLowering : OpRewritePattern<DocumentStartsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DocumentStartsOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value positions = op.getPositions();
    Type it = op.getType().getElementType();
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value rows = tensor::DimOp::create(rewriter, loc, positions, 0);
    Value tokens = tensor::DimOp::create(rewriter, loc, positions, 1);
    Value init =
        emptyTensor(rewriter, loc, sizesOf(rewriter, loc, positions), it);
    Value zero = arith::ConstantOp::create(rewriter, loc, it,
                                           rewriter.getIntegerAttr(it, 0));
    auto perRow = scf::ForOp::create(
        rewriter, loc, c0, rows, c1, ValueRange{init},
        [&](OpBuilder &b, Location l, Value row, ValueRange outer) {
          // start = t where positions[row, t] == 0, else the previous start.
          auto perToken = scf::ForOp::create(
              b, l, c0, tokens, c1, ValueRange{outer[0], zero},
              [&](OpBuilder &nb, Location nl, Value t, ValueRange st) {
                Value p = tensor::ExtractOp::create(nb, nl, positions,
                                                    ValueRange{row, t});
                Value restart = arith::CmpIOp::create(
                    nb, nl, arith::CmpIPredicate::eq, p, zero);
                Value here = arith::IndexCastOp::create(nb, nl, it, t);
                Value start =
                    arith::SelectOp::create(nb, nl, restart, here, st[1]);
                Value written = tensor::InsertOp::create(nb, nl, start, st[0],
                                                         ValueRange{row, t});
                scf::YieldOp::create(nb, nl, ValueRange{written, start});
              });
          scf::YieldOp::create(b, l, ValueRange{perToken.getResult(0)});
        });
    rewriter.replaceOp(op, perRow.getResult(0));
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmDocumentToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DocumentStartsLowering>(patterns.getContext());
}
