//===- TrainerSharding.cpp - ZeRO-1: optimizer state in dim-0 shards ------===//
//
// The optimizer step is elementwise but for the global gradient norm, so a
// rank can update a shard of every trained tensor by itself: the step is
// compiled once for this rank's shard shapes (tfm-add-optimizer-step on
// @forward's arguments retyped to them), clipping is applied to the shards
// before it with the norm summed over the ranks, and the updated shards are
// all-gathered into every rank's whole parameters (the bf16 copies of a
// bf16 model, rounded by the step, gathered as they are).
//
// Without clipping a shard goes through the same elementwise arithmetic as
// the whole tensor, so the weights are the bits plain data parallelism
// gives. The norm is summed in f64 as tfm.global_grad_norm does, and the
// clipping coefficient formed in f32 as it does.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/Trainer.h"
#include "tfm/Support/Error.h"
#include "tfm/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

std::vector<int64_t> Trainer::shardShape(size_t i) const {
  std::vector<int64_t> shape = trainingStep.getArgumentShape(trained[i]).vec();
  if (isSharded())
    shape[0] = shards[i].rows;
  return shape;
}

llvm::ArrayRef<float> Trainer::shardOf(size_t i,
                                       llvm::ArrayRef<float> full) const {
  if (!isSharded())
    return full;
  const Shard &s = shards[i];
  return full.slice(size_t(s.firstRow * s.rowSize), size_t(s.rows * s.rowSize));
}

std::vector<size_t> Trainer::shardBytes(size_t i, size_t width) const {
  std::vector<size_t> bytes;
  for (size_t c : shards[i].counts)
    bytes.push_back(c * width);
  return bytes;
}

size_t Trainer::getOptimizerBytes() const {
  size_t bytes = 0;
  for (const DeviceTensor &t : stateValues)
    bytes += t.getNumBytes();
  for (size_t i = 0; i < masters.size(); ++i)
    if (!masterIsModelTensor(i))
      bytes += masters[i].getNumBytes();
  return bytes;
}

