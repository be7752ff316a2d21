//===- ModelBuilder.cpp - ModelSpec to HF-literal tfm IR ------------------===//
//
// One op per step of the HF modeling code. The layer body is built once per
// distinct LayerSpec (layer kind) inside a single tfm.repeat, so the size of
// the IR and the time to build it do not depend on the number of layers.
//
//===----------------------------------------------------------------------===//

#include "tfm/Import/ModelBuilder.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// Which layers have a per-layer parameter.
enum class LayerScope {
  every,
  /// The norms of attention + MLP decoder layers.
  blockNorms,
  /// The one norm of one-mixer layers (`norm.weight`).
  mixerNorm,
  attention,
  mamba,
  deltaNet,
  /// The MLP of every layer that has one (models without MoE).
  mlp,
  denseMlp,
  moeMlp,
};

/// A per-layer parameter: its HF name suffix after the layer prefix
/// (`HfNames::layers`, "model.layers.{layer}." in most families),
/// its kind (for summaries), its per-layer shape and the layers that have it.
struct LayerParam {
  std::string suffix;
  std::string kind;
  SmallVector<int64_t> shape;
  /// How the checkpoint stores it: direct (sources: older names) or
  /// stacked_experts (sources: per-expert templates or an older name).
  ParamMapping mapping = ParamMapping::direct;
  std::vector<std::string> sources;
  LayerScope scope = LayerScope::every;
  /// An HF buffer kept in f32 whatever the model's type (DeepSeek's
  /// e_score_correction_bias): never trained, not counted as a parameter.
  bool f32Buffer = false;

  bool inLayer(const LayerSpec &layer) const {
    switch (scope) {
    case LayerScope::every:
      return true;
    case LayerScope::blockNorms:
      return layer.isDecoderBlock();
    case LayerScope::mixerNorm:
      return !layer.isDecoderBlock();
    case LayerScope::attention:
      return layer.hasAttention();
    case LayerScope::mamba:
      return layer.hasMamba();
    case LayerScope::deltaNet:
      return layer.hasDeltaNet();
    case LayerScope::mlp:
      return layer.hasMlp();
    case LayerScope::denseMlp:
      return layer.hasMlp() && layer.denseMlp;
    case LayerScope::moeMlp:
      return layer.hasMlp() && !layer.denseMlp;
    }
    llvm_unreachable("unknown layer scope");
  }
};

class ModelBuilder {
public:
  ModelBuilder(MLIRContext &ctx, const ModelSpec &spec, Type elem,
               bool withLogits)
      : ctx(ctx), spec(spec), elem(elem), withLogits(withLogits), b(&ctx),
        loc(UnknownLoc::get(&ctx)) {
    collectLayerParams();
  }

  OwningOpRef<ModuleOp> build();

private:
  // --- Parameters ---------------------------------------------------------
  void addLayerParam(StringRef role, StringRef suffix, StringRef kind,
                     ArrayRef<int64_t> shape,
                     ParamMapping mapping = ParamMapping::direct,
                     std::vector<std::string> sources = {}) {
    roles[role.str()] = layerParams.size();
    layerParams.push_back({suffix.str(), kind.str(),
                           SmallVector<int64_t>(shape), mapping,
                           std::move(sources), scope});
  }
  void collectAttentionParams();
  void collectMambaParams(const MambaSpec &mamba);
  void collectDeltaNetParams(const DeltaNetSpec &net);
  void collectMlaParams(const MlaSpec &mla);
  /// Drops the parameters no layer has, so none is stacked over 0 layers.
  void dropUnusedParams();
  void collectDenseMlpParams();
  void collectMoeParams(const MoeSpec &moe);
  bool hasRole(StringRef role) const { return roles.count(role.str()); }
  /// The per-layer slice of a parameter inside a layer body (null if absent;
  /// `weights` has one entry per layerParams entry, null where the layer
  /// kind does not have it).
  Value param(ValueRange weights, StringRef role) const {
    auto it = roles.find(role.str());
    return it == roles.end() ? Value() : weights[it->second];
  }
  void collectLayerParams();

  // --- Types --------------------------------------------------------------
  RankedTensorType act(ArrayRef<int64_t> trailing) const {
    SmallVector<int64_t> shape{kDyn, kDyn};
    shape.append(trailing.begin(), trailing.end());
    return RankedTensorType::get(shape, elem);
  }
  RankedTensorType stat(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, Float32Type::get(&ctx));
  }
  RankedTensorType ids() const {
    return RankedTensorType::get({kDyn, kDyn}, IntegerType::get(&ctx, 64));
  }

  // --- Op helpers ---------------------------------------------------------
  Value matmul(Value x, Value w, Value bias = {}) {
    auto wt = cast<RankedTensorType>(w.getType());
    auto xt = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(xt.getShape().drop_back());
    shape.push_back(wt.getDimSize(0));
    return MatmulOp::create(b, loc, RankedTensorType::get(shape, elem), x, w,
                            bias, TransposeAttr::get(&ctx, Transpose::nt));
  }
  Value rmsnorm(Value x, Value w, std::optional<double> eps = {}) {
    auto xt = cast<RankedTensorType>(x.getType());
    auto op = RmsNormOp::create(
        b, loc, xt, stat(xt.getShape().drop_back()), x, w,
        b.getF64FloatAttr(eps.value_or(spec.rmsNormEps)), unitOffset());
    return op.getY();
  }
  Value reshape(Value x, ArrayRef<int64_t> trailing) {
    return ReshapeOp::create(b, loc, act(trailing), x);
  }
  UnitAttr unitOffset() {
    return spec.unitOffsetNorm ? b.getUnitAttr() : UnitAttr();
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
  /// x · factor (x itself for 1: HF multiplies by 1.0 exactly); `round`
  /// when HF holds the factor as a tensor of the model's type.
  Value scaled(Value x, double factor, bool round = false) {
    return factor == 1.0
               ? x
               : Value(ScaleOp::create(b, loc, x, b.getF64FloatAttr(factor),
                                       round ? b.getUnitAttr() : UnitAttr()));
  }
  Value rope(Value x, Value positions, const RopeSpec &r);
  Value attention(Value x, ValueRange w, Value positions,
                  const LayerSpec &layer);
  Value mlaAttention(Value x, ValueRange w, Value positions,
                     const LayerSpec &layer, const MlaSpec &mla);
  Value denseMlp(Value x, ValueRange w, StringRef prefix);
  /// The model's MLP activation.
  Value activate(Value x) {
    switch (spec.activation) {
    case Activation::silu:
      return SiluOp::create(b, loc, x);
    case Activation::gelu_tanh:
      return GeluTanhOp::create(b, loc, x);
    case Activation::relu2:
      return Relu2Op::create(b, loc, x);
    }
    llvm_unreachable("unknown activation");
  }
  Value mlp(Value x, ValueRange w, const LayerSpec &layer);
  Value moeMlp(Value x, ValueRange w, const MoeSpec &moe);
  Value mambaMixer(Value x, ValueRange w, const MambaSpec &m);
  Value deltaNetMixer(Value x, ValueRange w, const DeltaNetSpec &net);
  /// The causal depthwise conv + SiLU over x [.., C], from HF's conv1d
  /// weight [C, 1, K] (and bias).
  Value causalConv(Value x, Value weight, Value bias) {
    auto wt = cast<RankedTensorType>(weight.getType());
    int64_t c = wt.getDimSize(0), k = wt.getDimSize(2);
    return MambaConv1dOp::create(
        b, loc, act({c}), x,
        ReshapeOp::create(
            b, loc, RankedTensorType::get({c, k}, wt.getElementType()), weight),
        bias, docStart);
  }
  /// The token mixer of a decoder layer: attention or gated DeltaNet.
  Value mixer(Value x, ValueRange w, Value positions, const LayerSpec &layer) {
    return layer.hasDeltaNet() ? deltaNetMixer(x, w, *spec.deltaNet)
                               : attention(x, w, positions, layer);
  }
  /// A residual branch, times Granite's residual_multiplier.
  Value branch(Value x) {
    return spec.residualMultiplier ? scaled(x, *spec.residualMultiplier) : x;
  }
  Value layerBody(Value h, ValueRange w, Value positions,
                  const LayerSpec &layer);

  MLIRContext &ctx;
  const ModelSpec &spec;
  const HfNames &names = spec.names;
  /// The first token of each token's document ([B, T], tfm.document_starts).
  Value docStart;
  Type elem;
  bool withLogits;
  OpBuilder b;
  Location loc;
  std::vector<LayerParam> layerParams;
  std::map<std::string, size_t> roles;
  /// The scope addLayerParam gives new parameters.
  LayerScope scope = LayerScope::every;
  /// Whether the loss includes HF's load-balancing loss; then each layer
  /// body also yields its router statistics (set by moeMlp).
  bool auxLoss = false;
  Value layerStats;
};

