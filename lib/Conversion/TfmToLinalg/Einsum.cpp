//===- Einsum.cpp - linalg.generic written as an index-letter spec --------===//

#include "Einsum.h"
#include "LoweringUtils.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tfm::lowering;

Value mlir::tfm::lowering::einsum(OpBuilder &b, Location loc, StringRef spec,
                                  ValueRange inputs, Type elem, EinsumBody body,
                                  const EinsumOptions &options) {
  // Not a structured binding: lambdas below capture both (C++17).
  StringRef lhs, out;
  std::tie(lhs, out) = spec.split("->");
  SmallVector<StringRef> operandSpecs;
  lhs.split(operandSpecs, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  assert(operandSpecs.size() == inputs.size() && "one spec per input");

  // Loops: the output letters in order, the reduced ones as they come
  // after them; but when the output's last letter is also an input's last
  // (contiguous) one, it stays innermost, under the reductions, so the
  // inner loop streams rows (an outer-product accumulation, not a strided
  // dot product).
  std::string reduced;
  for (StringRef s : operandSpecs)
    for (char c : s)
      if (out.find(c) == StringRef::npos &&
          reduced.find(c) == std::string::npos)
        reduced.push_back(c);
  bool lastInner = !out.empty() && !reduced.empty() &&
                   llvm::any_of(operandSpecs, [&](StringRef s) {
                     return s.ends_with(out.take_back());
                   });
  std::string loops = lastInner
                          ? (out.drop_back() + reduced + out.take_back()).str()
                          : (out + reduced).str();
  auto loopOf = [&](char c) { return unsigned(loops.find(c)); };

  MLIRContext *ctx = b.getContext();
  auto mapOf = [&](StringRef letters) {
    SmallVector<AffineExpr> exprs;
    for (char c : letters)
      exprs.push_back(getAffineDimExpr(loopOf(c), ctx));
    return AffineMap::get(loops.size(), 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps;
  for (StringRef s : operandSpecs)
    maps.push_back(mapOf(s));
  maps.push_back(mapOf(out));

  SmallVector<utils::IteratorType> iters;
  for (char c : loops)
    iters.push_back(out.contains(c) ? utils::IteratorType::parallel
                                    : utils::IteratorType::reduction);

  Value init = options.initTensor;
  if (!init) {
    SmallVector<OpFoldResult> sizes;
    for (char c : out) {
      OpFoldResult size;
      for (auto [s, input] : llvm::zip(operandSpecs, inputs)) {
        size_t pos = s.find(c);
        if (pos != StringRef::npos) {
          size = tensor::getMixedSize(b, loc, input, pos);
          break;
        }
      }
      for (auto [letter, given] : options.sizes)
        if (!size && letter == c)
          size = given;
      assert(size && "every output letter needs a size");
      sizes.push_back(size);
    }
    init = reduced.empty() ? emptyTensor(b, loc, sizes, elem)
                           : filledTensor(b, loc, sizes, elem, options.init);
  }
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               auto index = [&](char c) -> Value {
                 return linalg::IndexOp::create(nb, nloc, loopOf(c));
               };
               yieldValue(nb, nloc, body(nb, nloc, args, index));
             })
      .getResult(0);
}