llvm::Expected<std::unique_ptr<CompiledFunction>>
Trainer::shardOptimizer(const OptimizerOptions &options,
                        OwningOpRef<ModuleOp> &module) {
  int ranks = comm.getSize(), rank = comm.getRank();
  for (unsigned a : trained) {
    llvm::ArrayRef<int64_t> shape = trainingStep.getArgumentShape(a);
    if (shape.empty())
      return makeError("--zero 1: parameter '" +
                       trainingStep.getParam(a).getName() +
                       "' is a scalar, with no dim 0 to shard");
    Shard s;
    s.rowSize =
        std::max<int64_t>(ShapedType::getNumElements(shape.drop_front()), 1);
    s.counts = shardCounts(shape[0], s.rowSize, ranks);
    for (int r = 0; r < rank; ++r)
      s.firstRow += int64_t(s.counts[r]) / s.rowSize;
    s.rows = int64_t(s.counts[rank]) / s.rowSize;
    shards.push_back(std::move(s));
  }

  // @forward with the trained arguments retyped to this rank's shards and
  // no body: all tfm-add-optimizer-step reads is the signature and the
  // #tfm.param attributes (weight decay by name). Clipping is applied
  // outside (scatterGradients).
  module = trainingStep.getModel().clone();
  auto forward = module->lookupSymbol<func::FuncOp>("forward");
  for (auto f : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (f != forward)
      f.erase();
  SmallVector<Type> types(forward.getArgumentTypes());
  for (auto [i, a] : llvm::enumerate(trained)) {
    auto type = cast<RankedTensorType>(types[a]);
    types[a] = RankedTensorType::get(shardShape(i), type.getElementType());
  }
  forward.eraseBody();
  forward.setType(FunctionType::get(module->getContext(), types, {}));
  Block *body = forward.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(body);
  func::ReturnOp::create(b, forward.getLoc());
  OptimizerOptions unclipped = options;
  unclipped.maxGradNorm = 0;
  if (auto e = addOptimizerStep(*module, unclipped))
    return std::move(e);
  forward.erase();
  return CompiledFunction::compile(*module, getOptimizerStepFuncName("forward"),
                                   trainingStep.getOptions().compile);
}

llvm::Expected<std::vector<DeviceTensor>>
Trainer::scatterGradients(std::vector<DeviceTensor> grads, double &loss,
                          float &norm) {
  std::vector<DeviceTensor> mine;
  // Squares summed in f64 per tensor, then over tensors and ranks.
  double squares = 0;
  Type f32 = Float32Type::get(trainingStep.getModel().getContext());
  for (size_t i = 0; i < grads.size(); ++i) {
    DeviceTensor shard =
        DeviceTensor::upload(nullptr, shardShape(i), f32, grads[i].onGpu());
    if (!shard)
      return makeError("out of memory for the gradient shards");
    if (auto e = comm.reduceScatterSum(static_cast<float *>(grads[i].data()),
                                       static_cast<float *>(shard.data()),
                                       shards[i].counts))
      return std::move(e);
    grads[i] = DeviceTensor(); // the whole sum is not needed any more
    const float *g = static_cast<const float *>(shard.data());
    double sum = 0;
    for (int64_t k = 0, e = shard.getNumElements(); k < e; ++k)
      sum += double(g[k]) * double(g[k]);
    squares += sum;
    mine.push_back(std::move(shard));
  }
  double sums[2] = {squares, loss};
  if (auto e = comm.allReduceSum(sums, 2))
    return std::move(e);
  loss = sums[1];
  norm = float(std::sqrt(sums[0]));
  if (optimizerOptions.maxGradNorm > 0) {
    // torch.nn.utils.clip_grad_norm_: max_norm / (norm + 1e-6), at most 1.
    float coef = std::min(
        float(optimizerOptions.maxGradNorm) / (norm + float(1e-6)), 1.0f);
    for (DeviceTensor &shard : mine) {
      float *g = static_cast<float *>(shard.data());
      for (int64_t k = 0, e = shard.getNumElements(); k < e; ++k)
        g[k] *= coef;
    }
  }
  return mine;
}

llvm::Error Trainer::gatherParameters(llvm::ArrayRef<DeviceTensor> copies) {
  size_t next = 0;
  for (size_t i = 0; i < trained.size(); ++i) {
    const DeviceTensor &whole = trainingStep.getResidentParameter(trained[i]);
    // A bf16 parameter gathers the step's rounded copy, an f32 one its
    // master, which is its own rows of `whole` (gathered in place).
    bool copy = next < modelCopies.size() && modelCopies[next] == i;
    const DeviceTensor &mine = copy ? copies[next++] : masters[i];
    size_t width = whole.getNumBytes() / size_t(whole.getNumElements());
    if (auto e =
            comm.allGather(mine.data(), whole.data(), shardBytes(i, width)))
      return e;
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<float>> Trainer::gatherWhole(size_t i,
                                                        const DeviceTensor &t) {
  bool root = comm.getRank() == 0;
  std::vector<float> whole(root
                               ? size_t(ShapedType::getNumElements(
                                     trainingStep.getArgumentShape(trained[i])))
                               : 0);
  if (auto e = comm.gather(t.toHost().f32.data(), whole.data(),
                           shardBytes(i, sizeof(float)), 0))
    return std::move(e);
  return whole;
}

llvm::Error Trainer::gatherShards() {
  if (!isSharded())
    return llvm::Error::success();
  size_t n = trained.size();
  bool root = comm.getRank() == 0;
  for (size_t i = 0; i < n; ++i) {
    unsigned a = trained[i];
    // An f32 parameter is whole and current on every rank already.
    if (masterIsModelTensor(i)) {
      if (root) // its host value, from the step's whole tensor
        setMaster(i, trainingStep.getResidentParameter(a).toHost().f32);
      continue;
    }
    auto whole = gatherWhole(i, masters[i]);
    if (!whole)
      return whole.takeError();
    if (root)
      trainingStep.setParameter(a, std::move(*whole));
  }
  gatheredState.clear();
  for (size_t s = 0; s < stateValues.size(); ++s) {
    auto whole = gatherWhole(s % n, stateValues[s]);
    if (!whole)
      return whole.takeError();
    if (root)
      gatheredState.push_back(stateTensor(s, std::move(*whole)));
  }
  return llvm::Error::success();
}