void ModelBuilder::collectLayerParams() {
  int64_t h = spec.hiddenSize;
  scope = LayerScope::mixerNorm;
  addLayerParam("mixer_norm", "norm.weight", "norm", {h});
  scope = LayerScope::blockNorms;
  if (spec.style != BlockStyle::postNorm)
    addLayerParam("in_norm", "input_layernorm.weight", "norm", {h});
  scope = LayerScope::attention;
  collectAttentionParams();
  scope = LayerScope::blockNorms;
  // Norm after attention: the pre-MLP norm (pre-norm), or the norm of the
  // attention output (sandwich, post-norm); HF names both
  // post_attention_layernorm.
  addLayerParam("post_attn_norm", names.postAttentionNorm, "norm", {h});
  if (spec.style == BlockStyle::sandwich)
    addLayerParam("pre_ff_norm", "pre_feedforward_layernorm.weight", "norm",
                  {h});
  if (spec.style != BlockStyle::preNorm)
    addLayerParam("post_ff_norm", "post_feedforward_layernorm.weight", "norm",
                  {h});
  if (spec.mamba) {
    scope = LayerScope::mamba;
    collectMambaParams(*spec.mamba);
  }
  if (spec.deltaNet) {
    scope = LayerScope::deltaNet;
    collectDeltaNetParams(*spec.deltaNet);
  }
  if (spec.moe) {
    scope = LayerScope::moeMlp;
    collectMoeParams(*spec.moe);
  }
  scope = spec.moe ? LayerScope::denseMlp : LayerScope::mlp;
  collectDenseMlpParams();
  scope = LayerScope::every;
  dropUnusedParams();
}

void ModelBuilder::dropUnusedParams() {
  std::vector<LayerParam> kept;
  std::map<std::string, size_t> keptRoles;
  for (auto &[role, index] : roles) {
    const LayerParam &p = layerParams[index];
    if (llvm::any_of(spec.layers,
                     [&](const LayerSpec &l) { return p.inLayer(l); }))
      keptRoles[role] = index;
  }
  // Keep the collection order (it is the order of the parameters in IR).
  std::vector<std::pair<size_t, std::string>> order;
  for (auto &[role, index] : keptRoles)
    order.push_back({index, role});
  llvm::sort(order);
  roles.clear();
  for (auto &[index, role] : order) {
    roles[role] = kept.size();
    kept.push_back(std::move(layerParams[index]));
  }
  layerParams = std::move(kept);
}

void ModelBuilder::collectAttentionParams() {
  int64_t h = spec.hiddenSize, d = spec.headDim;
  int64_t qw = spec.numHeads * d, kvw = spec.numKvHeads * d;
  if (spec.mla) {
    collectMlaParams(*spec.mla);
  } else if (spec.fusedQkv) {
    addLayerParam("qkv", names.attention + "qkv_proj.weight", "attn_qkv",
                  {qw + 2 * kvw, h});
  } else {
    // Gated attention: each head's rows are [query | gate].
    int64_t qRows = spec.gatedAttention ? 2 * qw : qw;
    addLayerParam("q", names.attention + "q_proj.weight", "attn_q", {qRows, h});
    if (spec.qkvBias)
      addLayerParam("q_bias", names.attention + "q_proj.bias", "attn_q",
                    {qRows});
    addLayerParam("k", names.attention + "k_proj.weight", "attn_k", {kvw, h});
    if (spec.qkvBias)
      addLayerParam("k_bias", names.attention + "k_proj.bias", "attn_k", {kvw});
    addLayerParam("v", names.attention + "v_proj.weight", "attn_v", {kvw, h});
    if (spec.qkvBias)
      addLayerParam("v_bias", names.attention + "v_proj.bias", "attn_v", {kvw});
  }
  if (spec.qkNorm == QkNorm::perHead) {
    addLayerParam("q_norm", names.attention + "q_norm.weight", "qk_norm", {d});
    addLayerParam("k_norm", names.attention + "k_norm.weight", "qk_norm", {d});
  } else if (spec.qkNorm == QkNorm::whole) {
    addLayerParam("q_norm", names.attention + "q_norm.weight", "qk_norm", {qw});
    addLayerParam("k_norm", names.attention + "k_norm.weight", "qk_norm",
                  {kvw});
  }
  if (spec.attentionSinks)
    addLayerParam("sinks", names.attention + "sinks", "attn_sinks",
                  {spec.numHeads});
  if (spec.mla)
    qw = spec.numHeads * spec.mla->vDim;
  addLayerParam("o", names.attention + "o_proj.weight", "attn_o", {h, qw});
  if (spec.oBias)
    addLayerParam("o_bias", names.attention + "o_proj.bias", "attn_o", {h});
}

/// HF Mamba2Mixer's parameters: in_proj rows [z | xBC | dt], the depthwise
/// conv [C, 1, K], per-head dt_bias, A_log and D, the gated norm, out_proj.
void ModelBuilder::collectMambaParams(const MambaSpec &m) {
  int64_t h = spec.hiddenSize, inner = m.innerSize(), c = m.convChannels();
  int64_t heads = m.numHeads;
  std::string p = names.mamba;
  addLayerParam("ssm_in", p + "in_proj.weight", "ssm_in",
                {inner + c + heads, h});
  if (m.projBias)
    addLayerParam("ssm_in_bias", p + "in_proj.bias", "ssm_in",
                  {inner + c + heads});
  addLayerParam("ssm_conv", p + "conv1d.weight", "ssm_conv",
                {c, 1, m.convKernel});
  if (m.convBias)
    addLayerParam("ssm_conv_bias", p + "conv1d.bias", "ssm_conv", {c});
  addLayerParam("ssm_dt_bias", p + "dt_bias", "ssm_dt", {heads});
  addLayerParam("ssm_a_log", p + "A_log", "ssm_a", {heads});
  addLayerParam("ssm_d", p + "D", "ssm_d", {heads});
  if (m.gatedNorm)
    addLayerParam("ssm_norm", p + "norm.weight", "norm", {inner});
  addLayerParam("ssm_out", p + "out_proj.weight", "ssm_out", {h, inner});
  if (m.outBias)
    addLayerParam("ssm_out_bias", p + "out_proj.bias", "ssm_out", {h});
}

