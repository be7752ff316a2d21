//===- Safetensors.cpp - checked safetensors reading and writing ----------===//

#include "tfm/Runtime/Safetensors.h"
#include "tfm/Support/BFloat16.h"
#include "tfm/Support/Error.h"
#include "tfm/Support/JsonText.h"
#include "tfm/Support/OutputPath.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_set>

using namespace mlir::tfm;
using json = nlohmann::json;

namespace {

/// Larger headers are refused before parsing (real ones are far smaller).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct DTypeInfo {
  const char *name;
  DType type;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {"F64", DType::F64, 8},   {"F32", DType::F32, 4}, {"F16", DType::F16, 2},
    {"BF16", DType::BF16, 2}, {"I64", DType::I64, 8}, {"I32", DType::I32, 4},
    {"I16", DType::I16, 2},   {"I8", DType::I8, 1},   {"U8", DType::U8, 1},
    {"BOOL", DType::BOOL, 1}};

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace

size_t mlir::tfm::dtypeSize(DType t) {
  for (const DTypeInfo &d : kDTypes)
    if (d.type == t)
      return d.size;
  return 0;
}

llvm::StringRef mlir::tfm::dtypeName(DType t) {
  for (const DTypeInfo &d : kDTypes)
    if (d.type == t)
      return d.name;
  return "?";
}

int64_t TensorView::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Error TensorView::readAsF32(float *out) const {
  int64_t n = numElements();
  if (n == 0) // `out` may be null then (an empty vector's data())
    return llvm::Error::success();
  switch (dtype) {
  case DType::F32:
    std::memcpy(out, data, n * 4);
    return llvm::Error::success();
  case DType::F64:
    for (int64_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, data + 8 * i, 8);
      out[i] = float(d);
    }
    return llvm::Error::success();
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      out[i] = bf16BitsToFloat(h);
    }
    return llvm::Error::success();
  case DType::F16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      out[i] = halfToFloat(h);
    }
    return llvm::Error::success();
  default:
    return makeError(file + ": tensor '" + name + "' has dtype " +
                     dtypeName(dtype) +
                     ", expected a floating-point type (F32, BF16, F16, F64)");
  }
}

namespace {
/// A SAX pass that finds a key given twice in the top-level object, in time
/// linear in the text (nlohmann's callback parser rescans an object at the
/// end of each member object: quadratic in the tensors of a header).
struct TopLevelKeys : nlohmann::json_sax<json> {
  unsigned depth = 0;
  std::unordered_set<std::string> seen;
  std::optional<std::string> repeated;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return ++depth, true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return ++depth, true; }
  bool end_array() override { return --depth, true; }
  bool key(string_t &k) override {
    if (depth == 1 && !seen.insert(k).second && !repeated)
      repeated = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &) override {
    return false;
  }
};
} // namespace

