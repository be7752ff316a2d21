//===- Safetensors.h - checked safetensors reading and writing --*- C++ -*-===//
//
// The header is untrusted input: its size is bounded, every dtype known,
// every shape consistent with its byte range, and every range inside the
// file and disjoint from the others, before any tensor is read. Data is
// memory-mapped, not copied.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_RUNTIME_SAFETENSORS_H
#define TFM_RUNTIME_SAFETENSORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

/// Bytes per element; the name as safetensors writes it.
size_t dtypeSize(DType t);
llvm::StringRef dtypeName(DType t);

struct TensorView {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const char *data = nullptr; // into the mapped file
  size_t numBytes = 0;
  std::string file; // for messages

  int64_t numElements() const;
  /// The elements converted to f32 (F32, F16, BF16, F64 sources).
  llvm::Error readAsF32(float *out) const;
};

/// One mapped .safetensors file.
class SafetensorsFile {
public:
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  open(llvm::StringRef path);
  /// The file's bytes already in memory; the buffer's identifier names it
  /// in errors.
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer);
  const std::map<std::string, TensorView> &tensors() const { return views; }

private:
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::map<std::string, TensorView> views;
};

/// A checkpoint folder: model.safetensors, or the shards listed by
/// model.safetensors.index.json.
class Checkpoint {
public:
  static llvm::Expected<Checkpoint> open(llvm::StringRef dir);
  /// A checkpoint over tensors already in memory (the Python package's
  /// torch parameters): each view's data stays owned by `owner`, which the
  /// checkpoint keeps alive. Errors name a repeated name or a view whose
  /// byte count does not match its dtype and shape.
  static llvm::Expected<Checkpoint>
  fromTensors(std::vector<TensorView> views, std::shared_ptr<const void> owner);
  /// One .safetensors file (an adapter_model.safetensors).
  static llvm::Expected<Checkpoint> openFile(llvm::StringRef path);
  /// Adds `other`'s tensors (an adapter's beside its base model's); a name
  /// both hold is an error naming it and both files.
  llvm::Error add(Checkpoint other);
  /// Null if absent.
  const TensorView *find(llvm::StringRef name) const;
  std::vector<std::string> names() const;

private:
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  /// fromTensors' views (heap-allocated, so `index` survives moves) and
  /// what owns their data.
  std::vector<std::unique_ptr<TensorView>> memoryViews;
  std::vector<std::shared_ptr<const void>> memoryOwners;
  std::map<std::string, const TensorView *> index;
};

/// A tensor to write (data of `dtype`, owned elsewhere).
struct TensorOut {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  const void *data;
};

/// Writes a .safetensors file atomically (temporary file, then rename), so a
/// failure leaves no partial output. `metadata` goes to `__metadata__`
/// (transformers checks `{"format": "pt"}` in model files).
llvm::Error
writeSafetensors(llvm::StringRef path, const std::vector<TensorOut> &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace mlir::tfm

#endif // TFM_RUNTIME_SAFETENSORS_H