/// HF Qwen3NextGatedDeltaNet's parameters (Qwen3_5GatedDeltaNet's four
/// separate in-projections), the conv [C, 1, K] without bias, per-value-head
/// dt_bias and A_log, the head norm's one [Dv] weight, out_proj.
void ModelBuilder::collectDeltaNetParams(const DeltaNetSpec &n) {
  int64_t h = spec.hiddenSize, kw = n.keyWidth(), vw = n.valueWidth();
  int64_t heads = n.valueHeads;
  std::string p = "linear_attn.";
  if (n.interleavedProjections) {
    addLayerParam("lin_qkvz", p + "in_proj_qkvz.weight", "linear_in",
                  {2 * kw + 2 * vw, h});
    addLayerParam("lin_ba", p + "in_proj_ba.weight", "linear_in",
                  {2 * heads, h});
  } else {
    addLayerParam("lin_qkv", p + "in_proj_qkv.weight", "linear_in",
                  {2 * kw + vw, h});
    addLayerParam("lin_z", p + "in_proj_z.weight", "linear_in", {vw, h});
    addLayerParam("lin_b", p + "in_proj_b.weight", "linear_in", {heads, h});
    addLayerParam("lin_a", p + "in_proj_a.weight", "linear_in", {heads, h});
  }
  addLayerParam("lin_conv", p + "conv1d.weight", "linear_conv",
                {n.convChannels(), 1, n.convKernel});
  addLayerParam("lin_dt_bias", p + "dt_bias", "linear_dt", {heads});
  addLayerParam("lin_a_log", p + "A_log", "linear_a", {heads});
  addLayerParam("lin_norm", p + "norm.weight", "norm", {n.valueDim});
  addLayerParam("lin_out", p + "out_proj.weight", "linear_out", {h, vw});
}

void ModelBuilder::collectDenseMlpParams() {
  int64_t h = spec.hiddenSize, i = spec.intermediateSize;
  if (!spec.gatedMlp) {
    // up -> act -> down (NemotronH).
    addLayerParam("up", names.mlp + "up_proj.weight", "mlp_up", {i, h});
    if (spec.mlpBias)
      addLayerParam("up_bias", names.mlp + "up_proj.bias", "mlp_up", {i});
  } else if (spec.fusedGateUp) {
    addLayerParam("gate_up", names.mlp + "gate_up_proj.weight", "mlp_gate_up",
                  {2 * i, h});
  } else {
    addLayerParam("gate", names.mlp + "gate_proj.weight", "mlp_gate", {i, h});
    if (spec.mlpBias)
      addLayerParam("gate_bias", names.mlp + "gate_proj.bias", "mlp_gate", {i});
    addLayerParam("up", names.mlp + "up_proj.weight", "mlp_up", {i, h});
    if (spec.mlpBias)
      addLayerParam("up_bias", names.mlp + "up_proj.bias", "mlp_up", {i});
  }
  addLayerParam("down", names.mlp + "down_proj.weight", "mlp_down", {h, i});
  if (spec.mlpBias)
    addLayerParam("down_bias", names.mlp + "down_proj.bias", "mlp_down", {h});
}

/// MLA's projections and latent norms (modeling_deepseek_v3): the rows of
/// q_b_proj / q_proj are per head [nope | rope], of kv_b_proj per head
/// [k nope | v], and kv_a_proj_with_mqa's are [latent | shared rotary key].
void ModelBuilder::collectMlaParams(const MlaSpec &mla) {
  int64_t h = spec.hiddenSize, heads = spec.numHeads;
  int64_t qk = mla.nopeDim + mla.ropeDim;
  if (mla.qLoraRank) {
    addLayerParam("q_a", names.attention + "q_a_proj.weight", "attn_q",
                  {mla.qLoraRank, h});
    if (spec.qkvBias)
      addLayerParam("q_a_bias", names.attention + "q_a_proj.bias", "attn_q",
                    {mla.qLoraRank});
    addLayerParam("q_a_norm", names.attention + "q_a_layernorm.weight", "norm",
                  {mla.qLoraRank});
    addLayerParam("q_b", names.attention + "q_b_proj.weight", "attn_q",
                  {heads * qk, mla.qLoraRank});
  } else {
    addLayerParam("q", names.attention + "q_proj.weight", "attn_q",
                  {heads * qk, h});
  }
  addLayerParam("kv_a", names.attention + "kv_a_proj_with_mqa.weight",
                "attn_kv", {mla.kvLoraRank + mla.ropeDim, h});
  if (spec.qkvBias)
    addLayerParam("kv_a_bias", names.attention + "kv_a_proj_with_mqa.bias",
                  "attn_kv", {mla.kvLoraRank + mla.ropeDim});
  addLayerParam("kv_a_norm", names.attention + "kv_a_layernorm.weight", "norm",
                {mla.kvLoraRank});
  addLayerParam("kv_b", names.attention + "kv_b_proj.weight", "attn_kv",
                {heads * (mla.nopeDim + mla.vDim), mla.kvLoraRank});
}

/// The router, and the experts' stacked gate|up [E, 2I, H] and down
/// [E, H, I] (transformers-5 names), with the hub's older names as sources.
void ModelBuilder::collectMoeParams(const MoeSpec &moe) {
  int64_t h = spec.hiddenSize, e = moe.numExperts, i = moe.intermediateSize;
  auto some = [](const std::string &name) {
    return name.empty() ? std::vector<std::string>{}
                        : std::vector<std::string>{name};
  };
  std::string router = moe.block + "." + moe.router;
  addLayerParam("router", router + ".weight", "moe_router", {e, h},
                ParamMapping::direct, some(moe.legacyRouter));
  if (moe.routerBias)
    addLayerParam("router_bias", router + ".bias", "moe_router", {e});
  if (moe.correctionBias) {
    addLayerParam("router_correction_bias", router + ".e_score_correction_bias",
                  "moe_router", {e});
    layerParams.back().f32Buffer = true;
  }
  if (moe.sharedExperts) {
    int64_t width =
        moe.sharedIntermediate ? moe.sharedIntermediate : moe.sharedExperts * i;
    std::string shared = moe.block + "." + moe.sharedName + ".";
    // DeepSeek-V2's mlp_bias applies to the shared experts too.
    if (spec.gatedMlp) {
      addLayerParam("shared_gate", shared + "gate_proj.weight", "mlp_gate",
                    {width, h});
      if (spec.mlpBias)
        addLayerParam("shared_gate_bias", shared + "gate_proj.bias", "mlp_gate",
                      {width});
    }
    addLayerParam("shared_up", shared + "up_proj.weight", "mlp_up", {width, h});
    if (spec.mlpBias)
      addLayerParam("shared_up_bias", shared + "up_proj.bias", "mlp_up",
                    {width});
    addLayerParam("shared_down", shared + "down_proj.weight", "mlp_down",
                  {h, width});
    if (spec.mlpBias)
      addLayerParam("shared_down_bias", shared + "down_proj.bias", "mlp_down",
                    {h});
    if (moe.sharedExpertGate)
      addLayerParam("shared_gate_logit",
                    moe.block + "." + moe.sharedName + "_gate.weight",
                    "moe_shared_gate", {1, h});
  }
  std::vector<std::string> gateUp = some(moe.legacyGate);
  if (!moe.legacyStacked && !moe.legacyUp.empty())
    gateUp.push_back(moe.legacyUp);
  std::vector<std::string> down = some(moe.legacyDown);
  // With hub names the stacked tensor may come from them; without (gpt-oss
  // stores stacked tensors), it is read as stored.
  auto layoutOf = [](const std::vector<std::string> &hub) {
    return hub.empty() ? ParamMapping::direct : ParamMapping::stacked_experts;
  };
  std::string experts = moe.block + ".experts.";
  // NemotronH: latent projections around the experts, which then work in
  // the latent width.
  if (moe.latentSize) {
    int64_t lat = moe.latentSize;
    addLayerParam("moe_fc1", moe.block + ".fc1_latent_proj.weight",
                  "moe_latent", {lat, h});
    if (spec.mlpBias)
      addLayerParam("moe_fc1_bias", moe.block + ".fc1_latent_proj.bias",
                    "moe_latent", {lat});
    addLayerParam("moe_fc2", moe.block + ".fc2_latent_proj.weight",
                  "moe_latent", {h, lat});
    if (spec.mlpBias)
      addLayerParam("moe_fc2_bias", moe.block + ".fc2_latent_proj.bias",
                    "moe_latent", {h});
    h = lat;
  }
  // [E, out, in] for F.linear, or [E, in, out] for x @ W (gpt-oss).
  bool nn = moe.transposedExperts;
  if (!moe.gatedExperts)
    addLayerParam("experts_up", experts + "up_proj", "moe_up", {e, i, h},
                  layoutOf(gateUp), gateUp);
  else
    addLayerParam("experts_gate_up", experts + "gate_up_proj", "moe_gate_up",
                  nn ? SmallVector<int64_t>{e, h, 2 * i}
                     : SmallVector<int64_t>{e, 2 * i, h},
                  layoutOf(gateUp), gateUp);
  if (moe.expertBias)
    addLayerParam("experts_gate_up_bias", experts + "gate_up_proj_bias",
                  "moe_gate_up", {e, 2 * i});
  addLayerParam("experts_down", experts + "down_proj", "moe_down",
                nn ? SmallVector<int64_t>{e, i, h}
                   : SmallVector<int64_t>{e, h, i},
                layoutOf(down), down);
  if (moe.expertBias)
    addLayerParam("experts_down_bias", experts + "down_proj_bias", "moe_down",
                  {e, h});
}

