//===- GpuKernelUtils.cpp - pieces shared by the kernel-forming passes ---===//

#include "tfm/GPU/GpuKernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

SmallVector<Value> mlir::tfm::gpukernel::delinearize(OpBuilder &b, Location loc,
                                                     Value index,
                                                     ArrayRef<Value> sizes) {
  SmallVector<Value> digits(sizes.size());
  Value rest = index;
  for (int d = int(sizes.size()) - 1; d >= 0; --d) {
    digits[d] =
        d == 0 ? rest
               : arith::RemSIOp::create(b, loc, rest, sizes[d]).getResult();
    if (d > 0)
      rest = arith::DivSIOp::create(b, loc, rest, sizes[d]);
  }
  return digits;
}

void mlir::tfm::gpukernel::launchRows(
    OpBuilder &b, Location loc, Value rows, int64_t lanes, int64_t rowsPerBlock,
    function_ref<void(const RowThread &)> body) {
  auto c = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = c(0), one = c(1), perBlock = c(rowsPerBlock),
        laneCount = c(lanes);
  Value grid = arith::CeilDivSIOp::create(b, loc, rows, perBlock);
  Value nonEmpty =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, rows, zero);
  auto guard = scf::IfOp::create(b, loc, nonEmpty, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one,
                                      c(lanes * rowsPerBlock), one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  Value lane = arith::RemUIOp::create(b, loc, tid, laneCount);
  Value blockFirst =
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, perBlock);
  Value row = arith::AddIOp::create(
      b, loc, blockFirst, arith::DivUIOp::create(b, loc, tid, laneCount));
  Value active =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, rows);
  Value clamped = arith::SelectOp::create(b, loc, active, row, zero);
  body(RowThread{clamped, lane, laneCount, active});
  gpu::TerminatorOp::create(b, loc);
}
