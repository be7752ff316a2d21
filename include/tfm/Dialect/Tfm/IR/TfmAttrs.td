//===- TfmAttrs.td - tfm attributes and enums --------------*- tablegen -*-===//

#ifndef TFM_ATTRS
#define TFM_ATTRS

include "tfm/Dialect/Tfm/IR/TfmDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tfm_TransposeNN : I32EnumAttrCase<"nn", 0>;
def Tfm_TransposeNT : I32EnumAttrCase<"nt", 1>;
def Tfm_Transpose : I32EnumAttr<"Transpose",
    "operand layout of tfm.matmul: nn is [K,N], nt is [N,K] (HF Linear)",
    [Tfm_TransposeNN, Tfm_TransposeNT]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_TransposeAttr : EnumAttr<Tfm_Dialect, Tfm_Transpose, "transpose"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_RopeDefault : I32EnumAttrCase<"plain", 0>;
def Tfm_RopeLinear : I32EnumAttrCase<"linear", 1>;
def Tfm_RopeLlama3 : I32EnumAttrCase<"llama3", 2>;
def Tfm_RopeYarn : I32EnumAttrCase<"yarn", 3>;
def Tfm_RopeLongrope : I32EnumAttrCase<"longrope", 4>;
def Tfm_RopeKind : I32EnumAttr<"RopeKind", "RoPE frequency variant",
    [Tfm_RopeDefault, Tfm_RopeLinear, Tfm_RopeLlama3, Tfm_RopeYarn,
     Tfm_RopeLongrope]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}

def Tfm_QkNormPerHead : I32EnumAttrCase<"per_head", 0>;
def Tfm_QkNormWhole : I32EnumAttrCase<"whole", 1>;
def Tfm_QkNormMode : I32EnumAttr<"QkNormMode",
    "per_head: RMSNorm over head_dim (Qwen3, Gemma3); whole: over all heads "
    "of a token (OLMo2)", [Tfm_QkNormPerHead, Tfm_QkNormWhole]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_QkNormModeAttr : EnumAttr<Tfm_Dialect, Tfm_QkNormMode, "qk_norm_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_MoeSoftmaxTopk : I32EnumAttrCase<"softmax_topk", 0>;
def Tfm_MoeTopkSoftmax : I32EnumAttrCase<"topk_softmax", 1>;
def Tfm_MoeSigmoidTopk : I32EnumAttrCase<"sigmoid_topk", 2>;
def Tfm_MoeRouting : I32EnumAttr<"MoeRouting",
    "how tfm.moe_router turns router logits into top-k weights: "
    "softmax_topk (softmax over the experts, then top-k: Mixtral, Qwen3-MoE, "
    "OLMoE, Granite-MoE), topk_softmax (top-k of the logits, then softmax "
    "over the k: gpt-oss), sigmoid_topk (sigmoid scores, then top-k)",
    [Tfm_MoeSoftmaxTopk, Tfm_MoeTopkSoftmax, Tfm_MoeSigmoidTopk]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_MoeRoutingAttr : EnumAttr<Tfm_Dialect, Tfm_MoeRouting, "moe_routing"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_MoeGroupTop2Sum : I32EnumAttrCase<"top2_sum", 0>;
def Tfm_MoeGroupMax : I32EnumAttrCase<"max", 1>;
def Tfm_MoeGroupScore : I32EnumAttr<"MoeGroupScore",
    "how tfm.moe_router scores an expert group for group-limited routing: "
    "top2_sum (the sum of its two largest selection scores: DeepSeek-V3, "
    "GLM-4.5), max (its largest score: DeepSeek-V2 group_limited_greedy)",
    [Tfm_MoeGroupTop2Sum, Tfm_MoeGroupMax]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}
def Tfm_MoeGroupScoreAttr : EnumAttr<Tfm_Dialect, Tfm_MoeGroupScore,
                                     "moe_group_score"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_MapDirect : I32EnumAttrCase<"direct", 0>;