Value ModelBuilder::rope(Value x, Value positions, const RopeSpec &r) {
  static const std::map<std::string, RopeKind> kinds = {
      {"default", RopeKind::plain},
      {"linear", RopeKind::linear},
      {"llama3", RopeKind::llama3},
      {"yarn", RopeKind::yarn},
      {"longrope", RopeKind::longrope}};
  RopeScalingAttr scaling;
  RopeKind kind = kinds.at(r.type);
  if (kind != RopeKind::plain || r.attentionFactor != 1.0) {
    auto f64Array = [&](const std::vector<double> &v) {
      return v.empty() ? DenseF64ArrayAttr() : b.getDenseF64ArrayAttr(v);
    };
    scaling = RopeScalingAttr::get(
        &ctx, kind, APFloat(r.factor), APFloat(r.lowFreqFactor),
        APFloat(r.highFreqFactor), r.original, APFloat(r.betaFast),
        APFloat(r.betaSlow), r.truncate, APFloat(r.attentionFactor),
        f64Array(r.shortFactor), f64Array(r.longFactor));
  }
  return RopeOp::create(b, loc, x.getType(), x, positions,
                        b.getF64FloatAttr(r.theta),
                        b.getI64IntegerAttr(r.rotaryDim), scaling,
                        r.interleaved ? b.getUnitAttr() : UnitAttr());
}

/// HF's DeepseekV3Attention: q = [nope | rope] per head; the latent is
/// normalised (eps 1e-6, the RMSNorm class default, not rms_norm_eps) and
/// expanded to per-head [k nope | v]; the one rotary key is shared by all
/// heads. Attention runs on q·k heads of nope + rope with values of v_dim.
Value ModelBuilder::mlaAttention(Value x, ValueRange w, Value positions,
                                 const LayerSpec &layer, const MlaSpec &mla) {
  int64_t heads = spec.numHeads, dn = mla.nopeDim, dr = mla.ropeDim,
          dv = mla.vDim, kvl = mla.kvLoraRank;
  constexpr double kLatentEps = 1e-6;
  Value q =
      mla.qLoraRank
          ? matmul(rmsnorm(matmul(x, param(w, "q_a"), param(w, "q_a_bias")),
                           param(w, "q_a_norm"), kLatentEps),
                   param(w, "q_b"))
          : matmul(x, param(w, "q"));
  auto qs =
      SplitOp::create(b, loc, TypeRange{act({heads, dn}), act({heads, dr})},
                      reshape(q, {heads, dn + dr}), b.getI64IntegerAttr(3));
  Value kva = matmul(x, param(w, "kv_a"), param(w, "kv_a_bias"));
  auto kvs = SplitOp::create(b, loc, TypeRange{act({kvl}), act({dr})}, kva,
                             b.getI64IntegerAttr(2));
  Value latent = rmsnorm(kvs.getResult(0), param(w, "kv_a_norm"), kLatentEps);
  Value kv = reshape(matmul(latent, param(w, "kv_b")), {heads, dn + dv});
  auto kvSplit =
      SplitOp::create(b, loc, TypeRange{act({heads, dn}), act({heads, dv})}, kv,
                      b.getI64IntegerAttr(3));
  Value qRot = qs.getResult(1), kRot = reshape(kvs.getResult(1), {1, dr});
  if (layer.rope) {
    qRot = rope(qRot, positions, *layer.rope);
    kRot = rope(kRot, positions, *layer.rope);
  }
  kRot =
      ExpandOp::create(b, loc, act({heads, dr}), kRot, b.getI64IntegerAttr(2));
  Value qFull = ConcatOp::create(b, loc, act({heads, dn + dr}),
                                 ValueRange{qs.getResult(0), qRot},
                                 b.getI64IntegerAttr(3));
  Value kFull = ConcatOp::create(b, loc, act({heads, dn + dr}),
                                 ValueRange{kvSplit.getResult(0), kRot},
                                 b.getI64IntegerAttr(3));
  IntegerAttr window;
  if (layer.slidingWindow)
    window = b.getI64IntegerAttr(*layer.slidingWindow);
  Value a = AttentionOp::create(
      b, loc, act({heads, dv}), qFull, kFull, kvSplit.getResult(1), Value(),
      docStart, b.getF64FloatAttr(spec.attentionScale),
      /*causal=*/b.getUnitAttr(), window, FloatAttr());
  return matmul(reshape(a, {heads * dv}), param(w, "o"), param(w, "o_bias"));
}

