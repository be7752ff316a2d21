// What tfm-apply-lora refuses, as PEFT does, naming the module or option.
// RUN: not tfm-opt %s --tfm-apply-lora="target-modules=o_proj" 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: tfm-apply-lora: LoRA target_modules entry 'o_proj' matches no linear projection of the model
// RUN: not tfm-opt %s --tfm-apply-lora="target-modules=q_proj,o_proj" 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not tfm-opt %s --tfm-apply-lora="target-modules=lm_head" 2>&1 | FileCheck %s --check-prefix=HEAD
// HEAD: error: tfm-apply-lora: LoRA target 'lm_head': the output head is not supported as a LoRA target
// RUN: not tfm-opt %s --tfm-apply-lora="target-modules=embed_tokens" 2>&1 | FileCheck %s --check-prefix=EMB
// EMB: error: tfm-apply-lora: LoRA target 'model.embed_tokens': embeddings are not supported as LoRA targets
// RUN: not tfm-opt %s --tfm-apply-lora="target-regex=nothing" 2>&1 | FileCheck %s --check-prefix=REGEX
// REGEX: error: tfm-apply-lora: LoRA target_modules 'nothing' matches no linear projection of the model
// RUN: not tfm-opt %s --tfm-apply-lora="r=0 target-modules=q_proj" 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: tfm-apply-lora: --lora-r 0: expected a positive rank
// RUN: not tfm-opt %s --tfm-apply-lora 2>&1 | FileCheck %s --check-prefix=NOTARGET
// NOTARGET: error: tfm-apply-lora: LoRA needs a target
// RUN: not tfm-opt %s --tfm-apply-lora="target-regex=(" 2>&1 | FileCheck %s --check-prefix=BADRE
// BADRE: error: tfm-apply-lora: --lora-target-modules '(': not a regular expression
func.func @forward(%ids: tensor<?x?xi64>, %labels: tensor<?x?xi64>,
    %e: tensor<16x8xf32> {tfm.param = #tfm.param<name = "model.embed_tokens.weight", kind = "embedding">},
    %wq: tensor<2x8x8xf32> {tfm.param = #tfm.param<name = "model.layers.{layer}.self_attn.q_proj.weight", kind = "attn_q", stacked = true>},
    %head: tensor<16x8xf32> {tfm.param = #tfm.param<name = "lm_head.weight", kind = "lm_head">})
    -> (tensor<?x?x16xf32>, tensor<f32>) {
  %h = tfm.embedding %ids, %e : (tensor<?x?xi64>, tensor<16x8xf32>) -> tensor<?x?x8xf32>
  %r = tfm.repeat (%h : tensor<?x?x8xf32>) layers(%wq : tensor<2x8x8xf32>) {num_layers = 2 : i64} -> tensor<?x?x8xf32> {
  ^bb0(%x: tensor<?x?x8xf32>, %q: tensor<8x8xf32>):
    %yq = tfm.matmul %x, %q {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
    tfm.yield %yq : tensor<?x?x8xf32>
  }
  %logits = tfm.matmul %r, %head {transpose = #tfm.transpose<nt>} : (tensor<?x?x8xf32>, tensor<16x8xf32>) -> tensor<?x?x16xf32>
  %loss = tfm.cross_entropy %logits, %labels : (tensor<?x?x16xf32>, tensor<?x?xi64>) -> tensor<f32>
  return %logits, %loss : tensor<?x?x16xf32>, tensor<f32>
}
