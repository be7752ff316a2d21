//===- ScanUtils.cpp - helpers of the chunked scan lowerings --------------===//

#include "ScanUtils.h"

using namespace mlir;

namespace mlir::tfm::lowering {

Type elementType(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// tensor.expand_shape of one static dimension `dim` into `parts`.
Value splitDim(OpBuilder &b, Location loc, Value x, int64_t dim,
               ArrayRef<int64_t> parts) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<ReassociationIndices> groups;
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  int64_t next = 0;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    ReassociationIndices g;
    if (i == dim) {
      for (int64_t p : parts) {
        g.push_back(next++);
        shape.push_back(p);
        sizes.push_back(b.getIndexAttr(p));
      }
    } else {
      g.push_back(next++);
      shape.push_back(t.getDimSize(i));
      sizes.push_back(tensor::getMixedSize(b, loc, x, i));
    }
    groups.push_back(g);
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), x, groups,
      sizes);
}

/// tensor.collapse_shape merging dimensions [dim, dim + count).
Value mergeDims(OpBuilder &b, Location loc, Value x, int64_t dim,
                int64_t count) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank;) {
    ReassociationIndices g;
    int64_t n = i == dim ? count : 1;
    for (int64_t j = 0; j < n; ++j)
      g.push_back(i++);
    groups.push_back(g);
  }
  return tensor::CollapseShapeOp::create(b, loc, x, groups);
}

/// The slice of `x` at [start, start + len) along dimension 1.
Value sliceSeq(OpBuilder &b, Location loc, Value x, Value start, Value len) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  SmallVector<OpFoldResult> off(rank, b.getIndexAttr(0)),
      sizes = sizesOf(b, loc, x);
  off[1] = start;
  sizes[1] = len;
  return tensor::ExtractSliceOp::create(
      b, loc, x, off, sizes,
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

/// `part` written into `into` at `start` along dimension 1.
Value insertSeq(OpBuilder &b, Location loc, Value part, Value into,
                Value start) {
  int64_t rank = cast<RankedTensorType>(part.getType()).getRank();
  SmallVector<OpFoldResult> off(rank, b.getIndexAttr(0));
  off[1] = start;
  return tensor::InsertSliceOp::create(
      b, loc, part, into, off, sizesOf(b, loc, part),
      SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
}

/// The entry `c` of dimension 1 of `x` ([B, NC, ...]) without that dimension.
Value extractEntry(OpBuilder &b, Location loc, Value x, int64_t dim, Value c) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> off(t.getRank(), b.getIndexAttr(0)),
      sizes = sizesOf(b, loc, x);
  off[dim] = c;
  sizes[dim] = b.getIndexAttr(1);
  SmallVector<int64_t> shape(t.getShape());
  shape.erase(shape.begin() + dim);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), x, off, sizes,
      SmallVector<OpFoldResult>(t.getRank(), b.getIndexAttr(1)));
}

Value insertEntry(OpBuilder &b, Location loc, Value part, Value into,
                  int64_t dim, Value c) {
  auto t = cast<RankedTensorType>(into.getType());
  SmallVector<OpFoldResult> off(t.getRank(), b.getIndexAttr(0)),
      sizes = sizesOf(b, loc, into);
  off[dim] = c;
  sizes[dim] = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(
      b, loc, part, into, off, sizes,
      SmallVector<OpFoldResult>(t.getRank(), b.getIndexAttr(1)));
}

Value extractChunkState(OpBuilder &b, Location loc, Value x, Value c) {
  return extractEntry(b, loc, x, 1, c);
}

Value insertChunkState(OpBuilder &b, Location loc, Value state, Value into,
                       Value c) {
  return insertEntry(b, loc, state, into, 1, c);
}

/// Whether `spec` sums over a letter (one not in its output).
bool reduces(StringRef spec) {
  StringRef lhs, out; // captured below: not a structured binding (C++17)
  std::tie(lhs, out) = spec.split("->");
  return llvm::any_of(
      lhs, [&](char c) { return c != ',' && out.find(c) == StringRef::npos; });
}

/// A product of the inputs of `spec` (widened), summed over its reduced
/// letters. Added to `init` when given (else to zeros for a reduction).
Value contract(OpBuilder &b, Location loc, StringRef spec, ValueRange inputs,
               Type st, Value init) {
  EinsumOptions opts;
  opts.initTensor = init;
  bool accumulate = init || reduces(spec);
  return einsum(
      b, loc, spec, inputs, st,
      [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex) {
        Scalar c = scalar(nb, l, st);
        Value prod = c.f(v[0]);
        for (Value x : v.drop_front().drop_back())
          prod = c.mul(prod, c.f(x));
        return accumulate ? c.add(v.back(), prod) : prod;
      },
      opts);
}