Value ModelBuilder::attention(Value x, ValueRange w, Value positions,
                              const LayerSpec &layer) {
  if (spec.mla)
    return mlaAttention(x, w, positions, layer, *spec.mla);
  int64_t d = spec.headDim, hq = spec.numHeads, hkv = spec.numKvHeads;
  Value q, k, v;
  if (spec.fusedQkv) {
    // Phi-3: one projection, then q | k | v along the features.
    Value qkv = matmul(x, param(w, "qkv"));
    auto split = SplitOp::create(
        b, loc, TypeRange{act({hq * d}), act({hkv * d}), act({hkv * d})}, qkv,
        b.getI64IntegerAttr(2));
    q = split.getResult(0);
    k = split.getResult(1);
    v = split.getResult(2);
  } else {
    q = matmul(x, param(w, "q"), param(w, "q_bias"));
    k = matmul(x, param(w, "k"), param(w, "k_bias"));
    v = matmul(x, param(w, "v"), param(w, "v_bias"));
  }
  if (spec.mup)
    k = scaled(k, spec.mup->key);
  Value outputGate;
  if (spec.gatedAttention) {
    // Qwen3-Next: per head [query | gate]; the gate scales the output.
    auto split =
        SplitOp::create(b, loc, TypeRange{act({hq, d}), act({hq, d})},
                        reshape(q, {hq, 2 * d}), b.getI64IntegerAttr(3));
    q = split.getResult(0);
    outputGate = split.getResult(1);
  }
  q = reshape(q, {hq, d});
  k = reshape(k, {hkv, d});
  v = reshape(v, {hkv, d});
  if (spec.qkNorm != QkNorm::none) {
    bool perHead = spec.qkNorm == QkNorm::perHead;
    auto statOf = [&](int64_t heads) {
      return perHead ? stat({kDyn, kDyn, heads}) : stat({kDyn, kDyn});
    };
    auto norm = QkNormOp::create(
        b, loc, q.getType(), k.getType(), statOf(hq), statOf(hkv), q, k,
        param(w, "q_norm"), param(w, "k_norm"),
        b.getF64FloatAttr(spec.rmsNormEps),
        QkNormModeAttr::get(&ctx,
                            perHead ? QkNormMode::per_head : QkNormMode::whole),
        unitOffset());
    q = norm.getQOut();
    k = norm.getKOut();
  }
  if (layer.rope) {
    q = rope(q, positions, *layer.rope);
    k = rope(k, positions, *layer.rope);
  }
  IntegerAttr window;
  if (layer.slidingWindow)
    window = b.getI64IntegerAttr(*layer.slidingWindow);
  FloatAttr softcap;
  if (spec.attnSoftcap)
    softcap = b.getF64FloatAttr(*spec.attnSoftcap);
  Value a =
      AttentionOp::create(b, loc, act({hq, d}), q, k, v, param(w, "sinks"),
                          docStart, b.getF64FloatAttr(spec.attentionScale),
                          /*causal=*/b.getUnitAttr(), window, softcap);
  if (outputGate)
    a = MulOp::create(b, loc, a, SigmoidOp::create(b, loc, outputGate));
  return matmul(reshape(a, {hq * d}), param(w, "o"), param(w, "o_bias"));
}

Value ModelBuilder::mlp(Value x, ValueRange w, const LayerSpec &layer) {
  if (spec.moe && !layer.denseMlp)
    return moeMlp(x, w, *spec.moe);
  return denseMlp(x, w, "");
}

/// HF's sparse MoE block, dropless: route, group the (token, slot) pairs by
/// expert, one GEMM per expert for gate|up and for down, combine weighted.
Value ModelBuilder::moeMlp(Value x, ValueRange w, const MoeSpec &moe) {
  int64_t e = moe.numExperts, k = moe.topK, i = moe.intermediateSize;
  // The experts' width: the hidden size, or the latent one.
  int64_t h = moe.latentSize ? moe.latentSize : spec.hiddenSize;
  Type i64 = IntegerType::get(&ctx, 64);
  auto routing = RankedTensorType::get({kDyn, kDyn, k}, i64);
  auto rowsOf = [&](int64_t n) {
    return RankedTensorType::get({kDyn, n}, elem);
  };
  auto layout = TransposeAttr::get(&ctx, moe.transposedExperts ? Transpose::nn
                                                               : Transpose::nt);
  Value logits = matmul(x, param(w, "router"), param(w, "router_bias"));
  MoeRouting kind = moe.topkThenSoftmax ? MoeRouting::topk_softmax
                    : moe.sigmoidScores ? MoeRouting::sigmoid_topk
                                        : MoeRouting::softmax_topk;
  bool grouped = moe.numGroups > 1;
  auto router = MoeRouterOp::create(
      b, loc, stat({kDyn, kDyn, k}), routing, logits,
      param(w, "router_correction_bias"), b.getI64IntegerAttr(k),
      MoeRoutingAttr::get(&ctx, kind),
      moe.normalize ? b.getUnitAttr() : UnitAttr(),
      b.getF64FloatAttr(moe.normalize ? moe.normalizeEps : 0.0),
      b.getF64FloatAttr(moe.routedScale), b.getI64IntegerAttr(moe.numGroups),
      grouped ? b.getI64IntegerAttr(moe.topkGroups) : IntegerAttr(),
      grouped
          ? MoeGroupScoreAttr::get(&ctx, moe.groupMax ? MoeGroupScore::max
                                                      : MoeGroupScore::top2_sum)
          : MoeGroupScoreAttr());
  auto plan =
      MoeRoutePlanOp::create(b, loc, RankedTensorType::get({e + 1}, i64),
                             routing, RankedTensorType::get({kDyn}, i64),
                             router.getIndices(), b.getI64IntegerAttr(e));
  Value xIn = moe.latentSize
                  ? matmul(x, param(w, "moe_fc1"), param(w, "moe_fc1_bias"))
                  : x;
  Value xp = MoeDispatchOp::create(b, loc, rowsOf(h), xIn, plan.getPositions(),
                                   plan.getSources());
  Value activated;
  if (!moe.gatedExperts) {
    // NemotronH: up -> the model's activation, no gate.
    activated = activate(MoeGroupedMatmulOp::create(
        b, loc, rowsOf(i), xp, param(w, "experts_up"), plan.getOffsets(),
        Value(), layout));
  } else {
    Value gu = MoeGroupedMatmulOp::create(
        b, loc, rowsOf(2 * i), xp, param(w, "experts_gate_up"),
        plan.getOffsets(), param(w, "experts_gate_up_bias"), layout);
    if (moe.swigluLimit) {
      // gpt-oss: gate and up interleaved column-wise, clamped.
      activated = ClampedSwigluOp::create(b, loc, rowsOf(i), gu,
                                          b.getF64FloatAttr(*moe.swigluLimit),
                                          b.getF64FloatAttr(moe.swigluAlpha));
    } else {
      // transformers-5 gate_up_proj rows: gate first, then up.
      auto split = SplitOp::create(b, loc, TypeRange{rowsOf(i), rowsOf(i)}, gu,
                                   b.getI64IntegerAttr(1));
      activated =
          MulOp::create(b, loc, SiluOp::create(b, loc, split.getResult(0)),
                        split.getResult(1));
    }
  }
  Value yp = MoeGroupedMatmulOp::create(
      b, loc, rowsOf(h), activated, param(w, "experts_down"), plan.getOffsets(),
      param(w, "experts_down_bias"), layout);
  if (auxLoss)
    layerStats = MoeLoadStatsOp::create(b, loc, stat({2, e}), logits,
                                        router.getIndices());
  Value y = MoeCombineOp::create(b, loc, act({h}), yp, plan.getPositions(),
                                 plan.getSources(), router.getWeights());
  if (moe.latentSize)
    y = matmul(y, param(w, "moe_fc2"), param(w, "moe_fc2_bias"));
  if (moe.sharedExperts) {
    Value shared = denseMlp(x, w, "shared_");
    if (Value gate = param(w, "shared_gate_logit")) {
      // Qwen3-Next: sigmoid(x · w_gate) [.., 1] scales the shared expert.
      Value g = SigmoidOp::create(b, loc, matmul(x, gate));
      shared = MulOp::create(
          b, loc,
          ExpandOp::create(b, loc, shared.getType(), g, b.getI64IntegerAttr(2)),
          shared);
    }
    y = add(y, shared);
  }
  return y;
}

