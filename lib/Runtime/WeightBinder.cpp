//===- WeightBinder.cpp - checkpoint tensors to model arguments -----------===//

#include "tfm/Runtime/WeightBinder.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/StringExtras.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tfm;

/// `templ` with {expert} replaced by `expert`.
static std::string expertName(std::string templ, int64_t expert) {
  size_t pos = templ.find(kExpertPlaceholder.str());
  if (pos != std::string::npos)
    templ.replace(pos, kExpertPlaceholder.size(), std::to_string(expert));
  return templ;
}

/// Whether a stacked_experts parameter's sources are per-expert templates
/// (else one older name of the whole stacked tensor).
static bool hasPerExpertSources(ParamAttr param) {
  return cast<StringAttr>(param.getSources()[0])
      .getValue()
      .contains(kExpertPlaceholder);
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

std::vector<int64_t>
mlir::tfm::expertFactorStoredShape(ParamAttr param,
                                   llvm::ArrayRef<int64_t> shape) {
  if (shape.size() != 3)
    return shape.vec();
  if (param.getMapping() == ParamMapping::expert_major)
    return {shape[0] * shape[1], shape[2]};
  if (param.getMapping() == ParamMapping::rank_major)
    return {shape[1], shape[2] * shape[0]};
  return shape.vec();
}

/// Copies between an [E, R, r] value and PEFT's rank-major [R, r·E] tensor
/// (column k·E + e is expert e's column k): to the stored layout when
/// `toStored`, else from it.
static void rankMajorCopy(llvm::ArrayRef<int64_t> shape, const float *from,
                          float *to, bool toStored) {
  int64_t experts = shape[0], rows = shape[1], rank = shape[2];
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t o = 0; o < rows; ++o)
      for (int64_t k = 0; k < rank; ++k) {
        int64_t value = (e * rows + o) * rank + k;
        int64_t stored = o * rank * experts + k * experts + e;
        if (toStored)
          to[stored] = from[value];
        else
          to[value] = from[stored];
      }
}

namespace {

/// Builds one (per-layer) parameter value of `shape` into `out`.
class Binder {
public:
  explicit Binder(const Checkpoint &ckpt) : ckpt(ckpt) {}

  /// The tensor `name` (or a tied alias); null, with `missing` set, if absent.
  const TensorView *lookup(const std::string &name,
                           ArrayRef<std::string> aliases) {
    if (const TensorView *t = ckpt.find(name)) {
      used.insert(name);
      return t;
    }
    for (const std::string &a : aliases)
      if (const TensorView *t = ckpt.find(a)) {
        used.insert(a);
        return t;
      }
    missing = quantizedInstead(name);
    if (missing.empty())
      missing =
          "checkpoint has no tensor '" + name + "'" +
          (aliases.empty() ? "" : " (nor its tied alias '" + aliases[0] + "')");
    return nullptr;
  }

  /// Why `name` is absent when the checkpoint stores it MXFP4-quantized
  /// (`name_blocks` / `_scales`, as OpenAI's gpt-oss release does); empty
  /// otherwise.
  std::string quantizedInstead(const std::string &name) const {
    const TensorView *blocks = ckpt.find(name + "_blocks");
    if (!blocks)
      return "";
    return blocks->file + ": tensor '" + name +
           "_blocks' holds MXFP4-quantized experts (as OpenAI's gpt-oss "
           "release stores them), which tfm does not train; dequantize the "
           "checkpoint to bf16 first (transformers: "
           "Mxfp4Config(dequantize=True), then save_pretrained)";
  }

  llvm::Error expectShape(const TensorView &t, ArrayRef<int64_t> shape) {
    if (ArrayRef<int64_t>(t.shape) != shape)
      return makeError(t.file + ": tensor '" + t.name + "' has shape " +
                       shapeString(t.shape) + ", the model expects " +
                       shapeString(shape));
    return llvm::Error::success();
  }

