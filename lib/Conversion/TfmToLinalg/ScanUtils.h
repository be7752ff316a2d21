//===- ScanUtils.h - helpers of the chunked scan lowerings -----*- C++ -*-===//
//
// What the chunked recurrences (Mamba2's SSD scan, the gated delta rule)
// share: views of one chunk along the sequence dimension, scalar arithmetic
// in the compute type, and contractions written as index-letter specs
// (Einsum.h), the large two-input ones as batched GEMMs.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_LIB_CONVERSION_TFMTOLINALG_SCANUTILS_H
#define TFM_LIB_CONVERSION_TFMTOLINALG_SCANUTILS_H

#include "Einsum.h"
#include "LoweringUtils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tfm::lowering {

Type elementType(Value v);

/// tensor.expand_shape of one static dimension `dim` into `parts`.
Value splitDim(OpBuilder &b, Location loc, Value x, int64_t dim,
               ArrayRef<int64_t> parts);
/// tensor.collapse_shape merging dimensions [dim, dim + count).
Value mergeDims(OpBuilder &b, Location loc, Value x, int64_t dim,
                int64_t count);
/// The slice of `x` at [start, start + len) along dimension 1.
Value sliceSeq(OpBuilder &b, Location loc, Value x, Value start, Value len);
/// `part` written into `into` at `start` along dimension 1.
Value insertSeq(OpBuilder &b, Location loc, Value part, Value into,
                Value start);
/// The entry `c` of dimension `dim` of `x`, without that dimension.
Value extractEntry(OpBuilder &b, Location loc, Value x, int64_t dim, Value c);
/// `part` written as entry `c` of dimension `dim` of `into`.
Value insertEntry(OpBuilder &b, Location loc, Value part, Value into,
                  int64_t dim, Value c);
/// The entry `c` of dimension 1 of `x` ([B, NC, ...]) without that dimension.
Value extractChunkState(OpBuilder &b, Location loc, Value x, Value c);
/// `state` ([B, ...]) written as entry `c` of dimension 1 of `into`.
Value insertChunkState(OpBuilder &b, Location loc, Value state, Value into,
                       Value c);

/// Scalar helpers in the compute type `st`.
struct Scalar {
  OpBuilder &b;
  Location loc;
  Type st;
  Value f(Value v) { return castFloat(b, loc, v, st); }
  Value c(double v) { return constFloat(b, loc, st, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value sigmoid(Value x) {
    Value e = exp(arith::NegFOp::create(b, loc, x));
    Value one = c(1.0);
    return arith::DivFOp::create(b, loc, one, add(one, e));
  }
  Value silu(Value x) { return mul(x, sigmoid(x)); }
  /// d silu / dx = s (1 + x (1 − s)).
  Value siluGrad(Value x) {
    Value s = sigmoid(x);
    Value one = c(1.0);
    Value xs = mul(x, sub(one, s));
    return mul(s, add(one, xs));
  }
  /// PyTorch's softplus (threshold 20: x itself above it) and its slope.
  Value aboveThreshold(Value x) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, c(20.0));
  }
  Value softplus(Value x) {
    Value above = aboveThreshold(x);
    Value below = math::Log1pOp::create(b, loc, exp(x));
    return arith::SelectOp::create(b, loc, above, x, below);
  }
  Value softplusGrad(Value x) {
    Value above = aboveThreshold(x);
    Value one = c(1.0);
    return arith::SelectOp::create(b, loc, above, one, sigmoid(x));
  }
  /// `x` rounded to `elem` and back (nothing for the compute type).
  Value round(Value x, Type elem) { return f(castFloat(b, loc, x, elem)); }
  /// `then` where `cond`, else 0.
  Value where(Value cond, Value then) {
    return arith::SelectOp::create(b, loc, cond, then, c(0.0));
  }
  Value le(Value i, Value j) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, i, j);
  }
  Value lt(Value i, Value j) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, j);
  }
  Value eq(Value i, Value j) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, j);
  }
  /// In an einsum body: whether letter `from`'s index is at most (`before`:
  /// below) letter `to`'s, the causal masks of the chunked scans. The two
  /// indices are created in that order.
  Value atOrBefore(LetterIndex ix, char from, char to) {
    Value i = ix(from);
    return le(i, ix(to));
  }
  Value before(LetterIndex ix, char from, char to) {
    Value i = ix(from);
    return lt(i, ix(to));
  }
};

