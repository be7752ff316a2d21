//===- Passes.td - tfm adapter passes ----------------------*- tablegen -*-===//

#ifndef TFM_ADAPTERS_PASSES
#define TFM_ADAPTERS_PASSES

include "mlir/Pass/PassBase.td"

def TfmApplyLoraPass : Pass<"tfm-apply-lora", "ModuleOp"> {
  let summary = "Add LoRA adapters to the targeted projections of a model";
  let description = [{
    On the HF-literal model function `@F` (option `func`, default
    `forward`; run it before fusion), every projection `y = x·Wᵀ` whose HF
    module PEFT's rules select becomes

      y = x·Wᵀ + (s·(x·Aᵀ))·Bᵀ,   s = lora_alpha / r  (use-rslora: / √r)

    (the scale on the r-wide `x·Aᵀ`, not on the out-wide result as PEFT
    writes it: the same product, for r/out of the traffic) with `A [r, in]` and `B [out, r]` new parameter arguments named as PEFT
    saves them (`base_model.model.<module>.lora_A.weight`, kinds `lora_A`
    and `lora_B`), stacked over layers and passed into `tfm.repeat` beside
    the weight they adapt. Every other parameter is marked `frozen`. The
    merged weight `W + s·B·A` is never formed.

    Targets follow PEFT's `target_modules`: names (a module equal to one or
    ending in `.name`), a regular expression the whole module name must
    match (`target-regex`), or `all-linear` (every projection but the output
    head); or an `adapter_config.json` as PEFT writes it (`config`), whose
    `rank_pattern`, `alpha_pattern` and `exclude_modules` apply too.

    `target-parameters` names parameters as PEFT's `target_parameters`
    does (a name or a `.name` suffix): a stacked expert weight
    (`mlp.experts.gate_up_proj`, `down_proj`, gpt-oss's `[E, in, out]`
    layout too) gets the factored grouped form on the same routing,

      y_e = x_e·W_e + s·(x_e·A_eᵀ)·B_eᵀ,   A [E, r, in], B [E, out, r],

    as two more `tfm.moe_grouped_matmul`s (PEFT's expert-major `lora_A` and
    rank-major `lora_B` are the `expert_major` / `rank_major` weight-map
    layouts, with PEFT's `.base_layer` nesting when several parameters of
    one module are targeted); a projection's 2-D weight gets the dense form.
    On the MoE families transformers 5 stacks, PEFT's rewrite of the v4
    names (`gate_proj`, `up_proj`, `down_proj`, `gate`; Mixtral's `w1`,
    `w3`, `w2`) into those targets applies first.

    A target that selects nothing, the embeddings, the output head, Mamba's
    `out_proj` and `conv1d`, and a stacked weight selected on only some
    layers are errors; `all-linear` takes what transformers holds as
    `nn.Linear` (not the routers, not Mamba's `out_proj`).
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"forward\"",
           "The model function">,
    Option<"rank", "r", "int64_t", "8", "LoRA rank">,
    Option<"alpha", "alpha", "double", "8", "lora_alpha">,
    Option<"useRslora", "use-rslora", "bool", "false",
           "Scale by alpha / sqrt(r)">,
    ListOption<"targetModules", "target-modules", "std::string",
               "Module names (or `all-linear`)">,
    ListOption<"targetParameters", "target-parameters", "std::string",
               "Parameter names or suffixes (stacked experts)">,
    Option<"targetRegex", "target-regex", "std::string", "\"\"",
           "A regular expression over whole module names">,
    Option<"configPath", "config", "std::string", "\"\"",
           "An adapter_config.json (or its folder) instead of the options">,
  ];
  let dependentDialects = ["::mlir::tfm::TfmDialect"];
}

#endif // TFM_ADAPTERS_PASSES
