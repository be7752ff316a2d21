//===- ShapeOps.cpp - embedding, reshape, split, concat to tensor ---------===//

#include "LoweringUtils.h"
#include "tfm/Conversion/TfmToLinalg/TfmToLinalg.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::lowering;

namespace {

struct EmbeddingLowering : OpRewritePattern<EmbeddingOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value ids = op.getIds(), table = op.getTable();
    unsigned rank = op.getType().getRank();
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, ids);
    sizes.push_back(rewriter.getIndexAttr(op.getType().getShape().back()));
    Value r = buildMap(
        rewriter, loc, sizes, op.getType().getElementType(), ValueRange{ids},
        {dropLastDimMap(ctx, rank)},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
          Value col = linalg::IndexOp::create(b, l, rank - 1);
          return tensor::ExtractOp::create(b, l, table, ValueRange{row, col});
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

int64_t leadingDynamic(ArrayRef<int64_t> shape) {
  int64_t n = 0;
  while (n < int64_t(shape.size()) && ShapedType::isDynamic(shape[n]))
    ++n;
  return n;
}

/// Regroups the static trailing dimensions: collapse them into one, then
/// expand into the result's.
struct ReshapeLowering : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getX();
    auto in = cast<RankedTensorType>(x.getType());
    RankedTensorType out = op.getType();
    int64_t lead = leadingDynamic(in.getShape());
    auto groups = [&](int64_t rank) {
      SmallVector<ReassociationIndices> g;
      for (int64_t i = 0; i < lead; ++i)
        g.push_back({i});
      ReassociationIndices tail;
      for (int64_t i = lead; i < rank; ++i)
        tail.push_back(i);
      if (!tail.empty())
        g.push_back(tail);
      return g;
    };
    if (in.getRank() - lead > 1)
      x = tensor::CollapseShapeOp::create(rewriter, loc, x,
                                          groups(in.getRank()));
    if (out.getRank() - lead > 1) {
      SmallVector<OpFoldResult> shape;
      for (int64_t i = 0; i < lead; ++i)
        shape.push_back(tensor::getMixedSize(rewriter, loc, x, i));
      for (int64_t i = lead; i < out.getRank(); ++i)
        shape.push_back(rewriter.getIndexAttr(out.getDimSize(i)));
      x = tensor::ExpandShapeOp::create(rewriter, loc, out, x,
                                        groups(out.getRank()), shape);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

struct SplitLowering : OpRewritePattern<SplitOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> parts;
    int64_t offset = 0, dim = op.getDim();
    for (Type t : op.getResultTypes()) {
      int64_t n = cast<RankedTensorType>(t).getDimSize(dim);
      parts.push_back(
          sliceAlong(rewriter, op.getLoc(), op.getX(), dim, offset, n));
      offset += n;
    }
    rewriter.replaceOp(op, parts);
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t dim = op.getDim();
    SmallVector<OpFoldResult> sizes =
        sizesOf(rewriter, loc, op.getInputs().front());
    sizes[dim] = rewriter.getIndexAttr(op.getType().getDimSize(dim));
    Value out =
        emptyTensor(rewriter, loc, sizes, op.getType().getElementType());
    int64_t offset = 0;
    for (Value in : op.getInputs()) {
      out = insertAlong(rewriter, loc, in, out, dim, offset);
      offset += cast<RankedTensorType>(in.getType()).getDimSize(dim);
    }
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// The reassociation merging unit dimension `dim` of a rank-`rank` tensor
/// into a neighbour (the next one, or the previous for the last).
SmallVector<ReassociationIndices> dropUnitDim(int64_t rank, int64_t dim) {
  SmallVector<ReassociationIndices> groups;
  int64_t partner = dim + 1 < rank ? dim + 1 : dim - 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dim)
      continue;
    if (d == partner)
      groups.push_back(d < dim ? ReassociationIndices{d, dim}
                               : ReassociationIndices{dim, d});
    else
      groups.push_back({d});
  }
  return groups;
}

/// The map of a rank-`rank` iteration space onto its dimensions but `dim`.
AffineMap dropDimMap(MLIRContext *ctx, unsigned rank, unsigned dim) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < rank; ++d)
    if (d != dim)
      exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Collapses the unit dimension away, then broadcasts along it.