  /// Fills `out` (row-major `shape`) for slice `layer`'s names.
  llvm::Error build(ParamAttr param, int64_t layer, ArrayRef<int64_t> shape,
                    float *out) {
    auto layerName = [&](StringRef templ) {
      return substituteLayer(templ, param.hfLayer(layer));
    };
    std::vector<std::string> aliases;
    if (ArrayAttr tied = param.getTied())
      for (Attribute a : tied)
        aliases.push_back(cast<StringAttr>(a).str());
    switch (param.getMapping()) {
    case ParamMapping::direct: {
      // Older checkpoint names of the same tensor are tried after the name.
      std::vector<std::string> names;
      if (ArrayAttr sources = param.getSources())
        for (Attribute a : sources)
          names.push_back(layerName(cast<StringAttr>(a).getValue()));
      names.insert(names.end(), aliases.begin(), aliases.end());
      const TensorView *t = lookup(layerName(param.getName()), names);
      if (!t)
        return makeError(missing);
      if (auto e = expectShape(*t, shape))
        return e;
      return t->readAsF32(out);
    }
    case ParamMapping::transpose: {
      if (shape.size() != 2)
        return makeError("transposed parameter '" + param.getName() +
                         "' must be a matrix");
      const TensorView *t = lookup(layerName(param.getName()), aliases);
      if (!t)
        return makeError(missing);
      if (auto e = expectShape(*t, {shape[1], shape[0]}))
        return e;
      std::vector<float> tmp(t->numElements());
      if (auto e = t->readAsF32(tmp.data()))
        return e;
      for (int64_t i = 0; i < shape[0]; ++i)
        for (int64_t j = 0; j < shape[1]; ++j)
          out[i * shape[1] + j] = tmp[j * shape[0] + i];
      return llvm::Error::success();
    }
    case ParamMapping::fuse:
    case ParamMapping::split: {
      std::vector<std::string> names;
      for (Attribute src : param.getSources())
        names.push_back(layerName(cast<StringAttr>(src).getValue()));
      return fuseOrSplit(param, names, param.getMapping() == ParamMapping::fuse,
                         shape, out);
    }
    case ParamMapping::stacked_experts:
      return stackExperts(param, layerName, shape, out);
    case ParamMapping::expert_major:
    case ParamMapping::rank_major: {
      const TensorView *t = lookup(layerName(param.getName()), {});
      if (!t)
        return makeError(missing);
      if (auto e = expectShape(*t, expertFactorStoredShape(param, shape)))
        return e;
      // [E·r, C] is [E, r, C] in memory; the rank-major one is permuted.
      if (param.getMapping() == ParamMapping::expert_major)
        return t->readAsF32(out);
      std::vector<float> tmp(t->numElements());
      if (auto e = t->readAsF32(tmp.data()))
        return e;
      rankMajorCopy(shape, tmp.data(), out, /*toStored=*/false);
      return llvm::Error::success();
    }
    }
    return llvm::Error::success();
  }

