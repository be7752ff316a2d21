//===- AdapterFiles.h - LoRA adapters on disk, PEFT's way ------*- C++ -*-===//
//
// An adapter folder holds adapter_config.json and adapter_model.safetensors
// under PEFT's tensor names (base_model.model.<module>.lora_A.weight), so
// PeftModel.from_pretrained loads what tfm saves and tfm continues what PEFT
// saved. The adapter's tensors join the base checkpoint's, and the weight
// map binds both (the stacked {layer} templates of the adapter arguments
// name each layer's tensor).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_ADAPTERFILES_H
#define TFM_ENGINE_ADAPTERFILES_H

#include "tfm/Adapters/ApplyLora.h"
#include "tfm/Runtime/Safetensors.h"
#include "tfm/Runtime/WeightBinder.h"

namespace mlir::tfm {

/// Fresh tensors for the adapter tensors `lora` lists, as PEFT's
/// default init makes them: A uniform in ±1/√in (kaiming_uniform_ with
/// a=√5), B zero, so the adapted model starts equal to its base. `seed`
/// makes A reproducible (it is not torch's generator).
llvm::Expected<Checkpoint> initLoraAdapter(const LoraSummary &lora,
                                           uint64_t seed);

/// `dir`/adapter_model.safetensors, checked against the adapter tensors `lora`
/// lists: every tensor is one of them and has its shape (an error
/// names the tensor, what it expected, and an older PEFT's expert layout
/// where that explains it).
llvm::Expected<Checkpoint> openLoraAdapter(llvm::StringRef dir,
                                           const LoraSummary &lora);

/// Adds the adapter tensors `lora` lists to `checkpoint`, so that binding it
/// binds base and adapter: `dir`'s (a PEFT adapter folder, openLoraAdapter), or
/// fresh ones (initLoraAdapter with `seed`) when `dir` is empty.
llvm::Error addLoraAdapter(Checkpoint &checkpoint, const LoraSummary &lora,
                           llvm::StringRef dir, uint64_t seed);

/// Writes `dir`/adapter_config.json (`summary.config`) and
/// adapter_model.safetensors (the adapter tensors among `tensors`, f32),
/// each atomically. The config names the adapted modules by their leaf
/// names (what PEFT resolves all-linear to).
llvm::Error saveLoraAdapter(llvm::StringRef dir, const LoraSummary &summary,
                            const std::vector<NamedGradient> &tensors);

/// Whether `name` is an adapter tensor's (PEFT's lora_A / lora_B names).
bool isLoraTensorName(llvm::StringRef name);

} // namespace mlir::tfm

#endif // TFM_ENGINE_ADAPTERFILES_H