struct ExpandLowering : OpRewritePattern<ExpandOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getType();
    int64_t rank = type.getRank(), dim = op.getDim();
    Value narrow = tensor::CollapseShapeOp::create(rewriter, loc, op.getX(),
                                                   dropUnitDim(rank, dim));
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, op.getX());
    sizes[dim] = rewriter.getIndexAttr(type.getDimSize(dim));
    rewriter.replaceOp(
        op, buildMap(rewriter, loc, sizes, type.getElementType(),
                     ValueRange{narrow},
                     {dropDimMap(rewriter.getContext(), rank, dim)},
                     [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

/// Sums over the dimension (in the compute type), then restores it as 1.
struct ExpandBackwardLowering : OpRewritePattern<ExpandBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpandBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = op.getType();
    Type elem = type.getElementType(), acc = computeType(elem);
    int64_t rank = type.getRank(), dim = op.getDim();
    SmallVector<OpFoldResult> sizes = sizesOf(rewriter, loc, op.getDy());
    sizes.erase(sizes.begin() + dim);
    SmallVector<bool> reduced(rank, false);
    reduced[dim] = true;
    Value sum = buildReduction(
        rewriter, loc, sizes, acc, 0.0, ValueRange{op.getDy()},
        {identityMap(ctx, rank)}, dropDimMap(ctx, rank, dim), reduced,
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(b, l, castFloat(b, l, a[0], acc), a[1]);
        });
    sum = roundTensor(rewriter, loc, sum, elem);
    SmallVector<OpFoldResult> outSizes = sizesOf(rewriter, loc, op.getDy());
    outSizes[dim] = rewriter.getIndexAttr(1);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, type, sum, dropUnitDim(rank, dim), outSizes);
    return success();
  }
};

struct ZerosLikeLowering : OpRewritePattern<ZerosLikeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ZerosLikeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       filledTensor(rewriter, op.getLoc(),
                                    sizesOf(rewriter, op.getLoc(), op.getX()),
                                    op.getType().getElementType(), 0.0));
    return success();
  }
};

/// Scatter-add: for each token, table[ids[b, t]] += dy[b, t]. Rows are
/// updated one token at a time (tokens may repeat an id), as a loop nest
/// carrying the table.
struct EmbeddingBackwardLowering : OpRewritePattern<EmbeddingBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value dy = op.getDy(), ids = op.getIds();
    RankedTensorType tableType = op.getType();
    Type elem = tableType.getElementType(), acc = computeType(elem);
    int64_t hidden = tableType.getDimSize(1);
    // Accumulate in the compute type, round once.
    Value table = filledTensor(rewriter, loc,
                               {rewriter.getIndexAttr(tableType.getDimSize(0)),
                                rewriter.getIndexAttr(hidden)},
                               acc, 0.0);
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value nb = tensor::DimOp::create(rewriter, loc, ids, 0);
    Value nt = tensor::DimOp::create(rewriter, loc, ids, 1);
    auto outer = scf::ForOp::create(
        rewriter, loc, c0, nb, c1, ValueRange{table},
        [&](OpBuilder &b, Location l, Value bi, ValueRange outerArgs) {
          auto inner = scf::ForOp::create(
              b, l, c0, nt, c1, outerArgs,
              [&](OpBuilder &ib, Location il, Value ti, ValueRange innerArgs) {
                Value t = innerArgs[0];
                Value id =
                    tensor::ExtractOp::create(ib, il, ids, ValueRange{bi, ti});
                Value row =
                    arith::IndexCastOp::create(ib, il, ib.getIndexType(), id);
                auto rowType = RankedTensorType::get({hidden}, acc);
                auto dyRowType = RankedTensorType::get({hidden}, elem);
                SmallVector<OpFoldResult> one = {ib.getIndexAttr(1),
                                                 ib.getIndexAttr(1)};
                Value cur = tensor::ExtractSliceOp::create(
                    ib, il, rowType, t,
                    SmallVector<OpFoldResult>{row, ib.getIndexAttr(0)},
                    SmallVector<OpFoldResult>{ib.getIndexAttr(1),
                                              ib.getIndexAttr(hidden)},
                    one);
                Value g = tensor::ExtractSliceOp::create(
                    ib, il, dyRowType, dy,
                    SmallVector<OpFoldResult>{bi, ti, ib.getIndexAttr(0)},
                    SmallVector<OpFoldResult>{ib.getIndexAttr(1),
                                              ib.getIndexAttr(1),
                                              ib.getIndexAttr(hidden)},
                    SmallVector<OpFoldResult>(3, ib.getIndexAttr(1)));
                Value sum = buildMap(
                    ib, il, {ib.getIndexAttr(hidden)}, acc, ValueRange{cur, g},
                    {}, [&](OpBuilder &eb, Location el, ValueRange a) -> Value {
                      return arith::AddFOp::create(
                          eb, el, a[0], castFloat(eb, el, a[1], acc));
                    });
                Value updated = tensor::InsertSliceOp::create(
                    ib, il, sum, t,
                    SmallVector<OpFoldResult>{row, ib.getIndexAttr(0)},
                    SmallVector<OpFoldResult>{ib.getIndexAttr(1),
                                              ib.getIndexAttr(hidden)},
                    one);
                scf::YieldOp::create(ib, il, updated);
              });
          scf::YieldOp::create(b, l, inner.getResults());
        });
    Value result = outer.getResult(0);
    if (acc != elem)
      result = roundTensor(rewriter, loc, result, elem);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::tfm::populateTfmShapeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<EmbeddingLowering, ReshapeLowering, SplitLowering,
               ConcatLowering, ExpandLowering, ExpandBackwardLowering,
               ZerosLikeLowering, EmbeddingBackwardLowering>(
      patterns.getContext());
}
