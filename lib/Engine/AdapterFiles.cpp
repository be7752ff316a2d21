//===- AdapterFiles.cpp - LoRA adapters on disk, as PEFT keeps them -------===//

#include "tfm/Engine/AdapterFiles.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Engine/RunFolder.h"
#include "tfm/Runtime/WeightBinder.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::tfm;

static constexpr llvm::StringLiteral kAdapterWeights =
    "adapter_model.safetensors";
static constexpr llvm::StringLiteral kAdapterConfig = "adapter_config.json";

bool mlir::tfm::isLoraTensorName(llvm::StringRef name) {
  return name.ends_with(".lora_A.weight") || name.ends_with(".lora_B.weight");
}

namespace {

/// Whether `got` is the shape PEFT before 0.19.1 gave expert adapter `t`:
/// it read every stacked [E, d1, d2] weight as [E, in, out], so on the
/// [E, out, in] weights of transformers 5 its A was [E·r, out] and its B
/// [in, r·E], in and out swapped (`pair` is t's partner).
bool isPre0191ExpertLayout(const LoraTensor &t, const LoraTensor &pair,
                           llvm::ArrayRef<int64_t> got) {
  if (!t.experts || got.size() != 2)
    return false;
  // A [E·r, in] and B [out, r·E]: in is A's columns, out B's rows.
  int64_t in = t.isA ? t.shape[1] : pair.shape[1];
  int64_t out = t.isA ? pair.shape[0] : t.shape[0];
  if (in == out)
    return false;
  return t.isA ? got[0] == t.shape[0] && got[1] == out
               : got[0] == in && got[1] == t.shape[1];
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

} // namespace

llvm::Expected<Checkpoint> mlir::tfm::initLoraAdapter(const LoraSummary &lora,
                                                      uint64_t seed) {
  auto storage = std::make_shared<std::vector<std::vector<float>>>();
  const std::vector<LoraTensor> &expected = lora.tensors;
  storage->reserve(expected.size());
  std::vector<TensorView> views;
  for (const LoraTensor &t : expected) {
    int64_t n = 1;
    for (int64_t d : t.shape)
      n *= d;
    std::vector<float> &data = storage->emplace_back(n, 0.0f);
    if (t.isA) {
      // kaiming_uniform_(a=√5) on [r, in]: bound = gain·√(3/in) with gain
      // √(2/(1+5)), i.e. 1/√in. Each tensor draws from its own stream.
      double bound = 1.0 / std::sqrt(double(t.shape.back()));
      std::mt19937_64 rng(seed ^ llvm::xxh3_64bits(t.name));
      std::uniform_real_distribution<double> uniform(-bound, bound);
      for (float &x : data)
        x = float(uniform(rng));
    }
    TensorView v;
    v.name = t.name;
    v.dtype = DType::F32;
    v.shape = t.shape;
    v.data = reinterpret_cast<const char *>(data.data());
    v.numBytes = data.size() * sizeof(float);
    v.file = "<new LoRA adapter>";
    views.push_back(std::move(v));
  }
  return Checkpoint::fromTensors(std::move(views), storage);
}

llvm::Expected<Checkpoint> mlir::tfm::openLoraAdapter(llvm::StringRef dir,
                                                      const LoraSummary &lora) {
  std::string file = childPath(dir, kAdapterWeights);
  if (!llvm::sys::fs::exists(file))
    return makeError(file +
                     ": no such file (an adapter folder holds "
                     "adapter_config.json and " +
                     kAdapterWeights.str() + ")");
  llvm::Expected<Checkpoint> adapter = Checkpoint::openFile(file);
  if (!adapter)
    return adapter.takeError();
  const std::vector<LoraTensor> &expected = lora.tensors;
  std::map<std::string, const LoraTensor *> byName;
  for (const LoraTensor &t : expected)
    byName[t.name] = &t;
  for (const std::string &name : adapter->names()) {
    auto it = byName.find(name);
    if (it == byName.end())
      return makeError(file + ": tensor '" + name +
                       "' is not an adapter tensor of this model and "
                       "configuration" +
                       (isLoraTensorName(name)
                            ? " (its module is not targeted, or the "
                              "adapter was made for another model)"
                            : ""));
    const TensorView *view = adapter->find(name);
    const LoraTensor &t = *it->second;
    if (view->shape == t.shape)
      continue;
    std::string pairName = name;
    size_t pos = pairName.rfind(t.isA ? ".lora_A." : ".lora_B.");
    pairName.replace(pos, 8, t.isA ? ".lora_B." : ".lora_A.");
    auto pair = byName.find(pairName);
    if (pair != byName.end() &&
        isPre0191ExpertLayout(t, *pair->second, view->shape))
      return makeError(
          file + ": tensor '" + name + "' has shape " + shapeText(view->shape) +
          ", expected " + shapeText(t.shape) +
          ": it is the expert layout of PEFT before 0.19.1 (in and out "
          "swapped on [experts, out, in] weights), which tfm does not "
          "read; train the adapter again with PEFT 0.19.1 or later");
    return makeError(file + ": tensor '" + name + "' has shape " +
                     shapeText(view->shape) + ", expected " +
                     shapeText(t.shape) +
                     " (r and the module's sizes of adapter_config.json "
                     "and the base model)");
  }
  for (const LoraTensor &t : expected)
    if (!adapter->find(t.name))
      return makeError(file + ": tensor '" + t.name +
                       "' is missing (adapter_config.json targets its "
                       "module)");
  return adapter;
}

llvm::Error mlir::tfm::addLoraAdapter(Checkpoint &checkpoint,
                                      const LoraSummary &lora,
                                      llvm::StringRef dir, uint64_t seed) {
  llvm::Expected<Checkpoint> adapter =
      dir.empty() ? initLoraAdapter(lora, seed) : openLoraAdapter(dir, lora);
  if (!adapter)
    return adapter.takeError();
  return checkpoint.add(std::move(*adapter));
}

llvm::Error
mlir::tfm::saveLoraAdapter(llvm::StringRef dir, const LoraSummary &summary,
                           const std::vector<NamedGradient> &tensors) {
  std::vector<TensorOut> out;
  for (const NamedGradient &t : tensors)
    if (isLoraTensorName(t.name))
      out.push_back({t.name, DType::F32, t.shape, t.data.data()});
  if (out.empty())
    return makeError("no LoRA adapter tensors to save");
  // The modules as PEFT resolves them (all-linear becomes the leaf names
  // of what was adapted), so any PEFT version loads the same set.
  LoraConfig written = summary.config;
  if (written.allLinear) {
    written.allLinear = false;
    written.targetModules = summary.leafNames;
  }
  if (auto e = writeSafetensors(childPath(dir, kAdapterWeights), out,
                                {{"format", "pt"}}))
    return e;
  return writeFileAtomically(childPath(dir, kAdapterConfig),
                             writeLoraConfig(written));
}