/// `v` (indexed by `from`) as a tensor indexed by `to`, widened to `st`:
/// a copy when the letters are reordered or the type changes.
Value permuteTo(OpBuilder &b, Location loc, Value v, StringRef from,
                StringRef to, Type st) {
  if (from == to && elementType(v) == st)
    return v;
  return einsum(b, loc, (from + "->" + to).str(), ValueRange{v}, st,
                [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                  return scalar(nb, l, st).f(a[0]);
                });
}

/// The two-input contraction `spec` (plus `init`, when given) as one
/// linalg.batch_matmul over its batch letters in f32, which the CPU
/// pipeline hands to BLAS and the GPU one to cuBLASLt; an einsum otherwise
/// (f64). Letters in both inputs and the output are the batch, in the
/// first input and the output the rows, in the second and the output the
/// columns, in both inputs only the contracted ones. The operands are
/// copied into [batch, rows, k] / [batch, k, columns] order first: O(size)
/// work next to the product's O(size · k).
Value gemm(OpBuilder &b, Location loc, StringRef spec, Value lhs, Value rhs,
           Type st, Value init) {
  if (!st.isF32())
    return contract(b, loc, spec, ValueRange{lhs, rhs}, st, init);
  auto [ins, out] = spec.split("->");
  auto [as, bs] = ins.split(',');
  std::string batch, rows, cols, inner;
  for (char c : out) {
    bool inA = as.contains(c), inB = bs.contains(c);
    (inA && inB ? batch : inA ? rows : cols).push_back(c);
  }
  for (char c : as)
    if (bs.contains(c) && !out.contains(c))
      inner.push_back(c);
  assert(batch.size() + rows.size() + cols.size() == out.size() &&
         !rows.empty() && !cols.empty() && !inner.empty() && !batch.empty() &&
         "a batched matrix product");
  auto groups = [](ArrayRef<size_t> sizes) {
    SmallVector<ReassociationIndices> g;
    int64_t next = 0;
    for (size_t n : sizes) {
      ReassociationIndices r;
      for (size_t i = 0; i < n; ++i)
        r.push_back(next++);
      g.push_back(r);
    }
    return g;
  };
  auto to3 = [&](Value v, StringRef from, const std::string &x,
                 const std::string &y) {
    Value c = permuteTo(b, loc, v, from, batch + x + y, st);
    return tensor::CollapseShapeOp::create(
        b, loc, c, groups({batch.size(), x.size(), y.size()}));
  };
  Value a3 = to3(lhs, as, rows, inner), b3 = to3(rhs, bs, inner, cols);
  std::string canonical = batch + rows + cols;
  Value c3;
  if (init) {
    c3 = to3(init, out, rows, cols);
  } else {
    SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, a3, 0),
                                       tensor::getMixedSize(b, loc, a3, 1),
                                       tensor::getMixedSize(b, loc, b3, 2)};
    c3 = filledTensor(b, loc, sizes, st, 0.0);
  }
  Value prod = linalg::BatchMatmulOp::create(b, loc, TypeRange{c3.getType()},
                                             ValueRange{a3, b3}, ValueRange{c3})
                   .getResult(0);
  // Back to one dimension per letter, sized from the operands.
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  for (char c : canonical) {
    bool fromA = as.contains(c);
    Value src = fromA ? lhs : rhs;
    size_t pos = (fromA ? as : bs).find(c);
    shape.push_back(cast<RankedTensorType>(src.getType()).getDimSize(pos));
    sizes.push_back(tensor::getMixedSize(b, loc, src, pos));
  }
  Value full = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, st), prod,
      groups({batch.size(), rows.size(), cols.size()}), sizes);
  return permuteTo(b, loc, full, canonical, out, st);
}

/// exp of `v` (a map).
Value expOf(OpBuilder &b, Location loc, StringRef spec, Value v, Type st) {
  return einsum(b, loc, spec, ValueRange{v}, st,
                [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                  return scalar(nb, l, st).exp(a[0]);
                });
}

Value maskedExpOf(OpBuilder &b, Location loc, StringRef in, StringRef maskSpec,
                  Value v, Value mask, Type st) {
  if (!mask)
    return expOf(b, loc, (in + "->" + in).str(), v, st);
  return einsum(b, loc, (in + "," + maskSpec + "->" + in).str(),
                ValueRange{v, mask}, st,
                [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                  Scalar c = scalar(nb, l, st);
                  return c.mul(c.exp(a[0]), a[1]);
                });
}

std::pair<Value, Value> chunkBounds(OpBuilder &b, Location loc, Value c,
                                    Value chunkSize, Value seqLen) {
  Value start = arith::MulIOp::create(b, loc, c, chunkSize);
  Value len = arith::MinUIOp::create(
      b, loc, chunkSize, arith::SubIOp::create(b, loc, seqLen, start));
  return {start, len};
}