  /// fuse: `out` (row-major `shape`) is the concatenation of the tensors
  /// `names` along param.getDim(); split: it is the slice of names[0] at
  /// param.getOffset(). Validates every source before copying anything.
  llvm::Error fuseOrSplit(ParamAttr param, ArrayRef<std::string> names,
                          bool fuse, ArrayRef<int64_t> shape, float *out) {
    int64_t dim = param.getDim();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < dim; ++i)
      outer *= shape[i];
    for (size_t i = dim + 1; i < shape.size(); ++i)
      inner *= shape[i];
    std::vector<const TensorView *> sources;
    int64_t rows = 0;
    for (const std::string &name : names) {
      const TensorView *t = lookup(name, {});
      if (!t)
        return makeError(missing);
      bool ok = t->shape.size() == shape.size();
      for (size_t i = 0; ok && i < shape.size(); ++i)
        ok = int64_t(i) == dim || t->shape[i] == shape[i];
      if (!ok)
        return makeError(t->file + ": tensor '" + t->name + "' has shape " +
                         shapeString(t->shape) +
                         ", which does not fit parameter '" + param.getName() +
                         "' " + shapeString(shape) + " along dim " +
                         llvm::Twine(dim));
      if (!fuse && param.getOffset() + shape[dim] > t->shape[dim])
        return makeError(t->file + ": tensor '" + t->name + "' has " +
                         llvm::Twine(t->shape[dim]) + " rows along dim " +
                         llvm::Twine(dim) + ", the split needs " +
                         llvm::Twine(param.getOffset() + shape[dim]));
      rows += t->shape[dim];
      sources.push_back(t);
    }
    if (fuse && rows != shape[dim])
      return makeError("fused parameter '" + param.getName() +
                       "': sources give " + llvm::Twine(rows) +
                       " rows along dim " + llvm::Twine(dim) +
                       ", the model expects " + llvm::Twine(shape[dim]));
    int64_t outOffset = 0;
    for (const TensorView *t : sources) {
      std::vector<float> tmp(t->numElements());
      if (auto e = t->readAsF32(tmp.data()))
        return e;
      int64_t srcDim = t->shape[dim];
      // fuse: this source fills [outOffset, outOffset + srcDim) of out;
      // split: out is [offset, offset + shape[dim]) of the source.
      int64_t count = fuse ? srcDim : shape[dim];
      int64_t srcStart = fuse ? 0 : param.getOffset();
      int64_t dstStart = fuse ? outOffset : 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t r = 0; r < count; ++r)
          std::copy_n(&tmp[((o * srcDim) + srcStart + r) * inner], inner,
                      &out[((o * shape[dim]) + dstStart + r) * inner]);
      outOffset += srcDim;
    }
    return llvm::Error::success();
  }

  /// The stacked tensor `name` ([E, ...]) as stored, or its older whole
  /// name, or per expert the concatenation of the per-expert sources.
  llvm::Error stackExperts(ParamAttr param,
                           function_ref<std::string(StringRef)> layerName,
                           ArrayRef<int64_t> shape, float *out) {
    ArrayAttr sources = param.getSources();
    std::string stackedName = layerName(param.getName());
    bool perExpert = hasPerExpertSources(param);
    std::vector<std::string> whole;
    if (!perExpert)
      whole.push_back(layerName(cast<StringAttr>(sources[0]).getValue()));
    if (ckpt.find(stackedName) || !perExpert ||
        !quantizedInstead(stackedName).empty()) {
      const TensorView *t = lookup(stackedName, whole);
      if (!t)
        return makeError(missing);
      if (auto e = expectShape(*t, shape))
        return e;
      return t->readAsF32(out);
    }
    ArrayRef<int64_t> expertShape = shape.drop_front();
    int64_t perExpertElems = 1;
    for (int64_t d : expertShape)
      perExpertElems *= d;
    for (int64_t e = 0; e < shape[0]; ++e) {
      std::vector<std::string> names;
      for (Attribute src : sources)
        names.push_back(
            expertName(layerName(cast<StringAttr>(src).getValue()), e));
      if (!ckpt.find(names[0]) && e == 0)
        return makeError("checkpoint has no tensor '" + stackedName +
                         "' (nor the per-expert tensors '" + names[0] +
                         "', ...)");
      float *slot = out + e * perExpertElems;
      if (names.size() > 1) {
        if (auto err =
                fuseOrSplit(param, names, /*fuse=*/true, expertShape, slot))
          return err;
        continue;
      }
      const TensorView *t = lookup(names[0], {});
      if (!t)
        return makeError(missing);
      if (auto err = expectShape(*t, expertShape))
        return err;
      if (auto err = t->readAsF32(slot))
        return err;
    }
    return llvm::Error::success();
  }

  const Checkpoint &ckpt;
  std::set<std::string> used;
  std::string missing;
};

} // namespace

static bool isFloat(DType t) {
  return t == DType::F32 || t == DType::BF16 || t == DType::F16 ||
         t == DType::F64;
}

/// A RoPE cache old checkpoints stored (HF recomputes it, a buffer that is
/// not persistent today): `model.rotary_emb.inv_freq` or
/// `model.layers.<l>.self_attn.rotary_emb.inv_freq`, a vector of floats.
/// Anything else ending in inv_freq is reported like any unknown tensor.
static bool isRopeCache(llvm::StringRef name, const TensorView &t) {
  if (t.shape.size() != 1 || !isFloat(t.dtype))
    return false;
  if (name == "model.rotary_emb.inv_freq")
    return true;
  if (!name.consume_front("model.layers.") ||
      !name.consume_back(".self_attn.rotary_emb.inv_freq"))
    return false;
  unsigned index;
  return !name.getAsInteger(10, index);
}