/// HF's Mamba2Mixer (torch path): in_proj to [z | xBC | dt], the causal
/// conv + SiLU over xBC, split into x [H, P], B and C [G, N], the chunked
/// scan (f32 out), the gated norm (gate first unless norm_before_gate),
/// out_proj.
Value ModelBuilder::mambaMixer(Value x, ValueRange w, const MambaSpec &m) {
  int64_t inner = m.innerSize(), c = m.convChannels(), heads = m.numHeads;
  int64_t gn = m.groups * m.stateSize;
  const MupSpec *mup = spec.mup ? &*spec.mup : nullptr;
  if (mup)
    x = scaled(x, mup->ssmIn);
  Value zxbcdt = matmul(x, param(w, "ssm_in"), param(w, "ssm_in_bias"));
  Value z, xbcIn, dt;
  if (mup) {
    // Falcon-H1's mup_vector: one multiplier per [z, x, B, C, dt] segment.
    auto seg = SplitOp::create(b, loc,
                               TypeRange{act({inner}), act({inner}), act({gn}),
                                         act({gn}), act({heads})},
                               zxbcdt, b.getI64IntegerAttr(2));
    SmallVector<Value> p;
    for (auto [i, v] : llvm::enumerate(seg.getResults()))
      p.push_back(scaled(v, mup->ssm[i], /*round=*/true));
    z = p[0];
    xbcIn = ConcatOp::create(b, loc, act({c}), ValueRange{p[1], p[2], p[3]},
                             b.getI64IntegerAttr(2));
    dt = p[4];
  } else {
    auto parts =
        SplitOp::create(b, loc, TypeRange{act({inner}), act({c}), act({heads})},
                        zxbcdt, b.getI64IntegerAttr(2));
    z = parts.getResult(0);
    xbcIn = parts.getResult(1);
    dt = parts.getResult(2);
  }
  Value conv =
      causalConv(xbcIn, param(w, "ssm_conv"), param(w, "ssm_conv_bias"));
  auto xbc =
      SplitOp::create(b, loc, TypeRange{act({inner}), act({gn}), act({gn})},
                      conv, b.getI64IntegerAttr(2));
  Value xHeads = reshape(xbc.getResult(0), {heads, m.headDim});
  Value bGroups = reshape(xbc.getResult(1), {m.groups, m.stateSize});
  Value cGroups = reshape(xbc.getResult(2), {m.groups, m.stateSize});
  auto scan = MambaSsdScanOp::create(
      b, loc, stat({kDyn, kDyn, heads, m.headDim}),
      stat({kDyn, kDyn, heads, m.headDim, m.stateSize}), xHeads, dt,
      param(w, "ssm_a_log"), bGroups, cGroups, param(w, "ssm_d"),
      param(w, "ssm_dt_bias"), docStart, b.getI64IntegerAttr(m.chunkSize),
      b.getF64FloatAttr(m.dtMin), b.getF64FloatAttr(m.dtMax));
  Value y = ReshapeOp::create(b, loc, stat({kDyn, kDyn, inner}), scan.getY());
  Value gated;
  if (m.gatedNorm)
    gated = GatedRmsNormOp::create(
                b, loc, act({inner}), stat({kDyn, kDyn, m.groups}), y, z,
                param(w, "ssm_norm"), b.getI64IntegerAttr(m.groups),
                b.getF64FloatAttr(m.normEps),
                m.normBeforeGate ? b.getUnitAttr() : UnitAttr())
                .getResult();
  else
    gated = SiluGateOp::create(b, loc, act({inner}), y, z);
  Value out = matmul(gated, param(w, "ssm_out"), param(w, "ssm_out_bias"));
  return mup ? scaled(out, mup->ssmOut) : out;
}

/// HF's Qwen3NextGatedDeltaNet (torch path): the in-projections (Qwen3-Next
/// interleaves q, k, v, z per key head and b, a likewise; Qwen3.5 projects
/// each on its own), the causal conv + SiLU over [q | k | v], the chunked
/// gated delta rule (gates and q/k L2 norms inside), the head norm gated by
/// silu(z), out_proj.
Value ModelBuilder::deltaNetMixer(Value x, ValueRange w,
                                  const DeltaNetSpec &n) {
  int64_t hk = n.keyHeads, hv = n.valueHeads, dk = n.keyDim, dv = n.valueDim;
  int64_t kw = n.keyWidth(), vw = n.valueWidth(), per = hv / hk;
  Value q, k, v, z, bGate, aGate;
  if (n.interleavedProjections) {
    // [.., Hk, 2·Dk + 2·(Hv/Hk)·Dv]: per key head q, k, its value heads' v
    // and z (fix_query_key_value_ordering).
    Value qkvz =
        reshape(matmul(x, param(w, "lin_qkvz")), {hk, 2 * dk + 2 * per * dv});
    auto parts =
        SplitOp::create(b, loc,
                        TypeRange{act({hk, dk}), act({hk, dk}),
                                  act({hk, per * dv}), act({hk, per * dv})},
                        qkvz, b.getI64IntegerAttr(3));
    q = reshape(parts.getResult(0), {kw});
    k = reshape(parts.getResult(1), {kw});
    v = reshape(parts.getResult(2), {vw});
    z = reshape(parts.getResult(3), {vw});
    Value ba = reshape(matmul(x, param(w, "lin_ba")), {hk, 2 * per});
    auto gates =
        SplitOp::create(b, loc, TypeRange{act({hk, per}), act({hk, per})}, ba,
                        b.getI64IntegerAttr(3));
    bGate = reshape(gates.getResult(0), {hv});
    aGate = reshape(gates.getResult(1), {hv});
  } else {
    Value qkv = matmul(x, param(w, "lin_qkv"));
    auto parts =
        SplitOp::create(b, loc, TypeRange{act({kw}), act({kw}), act({vw})}, qkv,
                        b.getI64IntegerAttr(2));
    q = parts.getResult(0);
    k = parts.getResult(1);
    v = parts.getResult(2);
    z = matmul(x, param(w, "lin_z"));
    bGate = matmul(x, param(w, "lin_b"));
    aGate = matmul(x, param(w, "lin_a"));
  }
  int64_t c = n.convChannels();
  Value mixed = ConcatOp::create(b, loc, act({c}), ValueRange{q, k, v},
                                 b.getI64IntegerAttr(2));
  Value conv = causalConv(mixed, param(w, "lin_conv"), Value());
  auto qkv = SplitOp::create(b, loc, TypeRange{act({kw}), act({kw}), act({vw})},
                             conv, b.getI64IntegerAttr(2));
  Value qHeads = reshape(qkv.getResult(0), {hk, dk});
  Value kHeads = reshape(qkv.getResult(1), {hk, dk});
  Value vHeads = reshape(qkv.getResult(2), {hv, dv});
  auto rule = GatedDeltaRuleOp::create(
      b, loc, act({hv, dv}), stat({kDyn, kDyn, hv, dk, dv}), qHeads, kHeads,
      vHeads, aGate, bGate, param(w, "lin_a_log"), param(w, "lin_dt_bias"),
      docStart, b.getI64IntegerAttr(n.chunkSize));
  Value normed =
      GatedRmsNormOp::create(b, loc, act({vw}), stat({kDyn, kDyn, hv}),
                             reshape(rule.getY(), {vw}), z,
                             param(w, "lin_norm"), b.getI64IntegerAttr(hv),
                             b.getF64FloatAttr(n.normEps), b.getUnitAttr())
          .getResult();
  return matmul(normed, param(w, "lin_out"));
}

