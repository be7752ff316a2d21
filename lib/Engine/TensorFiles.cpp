//===- TensorFiles.cpp - step inputs and outputs as safetensors -----------===//

#include "tfm/Engine/TensorFiles.h"
#include "tfm/Support/Error.h"

using namespace mlir;
using namespace mlir::tfm;

static TensorOut resultTensor(const std::string &name, const HostArray &a) {
  return {name, a.isF64() ? DType::F64 : DType::F32, a.shape, a.data()};
}

llvm::Error mlir::tfm::writeStepResult(llvm::StringRef path,
                                       const StepResult &result) {
  std::vector<TensorOut> outputs;
  if (!result.logits.shape.empty()) // absent in a loss-only step
    outputs.push_back(resultTensor("logits", result.logits));
  std::vector<int64_t> scalar;
  if (result.loss)
    outputs.push_back({"loss", DType::F32, scalar, &*result.loss});
  for (const NamedGradient &g : result.gradients)
    outputs.push_back({"grad/" + g.name, DType::F32, g.shape, g.data.data()});
  return writeSafetensors(path, outputs);
}

/// Whether a tensor of `dtype` can be passed as `elem`.
static bool matches(Type elem, DType dtype) {
  return (elem.isF32() && dtype == DType::F32) ||
         (elem.isF64() && dtype == DType::F64) ||
         (elem.isBF16() && dtype == DType::BF16) ||
         (elem.isInteger(64) && dtype == DType::I64) ||
         (elem.isInteger(32) && dtype == DType::I32);
}

llvm::Expected<std::vector<CompiledFunction::Arg>>
mlir::tfm::readArguments(llvm::StringRef path,
                         llvm::ArrayRef<RankedTensorType> types,
                         ArgumentStorage &storage) {
  auto file = SafetensorsFile::open(path);
  if (!file)
    return file.takeError();
  std::vector<CompiledFunction::Arg> args;
  for (unsigned i = 0; i < types.size(); ++i) {
    std::string name = "arg" + std::to_string(i);
    auto it = (*file)->tensors().find(name);
    if (it == (*file)->tensors().end())
      return makeError(path + ": no tensor '" + name + "'");
    const TensorView &view = it->second;
    if (!matches(types[i].getElementType(), view.dtype))
      return makeError(path + ": tensor '" + name + "' has dtype " +
                       dtypeName(view.dtype) + ", argument #" + llvm::Twine(i) +
                       " is not of that type");
    storage.emplace_back(view.data, view.data + view.numBytes);
    args.push_back({storage.back().data(), view.shape});
  }
  return args;
}

llvm::Error mlir::tfm::writeResults(llvm::StringRef path,
                                    llvm::ArrayRef<HostArray> results) {
  std::vector<TensorOut> outputs;
  for (size_t i = 0; i < results.size(); ++i)
    outputs.push_back(resultTensor("result" + std::to_string(i), results[i]));
  return writeSafetensors(path, outputs);
}