llvm::Expected<std::vector<std::vector<float>>>
mlir::tfm::bindParameters(func::FuncOp func, const Checkpoint &checkpoint) {
  Binder binder(checkpoint);
  std::vector<std::vector<float>> buffers(func.getNumArguments());
  // Every element of a parameter is read from a checkpoint tensor, so no
  // parameter holds more than all of them together: a config describing
  // a far larger model than the files is refused before its parameters are
  // allocated (petabytes for a lying vocab_size x hidden_size).
  uint64_t stored = 0;
  for (const std::string &name : checkpoint.names())
    stored += uint64_t(checkpoint.find(name)->numElements());
  // Tied aliases -> the shape their parameter has (a stored copy must match).
  std::map<std::string, std::vector<int64_t>> aliases;
  for (BlockArgument arg : func.getArguments()) {
    auto param =
        func.getArgAttrOfType<ParamAttr>(arg.getArgNumber(), kParamAttrName);
    if (!param)
      continue;
    auto type = cast<ShapedType>(arg.getType());
    ArrayRef<int64_t> shape = type.getShape();
    int64_t layers = param.getStacked() ? shape[0] : 1;
    ArrayRef<int64_t> perLayer =
        param.getStacked() ? shape.drop_front() : shape;
    int64_t perLayerElems = 1;
    for (int64_t d : perLayer)
      perLayerElems *= d;
    uint64_t elements;
    if (__builtin_mul_overflow(uint64_t(perLayerElems), uint64_t(layers),
                               &elements) ||
        elements > stored)
      return makeError(
          "parameter '" + param.getName() + "' is " +
          (param.getStacked() ? std::to_string(layers) + " layers of "
                              : std::string()) +
          shapeString(perLayer) + " by the config, more elements than the " +
          llvm::Twine(stored) +
          " that all tensors of the checkpoint hold: the config "
          "does not describe these weights");
    std::vector<float> &buf = buffers[arg.getArgNumber()];
    buf.resize(size_t(elements));
    for (int64_t l = 0; l < layers; ++l)
      if (auto e =
              binder.build(param, l, perLayer, buf.data() + l * perLayerElems))
        return std::move(e);
    if (ArrayAttr tied = param.getTied())
      for (Attribute a : tied)
        aliases[cast<StringAttr>(a).str()] =
            std::vector<int64_t>(perLayer.begin(), perLayer.end());
  }
  // A tensor nothing reads means the checkpoint is for another model (or
  // the weight map is incomplete): refuse rather than silently ignore it.
  // Tied aliases saved alongside their source, RoPE caches that old
  // checkpoints stored, and what the model says it does not build (the
  // multi-token-prediction layers of DeepSeek-V3 and GLM-4.5, `tfm.ignored`
  // name prefixes, which HF also drops on load) are expected.
  std::vector<std::string> ignored;
  if (auto prefixes = func->getAttrOfType<ArrayAttr>(kIgnoredTensorsAttrName))
    for (Attribute p : prefixes)
      ignored.push_back(cast<StringAttr>(p).str());
  for (const std::string &name : checkpoint.names()) {
    const TensorView *t = checkpoint.find(name);
    if (auto alias = aliases.find(name);
        alias != aliases.end() && !binder.used.count(name)) {
      // A tied copy stored beside its source is what HF writes; one of
      // another shape or a non-float type is a lying checkpoint.
      if (t->shape != alias->second || !isFloat(t->dtype))
        return makeError(t->file + ": tensor '" + name +
                         "' is tied to a parameter of shape " +
                         shapeString(alias->second) + " but is stored as " +
                         shapeString(t->shape) + " " + dtypeName(t->dtype));
      continue;
    }
    if (binder.used.count(name) || isRopeCache(name, *t) ||
        llvm::any_of(ignored, [&](const std::string &p) {
          return llvm::StringRef(name).starts_with(p);
        }))
      continue;
    if (llvm::StringRef(name).ends_with(".weight_scale_inv"))
      return makeError(t->file + ": tensor '" + name +
                       "' is the scale of an FP8 block-quantized weight (as "
                       "DeepSeek-V3's release stores them), which tfm does "
                       "not train; dequantize the checkpoint to bf16 first");
    return makeError(t->file + ": tensor '" + name +
                     "' is not a parameter of this model");
  }
  return buffers;
}