/// down(act(gate(x)) * up(x)) from the roles prefix + gate / up / down
/// (and their biases, when the model has them), or from one fused gate_up
/// projection (Phi-3: its output is [gate | up]); down(act(up(x))) in
/// models without a gate (NemotronH).
Value ModelBuilder::denseMlp(Value x, ValueRange w, StringRef prefix) {
  std::string p = prefix.str();
  auto proj = [&](StringRef role) {
    return matmul(x, param(w, p + role.str()),
                  param(w, p + role.str() + "_bias"));
  };
  Value hidden;
  if (!spec.gatedMlp) {
    hidden = activate(proj("up"));
  } else if (Value gateUp = param(w, p + "gate_up")) {
    int64_t width = cast<RankedTensorType>(gateUp.getType()).getDimSize(0) / 2;
    auto split = SplitOp::create(b, loc, TypeRange{act({width}), act({width})},
                                 matmul(x, gateUp), b.getI64IntegerAttr(2));
    hidden =
        MulOp::create(b, loc, activate(split.getResult(0)), split.getResult(1));
  } else {
    Value gate = proj("gate");
    if (spec.mup)
      gate = scaled(gate, spec.mup->mlpGate);
    Value up = proj("up");
    hidden = MulOp::create(b, loc, activate(gate), up);
  }
  Value down = matmul(hidden, param(w, p + "down"), param(w, p + "down_bias"));
  return spec.mup ? scaled(down, spec.mup->mlpDown) : down;
}

Value ModelBuilder::layerBody(Value h, ValueRange w, Value positions,
                              const LayerSpec &layer) {
  // Falcon-H1: Mamba2 and attention on one norm, summed, then the MLP.
  if (layer.mixer == LayerMixer::attentionMambaMlp) {
    const MupSpec &mup = *spec.mup;
    Value x = rmsnorm(h, param(w, "in_norm"));
    Value m = mambaMixer(x, w, *spec.mamba);
    Value a = scaled(attention(scaled(x, mup.attentionIn), w, positions, layer),
                     mup.attentionOut);
    Value h2 = add(h, add(m, a));
    return add(h2, mlp(rmsnorm(h2, param(w, "post_attn_norm")), w, layer));
  }
  // One mixer behind one norm: h += mixer(norm(h)).
  if (!layer.isDecoderBlock()) {
    Value x = rmsnorm(h, param(w, "mixer_norm"));
    switch (layer.mixer) {
    case LayerMixer::mamba:
      return add(h, mambaMixer(x, w, *spec.mamba));
    case LayerMixer::attention:
      return add(h, attention(x, w, positions, layer));
    case LayerMixer::mlp:
      return add(h, mlp(x, w, layer));
    case LayerMixer::attentionMlp:
    case LayerMixer::attentionMambaMlp:
    case LayerMixer::deltaNetMlp:
      break;
    }
  }
  switch (spec.style) {
  case BlockStyle::preNorm: {
    Value a = mixer(rmsnorm(h, param(w, "in_norm")), w, positions, layer);
    Value h2 = add(h, branch(a));
    return add(h2,
               branch(mlp(rmsnorm(h2, param(w, "post_attn_norm")), w, layer)));
  }
  case BlockStyle::sandwich: {
    Value a = attention(rmsnorm(h, param(w, "in_norm")), w, positions, layer);
    Value h2 = add(h, rmsnorm(a, param(w, "post_attn_norm")));
    Value m = mlp(rmsnorm(h2, param(w, "pre_ff_norm")), w, layer);
    return add(h2, rmsnorm(m, param(w, "post_ff_norm")));
  }
  case BlockStyle::postNorm: {
    Value a = attention(h, w, positions, layer);
    Value h2 = add(h, rmsnorm(a, param(w, "post_attn_norm")));
    return add(h2, rmsnorm(mlp(h2, w, layer), param(w, "post_ff_norm")));
  }
  }
  llvm_unreachable("unknown block style");
}