inline Scalar scalar(OpBuilder &b, Location loc, Type st) {
  return {b, loc, st};
}

/// A product of the inputs of `spec` (widened), summed over its reduced
/// letters. Added to `init` when given (else to zeros for a reduction).
Value contract(OpBuilder &b, Location loc, StringRef spec, ValueRange inputs,
               Type st, Value init = Value());
/// `v` (indexed by `from`) as a tensor indexed by `to`, widened to `st`.
Value permuteTo(OpBuilder &b, Location loc, Value v, StringRef from,
                StringRef to, Type st);
/// The two-input contraction `spec` (plus `init`) as one batched GEMM in
/// f32 (an einsum in f64); see ScanUtils.cpp.
Value gemm(OpBuilder &b, Location loc, StringRef spec, Value lhs, Value rhs,
           Type st, Value init = Value());
/// Chunk `c` of a sequence of `seqLen` in chunks of `chunkSize`: its start
/// and length (the last chunk may be shorter).
std::pair<Value, Value> chunkBounds(OpBuilder &b, Location loc, Value c,
                                    Value chunkSize, Value seqLen);
/// The body of a chunk loop: gets the chunk index and the carried values,
/// returns the values to carry on.
using ChunkBody =
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)>;
/// An scf.for over the `numChunks` chunks carrying `inits`; with `reverse`
/// the body sees the chunks from the last to the first (the backward).
scf::ForOp forEachChunk(OpBuilder &b, Location loc, Value numChunks,
                        ValueRange inits, bool reverse, ChunkBody body);
/// The inclusive cumulative sum along a chunk of `x` [B, l, G, R]:
/// out[l] = Σ_{i<=l} x[i] (the log-decay of each position since the chunk
/// start).
Value chunkCumsum(OpBuilder &b, Location loc, Value x, Value len, Type st);
/// The gradient of the decays `x` whose cumulative sums `lam` (chunkCumsum)
/// and total (their sum) have gradients `dLam` [B, l, G, R] and `dTotal`
/// [B, G, R]: dx[i] = dTotal + Σ_{l>=i} dLam[l].
Value chunkCumsumGrad(OpBuilder &b, Location loc, Value dLam, Value dTotal,
                      Value len, Type st);
/// A gradient back to its operand's type, dimensions [dim, dim + count)
/// merged first (the group x head split undone).
Value gradientAs(OpBuilder &b, Location loc, Value g, Value like, int64_t dim,
                 int64_t count);
/// exp of `v` (a map).
Value expOf(OpBuilder &b, Location loc, StringRef spec, Value v, Type st);
/// exp(v) · mask, `v` indexed by `in`, `mask` by `maskSpec` (letters of
/// `in`), the result by `in`; exp(v) alone for a null mask.
Value maskedExpOf(OpBuilder &b, Location loc, StringRef in, StringRef maskSpec,
                  Value v, Value mask, Type st);

/// Packed documents in one chunk (the scans' doc_start operand): a
/// document start inside the chunk cuts every decay across it. `docs`
/// [B, l] is doc_start of the chunk's tokens (absolute positions), `start`
/// the chunk's first token; null `docs` when the scan has no documents.
struct ChunkDocuments {
  Value docs, start;

  explicit operator bool() const { return bool(docs); }
  /// The slice of doc_start (or null) for the chunk at `start`, `len` long.
  static ChunkDocuments of(OpBuilder &b, Location loc, Value docStart,
                           Value start, Value len);
  /// In an einsum body: whether the chunk's token at letter `from` lies in
  /// the document that starts at `startOfTo` (doc_start of another token,
  /// as read from `docs`).
  Value inDocument(OpBuilder &b, Location loc, LetterIndex ix, char from,
                   Value startOfTo) const;
  /// [B, l] in `st`: 1 where token l's document began before the chunk (the
  /// state carried in reaches it), else 0.
  Value carriedMask(OpBuilder &b, Location loc, Type st) const;
  /// [B] in `st`: 1 where no document starts in the chunk (the state
  /// carried in survives it), else 0.
  Value keptMask(OpBuilder &b, Location loc, Type st) const;
  /// [B, s] in `st`: 1 where token s lies in the chunk's last document
  /// (it reaches the state carried out), else 0.
  Value survivingMask(OpBuilder &b, Location loc, Type st, Value len) const;
};

} // namespace mlir::tfm::lowering

#endif // TFM_LIB_CONVERSION_TFMTOLINALG_SCANUTILS_H
