//===- TrainingStepTest.cpp - the engine's training-step API --------------===//
//
// Drives the library API the tools and bindings sit on, without a tool: a
// tiny Llama from an inline config.json, a random checkpoint written here.
// The gradients the step returns by HF name are checked against central
// finite differences of the loss the forward-only step computes (an
// independent path: another compiled function, no autodiff); errors come
// back as llvm::Error.
//
//===----------------------------------------------------------------------===//

#include "tfm/Engine/TrainingStep.h"
#include "tfm/Import/HFConfig.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cmath>
#include <map>
#include <random>

using namespace mlir;
using namespace mlir::tfm;

namespace {

constexpr const char *kConfig = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "vocab_size": 16, "hidden_size": 8, "intermediate_size": 16,
  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
  "head_dim": 4, "rms_norm_eps": 1e-5, "tie_word_embeddings": true
})";

class TrainingStepTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto parsed = parseHFConfig(kConfig, "config.json");
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    spec = *parsed;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tfm-step", dir));
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.3f);
    auto add = [&](const std::string &name, std::vector<int64_t> shape,
                   float base) {
      int64_t n = 1;
      for (int64_t s : shape)
        n *= s;
      std::vector<float> &v = tensors[name];
      for (int64_t i = 0; i < n; ++i)
        v.push_back(base + normal(rng));
      shapes[name] = shape;
    };
    add("model.embed_tokens.weight", {16, 8}, 0);
    add("model.norm.weight", {8}, 1);
    for (int l = 0; l < 2; ++l) {
      std::string p = "model.layers." + std::to_string(l) + ".";
      add(p + "input_layernorm.weight", {8}, 1);
      add(p + "post_attention_layernorm.weight", {8}, 1);
      add(p + "self_attn.q_proj.weight", {8, 8}, 0);
      add(p + "self_attn.k_proj.weight", {4, 8}, 0);
      add(p + "self_attn.v_proj.weight", {4, 8}, 0);
      add(p + "self_attn.o_proj.weight", {8, 8}, 0);
      add(p + "mlp.gate_proj.weight", {16, 8}, 0);
      add(p + "mlp.up_proj.weight", {16, 8}, 0);
      add(p + "mlp.down_proj.weight", {8, 16}, 0);
    }
    batch.batch = 2;
    batch.seq = 5;
    batch.inputIds = {1, 5, 9, 3, 3, 0, 15, 2, 7, 11};
    batch.labels = {1, 5, 9, 3, 3, 0, 15, 2, -100, 11};
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  /// Writes the tensors (one element of `perturbed` changed by `delta`) and
  /// opens them as a checkpoint.
  Checkpoint checkpoint(const std::string &perturbed = "", size_t element = 0,
                        float delta = 0) {
    std::map<std::string, std::vector<float>> values = tensors;
    if (!perturbed.empty())
      values[perturbed][element] += delta;
    std::vector<TensorOut> out;
    for (auto &[name, v] : values)
      out.push_back({name, DType::F32, shapes[name], v.data()});
    llvm::SmallString<128> file(dir);
    llvm::sys::path::append(file, "model.safetensors");
    EXPECT_FALSE(bool(writeSafetensors(file, out)));
    auto opened = Checkpoint::open(dir);
    EXPECT_TRUE(bool(opened)) << llvm::toString(opened.takeError());
    return std::move(*opened);
  }

  std::unique_ptr<TrainingStep> create(bool gradients) {
    StepOptions options;
    options.gradients = gradients;
    auto step = TrainingStep::create(spec, options);
    EXPECT_TRUE(bool(step)) << llvm::toString(step.takeError());
    return step ? std::move(*step) : nullptr;
  }

  ModelSpec spec;
  llvm::SmallString<128> dir;
  std::map<std::string, std::vector<float>> tensors;
  std::map<std::string, std::vector<int64_t>> shapes;
  TokenBatch batch;
};

