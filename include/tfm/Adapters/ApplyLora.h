//===- ApplyLora.h - LoRA adapters as an IR rewrite -------------*- C++ -*-===//
//
// Rewrites the model function so each targeted projection y = x·Wᵀ becomes
//
//   y = x·Wᵀ + s · (x·Aᵀ)·Bᵀ          A [r, in], B [out, r], s = alpha/r
//
// PEFT's lora.Linear product (tfm scales the r-wide x·Aᵀ, PEFT the result:
// the same up to rounding, for r/out of the traffic), and each
// targeted stacked expert weight (target_parameters) gets the same per
// expert on the same routing, y_e + s·(x_e·A_eᵀ)·B_eᵀ, as grouped GEMMs.
// A and B are new parameter arguments named as PEFT saves them
// (`base_model.model.<module>.lora_A.weight`; PEFT's expert-major A and
// rank-major B layouts for experts), stacked over layers like the weight
// they adapt, and every other parameter is frozen, so the activity analysis
// of tfm-autodiff gives the base weights no gradient work. The delta
// W + s·B·A is never formed.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ADAPTERS_APPLYLORA_H
#define TFM_ADAPTERS_APPLYLORA_H

#include "tfm/Adapters/LoraConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>

namespace mlir::tfm {

/// `#tfm.param` kinds of the adapter tensors.
inline constexpr llvm::StringLiteral kLoraAKind = "lora_A";
inline constexpr llvm::StringLiteral kLoraBKind = "lora_B";

/// The PEFT name of an adapter tensor of `module` ("lora_A" / "lora_B").
std::string peftAdapterName(llvm::StringRef module, llvm::StringRef which);

/// One adapted weight parameter and its adapter parameters, by their
/// weight-map names (the {layer} templates of stacked ones) and the HF
/// layer of their first slice (-1: not stacked); a weight whose layers run
/// in several scans is one parameter per scan.
struct LoraTarget {
  int64_t firstLayer = -1;
  /// The weight: [out, in]; experts [E, out, in], or [E, in, out] when
  /// `transposed` (gpt-oss).
  std::string weight;
  /// A [r, in] and B [out, r]; per expert [E, r, in] and [E, out, r].
  std::string a, b;
  /// The number of experts (0: a dense projection).
  int64_t experts = 0;
  bool transposed = false;
  int64_t rank = 0;
  double scaling = 1;
};

/// One adapter tensor as a PEFT adapter file holds it (one layer's).
struct LoraTensor {
  std::string name;
  /// [r, in] / [out, r]; experts: [E·r, in] / [out, r·E].
  std::vector<int64_t> shape;
  bool isA;
  bool experts;
};

/// What applyLora adapted.
struct LoraSummary {
  /// The configuration applied.
  LoraConfig config;
  /// Per parameter kind (attn_q, mlp_down, ...): adapted and all linear
  /// projections, counted per layer.
  std::map<std::string, std::pair<int64_t, int64_t>> byKind;
  int64_t adapted = 0, projections = 0;
  /// Elements of the adapter tensors (the trained parameters).
  int64_t adapterParameters = 0;
  /// The distinct ranks used (rank_pattern can vary them).
  std::map<int64_t, int64_t> modulesByRank;
  /// The leaf names (q_proj, ...) of the modules target_modules adapted,
  /// for adapter_config.json.
  std::vector<std::string> leafNames;
  /// Every adapted weight (for merging).
  std::vector<LoraTarget> targets;
  /// Every adapter tensor the adapter file holds, per layer, in argument
  /// order (the weight map may pack them afterwards: tfm-fuse).
  std::vector<LoraTensor> tensors;

  /// "LoRA r=16 on 112 of 112 projections (attn_q 16/16, ...)".
  std::string describe() const;
};

/// Applies `config` to the model function `forward` (HF-literal IR, before
/// fusion). Errors name the module, the option or the parameter: a target
/// that matches nothing, a module PEFT refuses (the output head, the
/// embeddings), a stacked weight targeted on only some of its layers.
llvm::Expected<LoraSummary> applyLora(func::FuncOp forward,
                                      const LoraConfig &config);

} // namespace mlir::tfm

#endif // TFM_ADAPTERS_APPLYLORA_H