/// The first key the top-level object of `text` (valid JSON) repeats.
static std::optional<std::string> repeatedTopLevelKey(llvm::StringRef text) {
  TopLevelKeys keys;
  json::sax_parse(text, &keys);
  return keys.repeated;
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::open(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  return fromBuffer(std::move(*buffer));
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer) {
  llvm::StringRef path = buffer->getBufferIdentifier();
  llvm::StringRef bytes = buffer->getBuffer();
  if (bytes.size() < 8)
    return makeError(path + ": truncated: " + llvm::Twine(bytes.size()) +
                     " bytes, no 8-byte header length");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | uint8_t(bytes[i]);
  if (headerLen > kMaxHeaderBytes)
    return makeError(path + ": header length " + llvm::Twine(headerLen) +
                     " exceeds the 100 MiB limit");
  if (headerLen > bytes.size() - 8)
    return makeError(path + ": header length " + llvm::Twine(headerLen) +
                     " runs past the end of the file (" +
                     llvm::Twine(bytes.size()) + " bytes)");
  if (auto e =
          checkJsonText(bytes.substr(8, headerLen), (path + ": header").str()))
    return std::move(e);
  json header;
  try {
    header = json::parse(bytes.substr(8, headerLen));
  } catch (const json::exception &e) { // parse_error, or a number out of range
    return makeError(path + ": header is not valid JSON: " + e.what());
  }
  // The JSON library keeps one of two equal keys; a header naming a tensor
  // twice is lying, so refuse it.
  if (std::optional<std::string> name =
          repeatedTopLevelKey(bytes.substr(8, headerLen)))
    return makeError(path + ": tensor '" + *name +
                     "' appears twice in the header");
  if (!header.is_object())
    return makeError(path + ": header must be a JSON object");
  uint64_t dataLen = bytes.size() - 8 - headerLen;
  const char *dataStart = bytes.data() + 8 + headerLen;

  auto file = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__")
      continue;
    std::string where = (path + ": tensor '" + name + "'").str();
    if (!entry.is_object() || !entry.contains("dtype") ||
        !entry.contains("shape") || !entry.contains("data_offsets"))
      return makeError(where + ": needs dtype, shape and data_offsets");
    TensorView view;
    view.name = name;
    view.file = path.str();
    const json &dt = entry["dtype"];
    const DTypeInfo *info = nullptr;
    for (const DTypeInfo &d : kDTypes)
      if (dt.is_string() && dt.get<std::string>() == d.name)
        info = &d;
    if (!info)
      return makeError(where + ": unknown dtype " + dt.dump());
    view.dtype = info->type;
    const json &shape = entry["shape"];
    if (!shape.is_array())
      return makeError(where + ": shape must be a list");
    // Element and byte counts are checked for overflow: a lying header
    // must not wrap around to a small size.
    uint64_t count = 1;
    for (const json &d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
        return makeError(where +
                         ": shape entries must be non-negative integers");
      uint64_t v = d.get<uint64_t>();
      if (__builtin_mul_overflow(count, v, &count))
        return makeError(where + ": shape overflows");
      view.shape.push_back(int64_t(v));
    }
    uint64_t numBytes;
    if (__builtin_mul_overflow(count, uint64_t(info->size), &numBytes))
      return makeError(where + ": shape overflows");
    const json &off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      return makeError(where + ": data_offsets must be [begin, end]");
    uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (begin > end || end > dataLen)
      return makeError(where + ": data_offsets [" + llvm::Twine(begin) + ", " +
                       llvm::Twine(end) + "] lie outside the " +
                       llvm::Twine(dataLen) + "-byte data section");
    if (numBytes != end - begin)
      return makeError(
          where + ": shape × dtype size = " + llvm::Twine(numBytes) +
          " bytes, but data_offsets span " + llvm::Twine(end - begin));
    view.data = dataStart + begin;
    view.numBytes = end - begin;
    if (end > begin)
      ranges.push_back({begin, end});
    file->views.emplace(name, std::move(view));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      return makeError(path + ": tensor byte ranges overlap at offset " +
                       llvm::Twine(ranges[i].first));
  file->buffer = std::move(buffer);
  return file;
}

llvm::Expected<Checkpoint> Checkpoint::open(llvm::StringRef dir) {
  Checkpoint ckpt;
  llvm::SmallString<256> single(dir), index(dir);
  llvm::sys::path::append(single, "model.safetensors");
  llvm::sys::path::append(index, "model.safetensors.index.json");
  std::vector<std::string> paths;
  // The index's tensor -> shard map, checked against the shards below.
  std::map<std::string, std::string> weightMap;
  // As transformers' from_pretrained: a single model.safetensors wins over
  // an index beside it.
  if (llvm::sys::fs::exists(single)) {
    paths.push_back(std::string(single));
  } else if (llvm::sys::fs::exists(index)) {
    auto buf = llvm::MemoryBuffer::getFile(index, /*IsText=*/true);
    if (!buf)
      return makeError(index + ": cannot read: " + buf.getError().message());
    if (auto e = checkJsonText((*buf)->getBuffer(), index))
      return std::move(e);
    json j;
    try {
      j = json::parse((*buf)->getBuffer());
    } catch (
        const json::exception &e) { // parse_error, or a number out of range
      return makeError(index + ": not valid JSON: " + e.what());
    }
    if (!j.is_object() || !j.contains("weight_map") ||
        !j["weight_map"].is_object())
      return makeError(index + ": field 'weight_map': must be an object");
    std::set<std::string> shards;
    for (auto &[name, shard] : j["weight_map"].items()) {
      if (!shard.is_string())
        return makeError(index + ": field 'weight_map': entry '" + name +
                         "' must name a file");
      std::string s = shard.get<std::string>();
      if (s.find('/') != std::string::npos || s.find("..") != std::string::npos)
        return makeError(index + ": field 'weight_map': shard '" + s +
                         "' must be a file name in the checkpoint folder");
      shards.insert(s);
      weightMap[name] = s;
    }
    for (const std::string &s : shards) {
      llvm::SmallString<256> p(dir);
      llvm::sys::path::append(p, s);
      paths.push_back(std::string(p));
    }
  } else {
    return makeError(dir +
                     ": no model.safetensors or model.safetensors.index.json");
  }
  for (const std::string &p : paths) {
    auto shard = openFile(p);
    if (!shard)
      return shard.takeError();
    if (auto e = ckpt.add(std::move(*shard)))
      return std::move(e);
  }
  // An index that lies about its shards is refused: every tensor it lists
  // is in the shard it names, and every tensor of the shards is listed.
  if (!weightMap.empty()) {
    for (const auto &[name, shard] : weightMap) {
      auto it = ckpt.index.find(name);
      if (it == ckpt.index.end())
        return makeError(index + ": field 'weight_map': tensor '" + name +
                         "' is not in its shard " + shard);
      if (llvm::sys::path::filename(it->second->file) != shard)
        return makeError(index + ": field 'weight_map': tensor '" + name +
                         "' is in " + it->second->file + ", not in " + shard);
    }
    for (const auto &[name, view] : ckpt.index)
      if (!weightMap.count(name))
        return makeError(view->file + ": tensor '" + name +
                         "' is not listed in " + index);
  }
  return ckpt;
}

llvm::Expected<Checkpoint>
Checkpoint::fromTensors(std::vector<TensorView> views,
                        std::shared_ptr<const void> owner) {
  Checkpoint ckpt;
  ckpt.memoryOwners.push_back(std::move(owner));
  for (TensorView &view : views) {
    if (view.file.empty())
      view.file = "<memory>";
    for (int64_t d : view.shape)
      if (d < 0)
        return makeError(view.file + ": tensor '" + view.name +
                         "': negative dimension " + llvm::Twine(d));
    if (view.numBytes != size_t(view.numElements()) * dtypeSize(view.dtype))
      return makeError(view.file + ": tensor '" + view.name +
                       "': " + llvm::Twine(view.numBytes) + " bytes for " +
                       llvm::Twine(view.numElements()) + " " +
                       dtypeName(view.dtype) + " elements");
    auto stored = std::make_unique<TensorView>(std::move(view));
    if (!ckpt.index.emplace(stored->name, stored.get()).second)
      return makeError(stored->file + ": tensor '" + stored->name +
                       "' given twice");
    ckpt.memoryViews.push_back(std::move(stored));
  }
  return ckpt;
}

llvm::Expected<Checkpoint> Checkpoint::openFile(llvm::StringRef path) {
  Checkpoint ckpt;
  auto file = SafetensorsFile::open(path);
  if (!file)
    return file.takeError();
  for (const auto &[name, view] : (*file)->tensors())
    ckpt.index[name] = &view;
  ckpt.files.push_back(std::move(*file));
  return ckpt;
}

llvm::Error Checkpoint::add(Checkpoint other) {
  for (const auto &[name, view] : other.index)
    if (auto it = index.find(name); it != index.end())
      return makeError(view->file + ": tensor '" + name + "' also appears in " +
                       it->second->file);
  index.insert(other.index.begin(), other.index.end());
  for (auto &f : other.files)
    files.push_back(std::move(f));
  for (auto &v : other.memoryViews)
    memoryViews.push_back(std::move(v));
  for (auto &o : other.memoryOwners)
    memoryOwners.push_back(std::move(o));
  return llvm::Error::success();
}

const TensorView *Checkpoint::find(llvm::StringRef name) const {
  auto it = index.find(name.str());
  return it == index.end() ? nullptr : it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto &[name, view] : index)
    out.push_back(name);
  return out;
}

llvm::Error mlir::tfm::writeSafetensors(
    llvm::StringRef path, const std::vector<TensorOut> &tensors,
    const std::map<std::string, std::string> &metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  std::vector<uint64_t> sizes;
  for (const TensorOut &t : tensors) {
    uint64_t n = dtypeSize(t.dtype);
    for (int64_t d : t.shape)
      n *= uint64_t(d);
    header[t.name] = {{"dtype", dtypeName(t.dtype).str()},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + n}}};
    sizes.push_back(n);
    offset += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' '); // align the data section
  return writeOutputFile(path, [&](llvm::raw_ostream &os) {
    uint64_t len = text.size();
    for (int i = 0; i < 8; ++i)
      os << char((len >> (8 * i)) & 0xff);
    os << text;
    for (size_t i = 0; i < tensors.size(); ++i)
      os.write(static_cast<const char *>(tensors[i].data), sizes[i]);
  });
}
