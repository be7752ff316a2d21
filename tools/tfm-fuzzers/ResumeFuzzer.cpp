//===- ResumeFuzzer.cpp - libFuzzer target: resuming a training save ------===//
//
// What tfm-train --resume reads of OUT/checkpoint-<step>: trainer_state.json
// (step, data position, settings, log) and optimizer.safetensors (the
// optimizer state, and f32 master weights). The input is the JSON, a NUL
// byte, then the safetensors file. A tiny Llama's training step and
// optimizer are compiled once per process; each input is read as a save
// and restored into that trainer. Every save is either restored, with the
// invariants a resume relies on (step >= 1, one log entry per update, a
// data position >= 0, finite state), or refused with a message naming the
// file at fault.
//
//===----------------------------------------------------------------------===//

#include "FuzzerUtils.h"

#include "tfm/Engine/TrainCheckpoint.h"
#include "tfm/Engine/Trainer.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Runtime/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tfm;

namespace {
/// The compiled model every input is restored into.
struct Model {
  std::unique_ptr<TrainingStep> step;
  std::unique_ptr<Trainer> trainer;
};
} // namespace

/// tfm-train's test model (test/helpers/make_checkpoints.py, "good").
static constexpr llvm::StringLiteral kConfig = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "vocab_size": 16, "hidden_size": 8, "intermediate_size": 12,
  "num_hidden_layers": 2, "num_attention_heads": 2,
  "num_key_value_heads": 1, "rms_norm_eps": 1e-5,
  "tie_word_embeddings": false})";

static Model &model() {
  static Model m = [] {
    llvm::SmallString<128> dir(fuzz::scratchDir());
    llvm::sys::path::append(dir, "model");
    llvm::sys::fs::create_directories(dir);
    llvm::SmallString<128> config(dir);
    llvm::sys::path::append(config, "config.json");
    fuzz::writeFile(config, kConfig);
    llvm::Expected<ModelSpec> spec = readHFConfig(dir);
    if (!spec)
      fuzz::finding("the test model: " + llvm::toString(spec.takeError()));
    StepOptions options;
    options.gradients = true;
    options.logits = false;
    auto step = TrainingStep::create(*spec, options);
    if (!step)
      fuzz::finding("the test model: " + llvm::toString(step.takeError()));
    // Weights of the config's shapes (make_checkpoints.py's tensors()).
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
        {"model.embed_tokens.weight", {16, 8}},
        {"model.norm.weight", {8}},
        {"lm_head.weight", {16, 8}}};
    for (int l = 0; l < 2; ++l) {
      std::string p = "model.layers." + std::to_string(l) + ".";
      for (auto [name, shape] :
           std::initializer_list<std::pair<const char *, std::vector<int64_t>>>{
               {"input_layernorm.weight", {8}},
               {"post_attention_layernorm.weight", {8}},
               {"self_attn.q_proj.weight", {8, 8}},
               {"self_attn.k_proj.weight", {4, 8}},
               {"self_attn.v_proj.weight", {4, 8}},
               {"self_attn.o_proj.weight", {8, 8}},
               {"mlp.gate_proj.weight", {12, 8}},
               {"mlp.up_proj.weight", {12, 8}},
               {"mlp.down_proj.weight", {8, 12}}})
        shapes.emplace_back(p + name, shape);
    }
    std::vector<std::vector<float>> values;
    std::vector<TensorOut> tensors;
    values.reserve(shapes.size());
    for (auto &[name, shape] : shapes) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      values.emplace_back(n, 0.01f);
      tensors.push_back({name, DType::F32, shape, values.back().data()});
    }
    llvm::SmallString<128> weights(dir);
    llvm::sys::path::append(weights, "model.safetensors");
    if (auto e = writeSafetensors(weights, tensors))
      fuzz::finding("the test model: " + llvm::toString(std::move(e)));
    llvm::Expected<Checkpoint> checkpoint = Checkpoint::open(dir);
    if (!checkpoint)
      fuzz::finding("the test model: " +
                    llvm::toString(checkpoint.takeError()));
    if (auto e = (*step)->bind(std::move(*checkpoint)))
      fuzz::finding("the test model: " + llvm::toString(std::move(e)));
    auto trainer =
        Trainer::create(**step, OptimizerOptions{}, LearningRateSchedule{});
    if (!trainer)
      fuzz::finding("the test model: " + llvm::toString(trainer.takeError()));
    return Model{std::move(*step), std::move(*trainer)};
  }();
  return m;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Model &m = model();
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [stateText, optimizerBytes] = input.split('\0');
  llvm::SmallString<128> dir(fuzz::scratchDir());
  llvm::sys::path::append(dir, "checkpoint-2");
  llvm::sys::fs::create_directories(dir);
  llvm::SmallString<128> state(dir), optimizer(dir);
  llvm::sys::path::append(state, "trainer_state.json");
  llvm::sys::path::append(optimizer, "optimizer.safetensors");
  fuzz::writeFile(state, stateText);
  fuzz::writeFile(optimizer, optimizerBytes);

  llvm::Expected<SavedRun> run = readSavedRun(dir);
  if (!run) {
    fuzz::expectMessage(run.takeError(), state);
    return 0;
  }
  if (run->step != 2 || int64_t(run->log.size()) != run->step ||
      run->dataPosition < 0)
    fuzz::finding("a save whose step, log or data position is out of range "
                  "was accepted");
  if (auto e = restoreOptimizer(dir, run->step, *m.step, *m.trainer)) {
    fuzz::expectMessage(std::move(e), optimizer);
    return 0;
  }
  for (const Trainer::StateTensor &t : m.trainer->getState())
    for (float x : t.data)
      if (!std::isfinite(x))
        fuzz::finding("a non-finite optimizer state was restored");
  return 0;
}