llvm::Expected<std::vector<NamedGradient>>
mlir::tfm::unbindGradients(llvm::ArrayRef<ParamAttr> params,
                           llvm::ArrayRef<std::vector<int64_t>> shapes,
                           llvm::ArrayRef<const float *> grads,
                           const Checkpoint &checkpoint) {
  std::map<std::string, NamedGradient> out;
  auto storedShape = [&](const std::string &name) -> std::vector<int64_t> {
    const TensorView *t = checkpoint.find(name);
    return t ? t->shape : std::vector<int64_t>();
  };
  /// Adds `count` rows (of `inner` elements, along `dim` with `outer`
  /// blocks) from `src` into the named gradient, creating it if needed.
  auto target = [&](const std::string &name,
                    ArrayRef<int64_t> shape) -> NamedGradient & {
    NamedGradient &g = out[name];
    if (g.name.empty()) {
      g.name = name;
      g.shape.assign(shape.begin(), shape.end());
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      g.data.assign(n, 0.0f);
    }
    return g;
  };
  /// The inverse of fuse (each source gets its rows) or split (the slice is
  /// added into the source) for one parameter value `g` of `shape`.
  auto unfuse = [&](ParamAttr param, ArrayRef<std::string> names, bool fuse,
                    ArrayRef<int64_t> shape, const float *g) -> llvm::Error {
    int64_t dim = param.getDim(), outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d)
      outer *= shape[d];
    for (size_t d = dim + 1; d < shape.size(); ++d)
      inner *= shape[d];
    int64_t offset = 0;
    for (const std::string &n : names) {
      std::vector<int64_t> srcShape = storedShape(n);
      bool fits = srcShape.size() == shape.size();
      for (size_t d = 0; fits && d < shape.size(); ++d)
        fits = int64_t(d) == dim || srcShape[d] == shape[d];
      if (fits && !fuse)
        fits = param.getOffset() + shape[dim] <= srcShape[dim];
      if (fits && fuse)
        fits = offset + srcShape[dim] <= shape[dim];
      if (!fits)
        return makeError("checkpoint tensor '" + n +
                         "' does not match the parameter '" + param.getName() +
                         "'");
      NamedGradient &t = target(n, srcShape);
      int64_t srcRows = srcShape[dim];
      int64_t count = fuse ? srcRows : shape[dim];
      int64_t srcStart = fuse ? 0 : param.getOffset(),
              paramStart = fuse ? offset : 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t r = 0; r < count; ++r)
          for (int64_t e = 0; e < inner; ++e)
            t.data[((o * srcRows) + srcStart + r) * inner + e] +=
                g[((o * shape[dim]) + paramStart + r) * inner + e];
      offset += srcRows;
    }
    return llvm::Error::success();
  };
  for (unsigned i = 0; i < params.size(); ++i) {
    ParamAttr param = params[i];
    if (!param || i >= grads.size() || !grads[i])
      continue;
    ArrayRef<int64_t> shape = shapes[i];
    int64_t layers = param.getStacked() ? shape[0] : 1;
    ArrayRef<int64_t> perLayer =
        param.getStacked() ? shape.drop_front() : shape;
    int64_t perLayerElems = 1;
    for (int64_t d : perLayer)
      perLayerElems *= d;
    for (int64_t l = 0; l < layers; ++l) {
      const float *g = grads[i] + l * perLayerElems;
      auto layerName = [&](StringRef templ) {
        return substituteLayer(templ, param.hfLayer(l));
      };
      switch (param.getMapping()) {
      case ParamMapping::direct: {
        std::vector<std::string> names = {layerName(param.getName())};
        if (ArrayAttr sources = param.getSources())
          for (Attribute a : sources)
            names.push_back(layerName(cast<StringAttr>(a).getValue()));
        if (ArrayAttr tied = param.getTied())
          for (Attribute a : tied)
            names.push_back(cast<StringAttr>(a).str());
        bool written = false;
        for (const std::string &n : names) {
          if (!checkpoint.find(n))
            continue;
          NamedGradient &t = target(n, perLayer);
          std::copy_n(g, perLayerElems, t.data.begin());
          written = true;
        }
        if (!written)
          return makeError("no checkpoint tensor to write the gradient of '" +
                           names[0] + "' under");
        break;
      }
      case ParamMapping::transpose: {
        std::string n = layerName(param.getName());
        NamedGradient &t = target(n, {perLayer[1], perLayer[0]});
        for (int64_t r = 0; r < perLayer[0]; ++r)
          for (int64_t c = 0; c < perLayer[1]; ++c)
            t.data[c * perLayer[0] + r] = g[r * perLayer[1] + c];
        break;
      }
      case ParamMapping::fuse:
      case ParamMapping::split: {
        std::vector<std::string> names;
        for (Attribute src : param.getSources())
          names.push_back(layerName(cast<StringAttr>(src).getValue()));
        if (auto e =
                unfuse(param, names, param.getMapping() == ParamMapping::fuse,
                       perLayer, g))
          return std::move(e);
        break;
      }
      case ParamMapping::expert_major:
      case ParamMapping::rank_major: {
        NamedGradient &t = target(layerName(param.getName()),
                                  expertFactorStoredShape(param, perLayer));
        if (param.getMapping() == ParamMapping::expert_major)
          std::copy_n(g, perLayerElems, t.data.begin());
        else
          rankMajorCopy(perLayer, g, t.data.data(), /*toStored=*/true);
        break;
      }
      case ParamMapping::stacked_experts: {
        // In the layout the checkpoint stores: stacked, under an older whole
        // name, or per expert.
        std::string stackedName = layerName(param.getName());
        ArrayAttr sources = param.getSources();
        if (checkpoint.find(stackedName) || !hasPerExpertSources(param)) {
          std::string n =
              checkpoint.find(stackedName)
                  ? stackedName
                  : layerName(cast<StringAttr>(sources[0]).getValue());
          NamedGradient &t = target(n, perLayer);
          std::copy_n(g, perLayerElems, t.data.begin());
          break;
        }
        ArrayRef<int64_t> expertShape = perLayer.drop_front();
        int64_t perExpertElems = perLayerElems / perLayer[0];
        for (int64_t e = 0; e < perLayer[0]; ++e) {
          std::vector<std::string> names;
          for (Attribute src : sources)
            names.push_back(
                expertName(layerName(cast<StringAttr>(src).getValue()), e));
          const float *ge = g + e * perExpertElems;
          if (names.size() == 1) {
            NamedGradient &t = target(names[0], expertShape);
            std::copy_n(ge, perExpertElems, t.data.begin());
          } else if (auto err =
                         unfuse(param, names, /*fuse=*/true, expertShape, ge)) {
            return std::move(err);
          }
        }
        break;
      }
      }
    }
  }
  std::vector<NamedGradient> result;
  for (auto &[name, g] : out)
    result.push_back(std::move(g));
  return result;
}

llvm::Expected<Checkpoint>
mlir::tfm::checkpointOf(std::vector<NamedGradient> tensors,
                        llvm::StringRef origin) {
  auto owner = std::make_shared<std::vector<NamedGradient>>(std::move(tensors));
  std::vector<TensorView> views;
  for (const NamedGradient &t : *owner) {
    TensorView v;
    v.name = t.name;
    v.dtype = DType::F32;
    v.shape = t.shape;
    v.data = reinterpret_cast<const char *>(t.data.data());
    v.numBytes = t.data.size() * sizeof(float);
    v.file = origin.str();
    views.push_back(std::move(v));
  }
  return Checkpoint::fromTensors(std::move(views), owner);
}