OwningOpRef<ModuleOp> ModelBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto str = [&](StringRef s) { return b.getStringAttr(s); };
  module->getOperation()->setAttr(
      "tfm.hf",
      b.getDictionaryAttr({
          b.getNamedAttr("architecture", str(spec.architecture)),
          b.getNamedAttr("model_type", str(spec.modelType)),
          b.getNamedAttr("hidden_size", b.getI64IntegerAttr(spec.hiddenSize)),
          b.getNamedAttr("vocab_size", b.getI64IntegerAttr(spec.vocabSize)),
          b.getNamedAttr("num_layers", b.getI64IntegerAttr(spec.numLayers)),
          b.getNamedAttr("tied_embeddings", b.getBoolAttr(spec.tiedEmbeddings)),
      }));
  b.setInsertionPointToEnd(module->getBody());

  // Signature: inputs, then parameters with their HF names.
  int64_t h = spec.hiddenSize, vocab = spec.vocabSize, L = spec.numLayers;
  SmallVector<Type> argTypes = {ids(), ids(), ids()};
  SmallVector<DictionaryAttr> argAttrs(3, b.getDictionaryAttr({}));
  auto addParam = [&](Type type, ParamAttr attr) {
    argTypes.push_back(type);
    argAttrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr(kParamAttrName, attr)));
    return argTypes.size() - 1;
  };
  // A list of names as an ArrayAttr (null when empty).
  auto strings = [&](const std::vector<std::string> &list) {
    return list.empty()
               ? ArrayAttr()
               : b.getStrArrayAttr(llvm::map_to_vector(
                     list, [](const std::string &n) { return StringRef(n); }));
  };
  auto plain = [&](StringRef name, StringRef kind, ArrayAttr tied = {},
                   ArrayAttr sources = {}) {
    return ParamAttr::get(&ctx, name, kind, ParamMapping::direct, sources, 0, 0,
                          /*stacked=*/false, tied, /*frozen=*/false,
                          DenseI64ArrayAttr(), /*buffer=*/false);
  };
  ArrayAttr tied;
  if (spec.tiedEmbeddings)
    tied = b.getStrArrayAttr({"lm_head.weight"});
  size_t embedArg = addParam(
      RankedTensorType::get({vocab, h}, elem),
      plain(names.embed, "embedding", tied, strings(names.embedSources)));
  // Layer kinds: distinct LayerSpecs in order of first use.
  std::vector<const LayerSpec *> kinds;
  SmallVector<int64_t> schedule;
  for (const LayerSpec &layer : spec.layers) {
    auto it =
        llvm::find_if(kinds, [&](const LayerSpec *k) { return *k == layer; });
    schedule.push_back(it - kinds.begin());
    if (it == kinds.end())
      kinds.push_back(&layer);
  }
  // A parameter only some kinds have is stacked over their layers only, and
  // its #tfm.param lists them.
  auto kindsWhere = [&](auto pred) {
    SmallVector<int64_t> ks;
    for (auto [k, kind] : llvm::enumerate(kinds))
      if (pred(*kind))
        ks.push_back(k);
    return ks;
  };
  auto layersWhere = [&](auto pred) {
    SmallVector<int64_t> ls;
    for (auto [l, layer] : llvm::enumerate(spec.layers))
      if (pred(layer))
        ls.push_back(l);
    return ls;
  };
  size_t firstLayerArg = argTypes.size();
  SmallVector<Attribute> weightKinds;
  bool partial = false;
  for (const LayerParam &p : layerParams) {
    auto has = [&](const LayerSpec &l) { return p.inLayer(l); };
    SmallVector<int64_t> layers = layersWhere(has);
    weightKinds.push_back(b.getDenseI64ArrayAttr(kindsWhere(has)));
    bool every = int64_t(layers.size()) == L;
    partial |= !every;
    SmallVector<int64_t> shape{int64_t(layers.size())};
    shape.append(p.shape.begin(), p.shape.end());
    // Older names (under the legacy layer prefix when the family has one),
    // and the same name under that prefix.
    const std::string &sourcePrefix =
        names.legacyLayers.empty() ? names.layers : names.legacyLayers;
    SmallVector<Attribute> sourceNames;
    for (const std::string &src : p.sources)
      sourceNames.push_back(str(sourcePrefix + src));
    if (!names.legacyLayers.empty() && p.mapping == ParamMapping::direct)
      sourceNames.push_back(str(names.legacyLayers + p.suffix));
    ArrayAttr sources =
        sourceNames.empty() ? ArrayAttr() : b.getArrayAttr(sourceNames);
    addParam(RankedTensorType::get(shape,
                                   p.f32Buffer ? Float32Type::get(&ctx) : elem),
             ParamAttr::get(&ctx, names.layers + p.suffix, p.kind, p.mapping,
                            sources, 0, 0,
                            /*stacked=*/true, ArrayAttr(), false,
                            every ? DenseI64ArrayAttr()
                                  : b.getDenseI64ArrayAttr(layers),
                            /*buffer=*/p.f32Buffer));
  }
  size_t normArg = addParam(RankedTensorType::get({h}, elem),
                            plain(names.finalNorm, "norm", ArrayAttr(),
                                  strings(names.finalNormSources)));
  std::optional<size_t> headArg;
  if (!spec.tiedEmbeddings)
    headArg = addParam(RankedTensorType::get({vocab, h}, elem),
                       plain("lm_head.weight", "lm_head"));

  auto logitsType = act({vocab});
  auto lossType = stat({});
  SmallVector<Type> resultTypes{logitsType, lossType};
  if (!withLogits)
    resultTypes.erase(resultTypes.begin());
  auto func = func::FuncOp::create(b, loc, kForwardFuncName,
                                   b.getFunctionType(argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  // MTP layers after the last layer: in checkpoints, not in the model.
  std::vector<std::string> ignored = spec.ignoredPrefixes;
  for (int64_t m = 0; m < spec.mtpLayers; ++m)
    ignored.push_back(substituteLayer(names.layers, L + m));
  if (!ignored.empty()) {
    SmallVector<StringRef> prefixes;
    for (const std::string &n : ignored)
      prefixes.push_back(n);
    func->setAttr(kIgnoredTensorsAttrName, b.getStrArrayAttr(prefixes));
  }
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  Value inputIds = entry->getArgument(kInputIdsArgument),
        positions = entry->getArgument(kPositionsArgument),
        labels = entry->getArgument(kLabelsArgument);

  // Packed documents (positions restarting at 0) attend and scan only
  // within themselves.
  docStart = DocumentStartsOp::create(b, loc, positions);
  Value hidden = EmbeddingOp::create(b, loc, act({h}), inputIds,
                                     entry->getArgument(embedArg));
  if (spec.embeddingScale)
    hidden = scaled(hidden, *spec.embeddingScale, spec.embeddingScaleRounded);

  SmallVector<Value> stacked;
  for (size_t i = 0; i < layerParams.size(); ++i)
    stacked.push_back(entry->getArgument(firstLayerArg + i));
  SmallVector<Attribute> kindNames;
  for (const LayerSpec *k : kinds)
    kindNames.push_back(str(k->kindName()));
  // HF adds the load-balancing loss when output_router_logits is set; its
  // statistics are stacked over the MoE layers.
  auxLoss = spec.moe && spec.moe->outputRouterLogits;
  auto isMoe = [](const LayerSpec &l) { return !l.denseMlp; };
  SmallVector<Type> repeatTypes{hidden.getType()};
  if (auxLoss)
    repeatTypes.push_back(
        stat({int64_t(layersWhere(isMoe).size()), 2, spec.moe->numExperts}));
  ArrayAttr stackedKinds;
  if (auxLoss && partial)
    stackedKinds = b.getArrayAttr({b.getDenseI64ArrayAttr(kindsWhere(isMoe))});
  auto repeat = RepeatOp::create(
      b, loc, repeatTypes, ValueRange{hidden}, stacked, b.getI64IntegerAttr(L),
      kinds.size() > 1 ? b.getDenseI64ArrayAttr(schedule) : DenseI64ArrayAttr(),
      b.getArrayAttr(kindNames), /*reverse=*/UnitAttr(),
      partial ? b.getArrayAttr(weightKinds) : ArrayAttr(), stackedKinds,
      /*first_layer=*/IntegerAttr(), kinds.size());
  for (auto [k, region, kind] : llvm::enumerate(repeat.getKinds(), kinds)) {
    // Carried hidden state, then the slices of this kind's parameters.
    SmallVector<Type> blockTypes{hidden.getType()};
    SmallVector<Location> blockLocs{loc};
    for (unsigned j : repeat.getWeightsOfKind(k)) {
      auto t = cast<RankedTensorType>(stacked[j].getType());
      blockTypes.push_back(
          RankedTensorType::get(t.getShape().drop_front(), t.getElementType()));
      blockLocs.push_back(loc);
    }
    Block *body = b.createBlock(&region, {}, blockTypes, blockLocs);
    SmallVector<Value> w(layerParams.size());
    for (auto [pos, j] : llvm::enumerate(repeat.getWeightsOfKind(k)))
      w[j] = body->getArgument(1 + pos);
    Value out = layerBody(body->getArgument(0), w, positions, *kind);
    SmallVector<Value> yielded{out};
    if (auxLoss && isMoe(*kind))
      yielded.push_back(layerStats);
    YieldOp::create(b, loc, yielded);
  }
  b.setInsertionPointAfter(repeat);

  Value normed = rmsnorm(repeat.getResult(0), entry->getArgument(normArg));
  Value logits =
      matmul(normed, entry->getArgument(headArg ? *headArg : embedArg));
  if (spec.logitsScaling)
    logits = ScaleOp::create(b, loc, logits,
                             b.getF64FloatAttr(1.0 / *spec.logitsScaling));
  if (spec.mup)
    logits = scaled(logits, spec.mup->lmHead);
  if (spec.finalSoftcap)
    logits = SoftcapOp::create(b, loc, logits,
                               b.getF64FloatAttr(*spec.finalSoftcap));
  Value loss = CrossEntropyOp::create(b, loc, lossType, logits, labels,
                                      b.getI64IntegerAttr(-100));
  if (auxLoss) {
    Value aux = MoeAuxLossOp::create(b, loc, lossType, repeat.getResult(1),
                                     b.getI64IntegerAttr(spec.moe->topK));
    loss = AddOp::create(
        b, loc, loss,
        ScaleOp::create(b, loc, aux, b.getF64FloatAttr(spec.moe->auxLossCoef)));
  }
  if (withLogits)
    func::ReturnOp::create(b, loc, ValueRange{logits, loss});
  else
    func::ReturnOp::create(b, loc, ValueRange{loss});
  return module;
}

} // namespace

OwningOpRef<ModuleOp> mlir::tfm::buildModel(MLIRContext &ctx,
                                            const ModelSpec &spec,
                                            Type elementType, bool withLogits) {
  ctx.loadDialect<TfmDialect, func::FuncDialect>();
  return ModelBuilder(ctx, spec, elementType, withLogits).build();
}
