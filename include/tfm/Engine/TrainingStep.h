//===- TrainingStep.h - the compiled training step of an HF model -*- C++
//-*-===//
//
// The library API every front end sits on (tfm-run, the Python package, the
// C API): import a model from its config, compile its step for a device and
// precision, bind a checkpoint through the weight map, run token batches,
// and get logits, the loss and gradients keyed by HF tensor name.
//
//   llvm::Expected<ModelSpec> spec = readHFConfig(dir);        // tfm/Import
//   auto step = TrainingStep::create(*spec, options);          // import
//   llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(dir);
//   llvm::Error e = (*step)->bind(std::move(*checkpoint));     // weights
//   e = (*step)->compile();                 // autodiff, lower, JIT (optional:
//                                           // the first run() compiles)
//   llvm::Expected<StepResult> r = (*step)->run(batch);  // logits, loss, grads
//
// Every Expected is checked and every Error handled in real code; each one
// names the file, field, tensor or op at fault.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_TRAININGSTEP_H
#define TFM_ENGINE_TRAININGSTEP_H

#include "tfm/Adapters/ApplyLora.h"
#include "tfm/Engine/CompiledFunction.h"
#include "tfm/Engine/TokenFile.h"
#include "tfm/Import/ModelSpec.h"
#include "tfm/Runtime/Safetensors.h"
#include "tfm/Runtime/WeightBinder.h"

#include <memory>
#include <optional>

namespace mlir::tfm {

/// Parameter and activation type of the compiled step (statistics and the
/// loss stay f32).
enum class Precision { f32, bf16 };
llvm::StringRef precisionName(Precision precision);
/// "f32" or "bf16"; an error names the accepted values.
llvm::Expected<Precision> parsePrecision(llvm::StringRef name);

struct StepOptions {
  CompileOptions compile;
  Precision precision = Precision::f32;
  /// Also derive and run the backward (forward_vjp): every parameter's
  /// gradient of the loss. Needs labels in each batch.
  bool gradients = false;
  /// Run tfm-fuse on the imported model before anything else; the fused
  /// parameters bind and unbind through their HF sources.
  bool fuse = true;
  /// Return the logits; without, the step is the loss (and gradients) only,
  /// and tfm-fuse never forms the [B*T, V] logits.
  bool logits = true;
  /// The recompute budget of the backward (tfm-plan-recompute's `budget`:
  /// save-all, selective, full, a fraction or a size per token and layer).
  /// Any plan gives the same numbers; it trades memory for FLOPs.
  std::string recompute = "save-all";
  /// Parameters to freeze (no gradient, no update): a regular expression
  /// matched against HF tensor names. It must match every tensor a compiled
  /// parameter holds (each layer of a stacked one, each source of a fused
  /// one) or none. Empty: nothing frozen.
  std::string freeze;
  /// LoRA adapters on the projections the configuration targets
  /// (tfm-apply-lora, before fusion): the adapters are the only trained
  /// parameters, and bind() needs their tensors beside the base model's
  /// (AdapterFiles.h).
  std::optional<LoraConfig> lora;
  /// Return gradients under checkpoint names too (StepResult::gradients);
  /// a training loop needs only the compiled ones.
  bool nameGradients = true;
};

/// What one step returns.
struct StepResult {
  /// [batch, seq, vocab], f32 (bf16 steps widened).
  HostArray logits;
  /// The mean cross-entropy over counted labels; none without labels.
  std::optional<float> loss;
  /// With StepOptions::gradients: the gradient of every parameter argument
  /// of @forward as the compiled step produced it (stacked over layers,
  /// fused), in argument order.
  std::vector<HostArray> parameterGradients;
  /// The same under checkpoint names (split per layer, unfused, tied ones
  /// under every name the checkpoint stores), in name order.
  std::vector<NamedGradient> gradients;
  /// Wall time of the compiled step itself (not of binding or naming).
  double stepMs = 0;
};

/// The arguments of one call of a step (TrainingStep.cpp).
struct StepArguments;

/// One model's step, compiled once for any batch and sequence length.
class TrainingStep {
public:
  /// Imports `spec` (cheap: one layer of IR per layer kind); nothing is
  /// compiled yet, so a checkpoint can be bound and checked first.
  static llvm::Expected<std::unique_ptr<TrainingStep>>
  create(const ModelSpec &spec, const StepOptions &options);
  ~TrainingStep();

  /// Builds every parameter from `checkpoint` through the weight map (and
  /// rounds it to bf16 for bf16 steps). Errors name the missing, mis-shaped
  /// or unused tensor. The step keeps the checkpoint to name gradients.
  llvm::Error bind(Checkpoint checkpoint);

  /// Derives the backward if asked and compiles for
  /// `options.compile.device` (once; run() calls it when needed).
  llvm::Error compile();

  /// Runs the step on `batch` (ids and labels checked against the
  /// vocabulary). Needs bind() first, and labels when gradients are on.
  /// `lossWeight` is the cotangent of the loss (gradients are those of
  /// lossWeight x loss): a micro-batch's share of the tokens of its step.
  llvm::Expected<StepResult> run(const TokenBatch &batch,
                                 float lossWeight = 1.0f);

  /// The imported module, unlowered: @forward and its weight map. Training
  /// builds its optimizer step from it (in the step's MLIRContext).
  ModuleOp getModel() const;
  /// @forward's argument count, and argument `arg`'s weight map (null for
  /// the token inputs) and shape.
  unsigned getNumArguments() const;
  ParamAttr getParam(unsigned arg) const;
  llvm::ArrayRef<int64_t> getArgumentShape(unsigned arg) const;
  /// The @forward argument of each entry of StepResult::parameterGradients
  /// (valid once compiled).
  llvm::ArrayRef<unsigned> getGradientArguments() const;
  /// The bound value of argument `arg` as f32 (the master weight of a bf16
  /// step). Needs bind().
  llvm::ArrayRef<float> getParameter(unsigned arg) const;
  /// Replaces argument `arg`'s value (rounded again for a bf16 step, and
  /// copied to its resident tensor when there is one); steps retarget()
  /// made share the host value.
  void setParameter(unsigned arg, std::vector<float> value);