def Tfm_MapFuse : I32EnumAttrCase<"fuse", 1>;
def Tfm_MapSplit : I32EnumAttrCase<"split", 2>;
def Tfm_MapTranspose : I32EnumAttrCase<"transpose", 3>;
def Tfm_MapStackedExperts : I32EnumAttrCase<"stacked_experts", 4>;
def Tfm_MapExpertMajor : I32EnumAttrCase<"expert_major", 5>;
def Tfm_MapRankMajor : I32EnumAttrCase<"rank_major", 6>;
def Tfm_ParamMapping : I32EnumAttr<"ParamMapping",
    "how a parameter is built from Hugging Face checkpoint tensors",
    [Tfm_MapDirect, Tfm_MapFuse, Tfm_MapSplit, Tfm_MapTranspose,
     Tfm_MapStackedExperts, Tfm_MapExpertMajor, Tfm_MapRankMajor]> {
  let cppNamespace = "::mlir::tfm";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attribute parameters
//===----------------------------------------------------------------------===//

// An f64 scalar, printed exactly (shortest round-trip form).
class Tfm_F64Parameter<string desc, string default>
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
      double v;
      if ($_parser.parseFloat(v))
        return ::mlir::failure();
      return ::llvm::APFloat(v);
    }() }];
  let printer = "$_printer.printFloat($_self)";
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let defaultValue = "::llvm::APFloat(" # default # ")";
}

//===----------------------------------------------------------------------===//
// #tfm.rope_scaling
//===----------------------------------------------------------------------===//

