// Input of op-creation-order.test: one call that creates ops in two of its
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