scf::ForOp forEachChunk(OpBuilder &b, Location loc, Value numChunks,
                        ValueRange inits, bool reverse, ChunkBody body) {
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value last = reverse ? arith::SubIOp::create(b, loc, numChunks, c1) : Value();
  return scf::ForOp::create(
      b, loc, c0, numChunks, c1, inits,
      [&](OpBuilder &nb, Location l, Value iv, ValueRange acc) {
        Value c = reverse ? Value(arith::SubIOp::create(nb, l, last, iv)) : iv;
        scf::YieldOp::create(nb, l, body(nb, l, c, acc));
      });
}

Value chunkCumsum(OpBuilder &b, Location loc, Value x, Value len, Type st) {
  EinsumOptions lenOfL;
  std::pair<char, OpFoldResult> lSize{'l', len};
  lenOfL.sizes = lSize;
  return einsum(
      b, loc, "bigr->blgr", ValueRange{x}, st,
      [&](OpBuilder &nb, Location l, ValueRange v, LetterIndex idx) {
        Scalar c = scalar(nb, l, st);
        Value upTo = c.where(c.atOrBefore(idx, 'i', 'l'), v[0]);
        return c.add(v[1], upTo);
      },
      lenOfL);
}

Value chunkCumsumGrad(OpBuilder &b, Location loc, Value dLam, Value dTotal,
                      Value len, Type st) {
  EinsumOptions lenOfI;
  std::pair<char, OpFoldResult> iSize{'i', len};
  lenOfI.sizes = iSize;
  Value dTotalAt = einsum(
      b, loc, "bgr->bigr", ValueRange{dTotal}, st,
      [&](OpBuilder &, Location, ValueRange a, LetterIndex) { return a[0]; },
      lenOfI);
  EinsumOptions intoTotal;
  intoTotal.initTensor = dTotalAt;
  return einsum(
      b, loc, "blgr->bigr", ValueRange{dLam}, st,
      [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex ix) {
        Scalar c = scalar(nb, l, st);
        Value upTo = c.where(c.atOrBefore(ix, 'i', 'l'), a[0]);
        return c.add(a[1], upTo);
      },
      intoTotal);
}

Value gradientAs(OpBuilder &b, Location loc, Value g, Value like, int64_t dim,
                 int64_t count) {
  Value merged = count > 1 ? mergeDims(b, loc, g, dim, count) : g;
  return roundTensor(b, loc, merged, elementType(like));
}

ChunkDocuments ChunkDocuments::of(OpBuilder &b, Location loc, Value docStart,
                                  Value start, Value len) {
  if (!docStart)
    return {};
  return {sliceSeq(b, loc, docStart, start, len), start};
}

Value ChunkDocuments::inDocument(OpBuilder &b, Location loc, LetterIndex ix,
                                 char from, Value startOfTo) const {
  Value token = arith::AddIOp::create(b, loc, start, ix(from));
  Value pos = arith::IndexCastOp::create(b, loc, startOfTo.getType(), token);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pos,
                               startOfTo);
}

/// [docStart < chunk start] for one token's doc_start.
static Value beforeChunk(OpBuilder &b, Location loc, Value docStart,
                         Value start) {
  Value s = arith::IndexCastOp::create(b, loc, docStart.getType(), start);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, docStart, s);
}

Value ChunkDocuments::carriedMask(OpBuilder &b, Location loc, Type st) const {
  return einsum(b, loc, "bl->bl", ValueRange{docs}, st,
                [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
                  Scalar c = scalar(nb, l, st);
                  Value before = beforeChunk(nb, l, a[0], start);
                  return c.where(before, c.c(1.0));
                });
}

Value ChunkDocuments::keptMask(OpBuilder &b, Location loc, Type st) const {
  EinsumOptions ones;
  ones.init = 1.0;
  return einsum(
      b, loc, "bl->b", ValueRange{docs}, st,
      [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex) {
        return scalar(nb, l, st).where(beforeChunk(nb, l, a[0], start), a[1]);
      },
      ones);
}

Value ChunkDocuments::survivingMask(OpBuilder &b, Location loc, Type st,
                                    Value len) const {
  // Token s is in the last document when it is at or after every token's
  // document start (they do not decrease along the chunk).
  EinsumOptions ones;
  ones.init = 1.0;
  std::pair<char, OpFoldResult> size{'s', len};
  ones.sizes = size;
  return einsum(
      b, loc, "bl->bs", ValueRange{docs}, st,
      [&](OpBuilder &nb, Location l, ValueRange a, LetterIndex ix) {
        return scalar(nb, l, st).where(inDocument(nb, l, ix, 's', a[0]), a[1]);
      },
      ones);
}

} // namespace mlir::tfm::lowering