def Tfm_RopeScalingAttr : Tfm_Attr<"RopeScaling", "rope_scaling"> {
  let summary = "RoPE frequency scaling (HF rope_scaling / rope_parameters)";
  let description = [{
    The inverse-frequency transform applied to `theta^(-2i/rotary_dim)`:

    - `plain`: none.
    - `linear`: inv_freq / factor.
    - `llama3`: wavelengths above `original / low_freq_factor` divided by
      `factor`, below `original / high_freq_factor` kept, smooth in between.
    - `yarn`: NTK-by-parts between `beta_fast` and `beta_slow` with
      `original` and `factor` (`truncate` rounds the correction range).
    - `longrope`: inv_freq divided per dimension by `short_factor`, or by
      `long_factor` when the sequence is longer than `original`.

    `attention_factor` multiplies cos and sin (yarn and longrope compute it
    from the config; the importer stores the value HF uses).

    ```mlir
    #tfm.rope_scaling<kind = llama3, factor = 3.2e+01, low_freq_factor = 1.0,
                      high_freq_factor = 4.0, original = 8192>
    ```
  }];
  let parameters = (ins
    EnumParameter<Tfm_RopeKind>:$kind,
    Tfm_F64Parameter<"scaling factor", "1.0">:$factor,
    Tfm_F64Parameter<"llama3 low frequency factor", "1.0">:$low_freq_factor,
    Tfm_F64Parameter<"llama3 high frequency factor", "4.0">:$high_freq_factor,
    DefaultValuedParameter<"int64_t", "0",
        "original_max_position_embeddings">:$original,
    Tfm_F64Parameter<"yarn beta_fast", "32.0">:$beta_fast,
    Tfm_F64Parameter<"yarn beta_slow", "1.0">:$beta_slow,
    DefaultValuedParameter<"bool", "true", "yarn truncate">:$truncate,
    Tfm_F64Parameter<"multiplier of cos and sin", "1.0">:$attention_factor,
    OptionalParameter<"::mlir::DenseF64ArrayAttr",
        "longrope short factors">:$short_factor,
    OptionalParameter<"::mlir::DenseF64ArrayAttr",
        "longrope long factors">:$long_factor);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// #tfm.param
//===----------------------------------------------------------------------===//

def Tfm_ParamAttr : Tfm_Attr<"Param", "param"> {
  let summary = "a model parameter and the Hugging Face tensors it comes from";
  let description = [{
    Attached to a function argument as `tfm.param`, it is the weight map: a
    runner binds checkpoint tensors to arguments from these attributes alone.

    - `name`: the HF tensor name; with `stacked`, a template containing
      `{layer}` and the argument has a leading layer dimension.
    - `kind`: the parameter kind used in summaries (`embedding`, `attn_q`,
      `mlp_up`, `norm`, ...); `norm` parameters are excluded from weight decay.
    - `mapping`:
      `direct` (the tensor as stored; `sources`, if any, are older names of
      the same tensor, e.g. HF 4.x hub names, tried when `name` is absent),
      `fuse` (concatenate `sources` along `dim`),
      `split` (the slice of `sources[0]` along `dim` at `offset`, as long as
      the argument),
      `transpose` (the stored tensor transposed),
      `stacked_experts` (the transformers-5 stacked tensor `name`, e.g.
      `mlp.experts.gate_up_proj [E, 2I, H]`; when the checkpoint has
      per-expert tensors instead, `sources` are their templates with
      `{expert}`, concatenated along `dim` of one expert's slice and stacked
      on a leading expert dimension; a single source without `{expert}` is
      an older name of the whole stacked tensor),
      `expert_major` (an `[E, r, C]` argument stored as the `[E·r, C]`
      tensor `name`: PEFT's `lora_A` of an expert parameter),
      `rank_major` (an `[E, R, r]` argument stored as the `[R, r·E]` tensor
      `name` whose column `k·E + e` is expert `e`'s column `k`: PEFT's
      `lora_B` of an expert parameter). Gradients are written in the layout
      the checkpoint stores.
    - `tied`: other HF names that hold the same tensor (e.g. `lm_head.weight`
      for tied embeddings); counted once.
    - `frozen`: excluded from the gradient.
    - `buffer`: an HF buffer, not a parameter (`register_buffer`, e.g.
      DeepSeek's `e_score_correction_bias`): bound from the checkpoint,
      never given a gradient, and counted apart from the parameters.
    - `layers`: with `stacked`, the HF layer of each slice when the
      parameter covers only some layers (a `tfm.repeat` weight of some
      layer kinds, e.g. the experts of a model whose first layers are
      dense); absent, slice `i` is layer `i`.

    ```mlir
    #tfm.param<name = "model.layers.{layer}.input_layernorm.weight",
               kind = "norm", stacked = true>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"HF tensor name (template)">:$name,
    StringRefParameter<"parameter kind", "\"\"">:$kind,
    DefaultValuedParameter<"::mlir::tfm::ParamMapping",
        "::mlir::tfm::ParamMapping::direct", "mapping">:$mapping,
    OptionalParameter<"::mlir::ArrayAttr", "source tensor names">:$sources,
    DefaultValuedParameter<"int64_t", "0", "fuse/split dimension">:$dim,
    DefaultValuedParameter<"int64_t", "0", "split offset">:$offset,
    DefaultValuedParameter<"bool", "false",
        "stacked on a leading layer dimension">:$stacked,
    OptionalParameter<"::mlir::ArrayAttr", "tied HF names">:$tied,
    DefaultValuedParameter<"bool", "false", "excluded from gradients">:$frozen,
    OptionalParameter<"::mlir::DenseI64ArrayAttr",
        "HF layer of each slice">:$layers,
    DefaultValuedParameter<"bool", "false",
        "an HF buffer, not a parameter">:$buffer);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The HF name of slice `slice` of a stacked parameter: the template
    /// with its HF layer (`layers[slice]`, or `slice`).
    std::string nameForLayer(int64_t slice) const;
    /// Whether the parameter gets a gradient.
    bool isTrainable() const { return !getFrozen() && !getBuffer(); }
    /// The same parameter, marked frozen.
    ParamAttr asFrozen() const;
    /// The HF layer of slice `slice`.
    int64_t hfLayer(int64_t slice) const {
      return getLayers() ? getLayers()[slice] : slice;
    }
  }];
}

#endif // TFM_ATTRS
