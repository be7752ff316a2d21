//===- CheckpointFuzzer.cpp - libFuzzer target: safetensors and indexes ---===//
//
// A checkpoint folder from an untrusted download. The input is either one
// model.safetensors (first byte even) or a sharded checkpoint (first byte
// odd): the text up to the first 0xFF byte is model.safetensors.index.json
// and the rest is the shard model-00001-of-00001.safetensors, the name
// the seed indexes use. Every tensor of an accepted checkpoint is read back
// as f32, so that a header lying about where its bytes are is caught by the
// sanitizers here rather than in a user's run.
//
//===----------------------------------------------------------------------===//

#include "FuzzerUtils.h"

#include "tfm/Runtime/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <vector>

using namespace mlir;
using namespace mlir::tfm;

static constexpr llvm::StringLiteral kShard =
    "model-00001-of-00001.safetensors";

/// Reads every tensor the way WeightBinder does (bounded: a fuzz input's
/// tensors are small, but a shape may claim otherwise only if the bytes are
/// there, which the reader checked).
static void readAll(const TensorView &view) {
  std::vector<float> out(size_t(view.numElements()));
  if (llvm::Error e = view.readAsF32(out.data()))
    fuzz::expectMessage(std::move(e), view.file);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto file = SafetensorsFile::fromBuffer(
        llvm::MemoryBuffer::getMemBuffer(bytes, "model.safetensors",
                                         /*RequiresNullTerminator=*/false));
    if (!file) {
      fuzz::expectMessage(file.takeError(), "model.safetensors");
      return 0;
    }
    for (const auto &[name, view] : (*file)->tensors())
      readAll(view);
    return 0;
  }
  // A fresh folder per input: the index and its shard.
  llvm::SmallString<128> dir(fuzz::scratchDir());
  llvm::sys::path::append(dir, "checkpoint");
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  auto [index, shard] = bytes.split('\xff');
  llvm::SmallString<128> indexPath(dir), shardPath(dir);
  llvm::sys::path::append(indexPath, "model.safetensors.index.json");
  llvm::sys::path::append(shardPath, kShard);
  fuzz::writeFile(indexPath, index);
  fuzz::writeFile(shardPath, shard);
  llvm::Expected<Checkpoint> ckpt = Checkpoint::open(dir);
  if (!ckpt) {
    // Index problems name the index, shard problems the shard; both are in
    // the folder.
    fuzz::expectMessage(ckpt.takeError(), dir);
    return 0;
  }
  for (const std::string &name : ckpt->names())
    readAll(*ckpt->find(name));
  return 0;
}