  /// Keeps every parameter argument where the compiled step reads it (the
  /// CUDA arena, or host memory for the CPU) from now on, so that runs pass
  /// them without copying. Needs bind(); compiles if needed.
  llvm::Error makeParametersResident();
  /// Argument `arg`'s resident tensor (of its type in @forward; empty
  /// before makeParametersResident).
  const DeviceTensor &getResidentParameter(unsigned arg) const;
  /// Replaces argument `arg`'s resident tensor by `value` (same shape and
  /// type) without a copy. The host value (getParameter) is not updated:
  /// setParameter does that when the caller needs it.
  void setResidentParameter(unsigned arg, DeviceTensor value);

  /// The loss and the gradients of one training run, left where the step
  /// wrote them (the gradients in getGradientArguments() order).
  struct ResidentGradients {
    float loss = 0;
    std::vector<DeviceTensor> gradients;
  };
  /// run() for training: gradients must be on, labels given; nothing but
  /// the loss is copied to the host.
  llvm::Expected<ResidentGradients> runGradients(const TokenBatch &batch,
                                                 float lossWeight);
  /// Bytes the last run copied from the host to the device (the tokens and
  /// scalars once parameters are resident; 0 on the CPU).
  size_t getLastStagedBytes() const;
  /// Every bound parameter and buffer under its checkpoint names, as
  /// bind() read them (split per layer, unfused, tied ones under every
  /// stored name), in name order.
  llvm::Expected<std::vector<NamedGradient>> namedParameters() const;
  /// The same for the @forward arguments `args` only (a copy of their
  /// values).
  llvm::Expected<std::vector<NamedGradient>>
  namedParametersOf(llvm::ArrayRef<unsigned> args) const;
  /// The checkpoint bind() read.
  const Checkpoint &getCheckpoint() const;

  /// The bound parameters as the HF-literal model holds them (before
  /// fusion packed any; with the LoRA adapters): that model, and each
  /// argument's value of its @forward (empty for the token inputs). For
  /// rewriting weights per HF tensor (merging an adapter) whatever tfm-fuse
  /// made of them. Needs bind().
  struct LiteralParameters {
    OwningOpRef<ModuleOp> model;
    std::vector<std::vector<float>> values;
  };
  llvm::Expected<LiteralParameters> literalParameters() const;

  /// The same model and options for another device, sharing this step's
  /// bound parameters (a reference run costs no second copy of them).
  llvm::Expected<std::unique_ptr<TrainingStep>>
  retarget(const CompileOptions &compile) const;

  const ModelSpec &getSpec() const { return spec; }
  const StepOptions &getOptions() const { return options; }
  /// Wall time of the lowering pipeline and the JIT in compile().
  double getCompileMs() const { return compileMs; }
  /// What StepOptions::lora adapted; null without LoRA.
  const LoraSummary *getLoraSummary() const {
    return loraSummary ? &*loraSummary : nullptr;
  }

private:
  TrainingStep(const ModelSpec &spec, const StepOptions &options);
  struct State;
  /// Checks `batch` and builds the compiled function's arguments.
  llvm::Error prepareArguments(const TokenBatch &batch, float lossWeight,
                               StepArguments &out);

  ModelSpec spec;
  StepOptions options;
  double compileMs = 0;
  std::optional<LoraSummary> loraSummary;
  std::unique_ptr<State> state;
};

/// How far a device's step is from the CPU's, as the worst ratio of the
/// difference to its tolerance (<= 1 passes) per quantity.
struct StepComparison {
  double logits = 0, loss = 0, gradients = 0;
  bool ok() const { return logits <= 1 && loss <= 1 && gradients <= 1; }
  /// "logits 0.01, loss 0, gradients 0.2 of the tolerance (ok)".
  std::string summary() const;
};

/// Compares `result` with `reference` (the CPU's step on the same batch).
/// Tolerances, those of the HF numerics tests in f32: logits 1e-4 + 1e-4
/// |ref|, loss 1e-5, each parameter gradient max|d| <= 1e-4 max|ref|. In
/// bf16 (the paths round at different points): logits max|d| <= 1e-2
/// max|ref|, loss 1e-2 |ref|, gradients 5e-2 max|ref| (either path's bf16
/// gradients are 2-3% from the f32 ones on the tiny Llama). A NaN on one
/// side only, or different shapes, fail. An error if the results do not
/// have the same structure.
llvm::Expected<StepComparison> compareSteps(const StepResult &result,
                                            const StepResult &reference,
                                            Precision precision);

/// Runs `batch` on `step` retargeted to the CPU (same options, same bound
/// parameters) and compares `result` (the step's own) with it. Errors:
/// "CPU reference: ..." when the CPU step fails, "GPU and CPU results
/// differ: ..." when the results do not match in structure.
llvm::Expected<StepComparison> compareWithCpu(const TrainingStep &step,
                                              const TokenBatch &batch,
                                              const StepResult &result);

/// One line for people: "LlamaForCausalLM: 2x16 tokens, logits [2, 16, 512],
/// loss 6.280294, 38 gradients on cpu (compile 1212 ms, step 7.7 ms)".
std::string describeStep(const TrainingStep &step, const TokenBatch &batch,
                         const StepResult &result, double runMs);

} // namespace mlir::tfm

#endif // TFM_ENGINE_TRAININGSTEP_H