TEST_F(TrainingStepTest, GradientsByNameMatchFiniteDifferences) {
  std::unique_ptr<TrainingStep> train = create(/*gradients=*/true);
  std::unique_ptr<TrainingStep> forward = create(/*gradients=*/false);
  ASSERT_TRUE(train && forward);
  ASSERT_FALSE(bool(train->bind(checkpoint())));
  auto result = train->run(batch);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_TRUE(result->loss.has_value());
  EXPECT_EQ(result->logits.shape, (std::vector<int64_t>{2, 5, 16}));

  // One gradient per checkpoint tensor, under its name and shape.
  std::map<std::string, const NamedGradient *> grads;
  for (const NamedGradient &g : result->gradients)
    grads[g.name] = &g;
  ASSERT_EQ(grads.size(), tensors.size());
  for (auto &[name, shape] : shapes) {
    ASSERT_TRUE(grads.count(name)) << name;
    EXPECT_EQ(grads[name]->shape, shape) << name;
  }

  // The forward-only step (another compiled function) gives the same loss.
  ASSERT_FALSE(bool(forward->bind(checkpoint())));
  auto plain = forward->run(batch);
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  EXPECT_NEAR(*plain->loss, *result->loss, 1e-6);

  // Central differences of that loss, for elements of a tied (embedding and
  // lm head), a stacked layer-1 and a norm tensor.
  const float h = 1e-2f;
  for (auto [name, element] : std::vector<std::pair<std::string, size_t>>{
           {"model.embed_tokens.weight", 17},
           {"model.layers.1.mlp.up_proj.weight", 9},
           {"model.layers.0.input_layernorm.weight", 3},
           {"model.norm.weight", 5}}) {
    double loss[2];
    for (int side = 0; side < 2; ++side) {
      ASSERT_FALSE(
          bool(forward->bind(checkpoint(name, element, side ? h : -h))));
      auto r = forward->run(batch);
      ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
      loss[side] = *r->loss;
    }
    double fd = (loss[1] - loss[0]) / (2 * h);
    double grad = grads[name]->data[element];
    EXPECT_NEAR(grad, fd, 1e-3 + 2e-2 * std::abs(fd))
        << name << "[" << element << "]";
  }
}

TEST_F(TrainingStepTest, ErrorsComeBackAsErrors) {
  std::unique_ptr<TrainingStep> train = create(/*gradients=*/true);
  ASSERT_TRUE(train);
  auto unbound = train->run(batch);
  ASSERT_FALSE(bool(unbound));
  EXPECT_NE(llvm::toString(unbound.takeError()).find("bind a checkpoint first"),
            std::string::npos);

  // A checkpoint missing a tensor names it.
  tensors.erase("model.layers.1.mlp.up_proj.weight");
  llvm::Error missing = train->bind(checkpoint());
  ASSERT_TRUE(bool(missing));
  EXPECT_NE(llvm::toString(std::move(missing))
                .find("'model.layers.1.mlp.up_proj.weight'"),
            std::string::npos);
}

TEST_F(TrainingStepTest, BadBatchesAreRefused) {
  std::unique_ptr<TrainingStep> train = create(/*gradients=*/true);
  ASSERT_TRUE(train);
  ASSERT_FALSE(bool(train->bind(checkpoint())));
  TokenBatch noLabels = batch;
  noLabels.labels.clear();
  auto r = train->run(noLabels);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("labels"), std::string::npos);

  TokenBatch outside = batch;
  outside.inputIds[3] = 16;
  r = train->run(outside);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("outside the vocabulary"),
            std::string::npos);

  TokenBatch ragged = batch;
  ragged.inputIds.pop_back();
  r = train->run(ragged);
  ASSERT_FALSE(bool(r));
  llvm::consumeError(r.takeError());
}

TEST(StepOptionsTest, NamesParseBack) {
  for (Device d : {Device::cpu, Device::cuda, Device::gpuSim})
    EXPECT_EQ(*parseDevice(deviceName(d)), d);
  auto bad = parseDevice("tpu");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "--device tpu: expected cpu, cuda or gpu-sim");
  EXPECT_EQ(*parsePrecision("bf16"), Precision::bf16);
  auto badDtype = parsePrecision("f16");
  ASSERT_FALSE(bool(badDtype));
  llvm::consumeError(badDtype.takeError());
}

} // namespace
