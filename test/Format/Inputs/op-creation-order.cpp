// Input of op-creation-order.test: calls that create ops in two of their
// arguments (found), and the same operands created in order (not found).
Value unordered(OpBuilder &b, Location l, Value x, Value y) {
  return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, x),
                               arith::MulFOp::create(b, l, y, y));
}

Value ordered(OpBuilder &b, Location l, Value x, Value y) {
  Value xx = arith::MulFOp::create(b, l, x, x);
  Value yy = arith::MulFOp::create(b, l, y, y);
  return arith::AddFOp::create(b, l, xx, yy);
}

Value braced(OpBuilder &b, Location l, Value x, Value y) {
  // A braced list is evaluated in order.
  return yieldValues(b, l,
                     ValueRange{arith::MulFOp::create(b, l, x, x),
                                arith::MulFOp::create(b, l, y, y)});
}

// A helper whose methods create ops, reached through a method that calls
// another (found by name, to a fixed point).
struct Helper {
  OpBuilder &b;
  Location l;
  Value one() { return constFloat(b, l, 1.0); }
  Value plusOne(Value x) { return arith::AddFOp::create(b, l, x, one()); }
  Value describe(Value x) { return x; }
};

Value throughHelper(Helper &h, Value x, Value y) {
  return combine(h.plusOne(x), h.plusOne(y));
}

Value throughLambda(OpBuilder &b, Location l, Value x, Value y) {
  auto square = [&](Value v) { return arith::MulFOp::create(b, l, v, v); };
  return combine(square(x), square(y));
}

// Not found: a helper that creates nothing, a lambda passed (not run).
Value harmless(Helper &h, OpBuilder &b, Location l, Value x, Value y) {
  Value sum = combine(h.describe(x), h.describe(y));
  return apply(
      b, [&](Value v) { return h.plusOne(v); }, h.plusOne(sum));
}

// A callback returning a Value (an einsum body's letter index) creates it.
using LetterIndex = function_ref<Value(char)>;
Value throughCallback(Scalar &c, LetterIndex ix) {
  return c.le(ix('i'), ix('l'));
}
