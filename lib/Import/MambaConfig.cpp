//===- MambaConfig.cpp - Mamba2 fields of a config.json -------------------===//

#include "MambaConfig.h"
#include "tfm/Support/Error.h"

#include <cmath>

using namespace mlir::tfm;
using namespace mlir::tfm::hf;

bool hf::isMambaSsmConfig(const json &root) {
  return root.is_object() && !root.contains("model_type") &&
         root.contains("ssm_cfg");
}

llvm::Expected<json> hf::mambaSsmToHF(const json &root,
                                      llvm::StringRef source) {
  Fields f(root, source.str());
  const json &ssm = root.at("ssm_cfg");
  if (!ssm.is_object())
    return makeError(source + ": field 'ssm_cfg': must be an object, got " +
                     Fields::typeName(ssm));
  Fields s(ssm, source.str(), "ssm_cfg.");
  std::string layer = s.string("layer", "Mamba1");
  if (s.failed())
    return makeError(s.message());
  if (layer != "Mamba2")
    return makeError(source + ": field 'ssm_cfg.layer': unsupported '" + layer +
                     "' (supported: Mamba2)");
  // What HF's Mamba2 has no place for.
  if (f.has("attn_layer_idx") &&
      !(f.at("attn_layer_idx").is_array() && f.at("attn_layer_idx").empty()))
    return makeError(source + ": field 'attn_layer_idx': attention layers in "
                              "a mamba_ssm model are not supported (only [])");
  if (f.count("d_intermediate", 0) != 0)
    return makeError(source + ": field 'd_intermediate': an MLP after each "
                              "mixer is not supported (only 0)");
  if (!s.boolean("rmsnorm", true))
    return makeError(source + ": field 'ssm_cfg.rmsnorm': only true is "
                              "supported (HF's Mamba2 always has the norm)");
  if (s.boolean("norm_before_gate", false))
    return makeError(source + ": field 'ssm_cfg.norm_before_gate': only false "
                              "is supported (HF's Mamba2 gates first)");
  if (s.boolean("D_has_hdim", false))
    return makeError(source + ": field 'ssm_cfg.D_has_hdim': only false is "
                              "supported (HF's D is one value per head)");
  if (!f.boolean("rms_norm", true))
    return makeError(source + ": field 'rms_norm': only true is supported "
                              "(HF's Mamba2 uses RMSNorm)");
  // mamba_ssm's Mamba2 defaults.
  int64_t hidden = f.size("d_model");
  int64_t expand = s.size("expand", 2), headDim = s.size("headdim", 64);
  json hf = {
      {"model_type", "mamba2"},
      {"architectures", {"Mamba2ForCausalLM"}},
      {"hidden_size", hidden},
      {"num_hidden_layers", f.size("n_layer")},
      {"expand", expand},
      {"head_dim", headDim},
      {"state_size", s.size("d_state", 128)},
      {"n_groups", s.size("ngroups", 1)},
      {"conv_kernel", s.size("d_conv", 4)},
      {"chunk_size", s.size("chunk_size", 256)},
      {"use_bias", s.boolean("bias", false)},
      {"use_conv_bias", s.boolean("conv_bias", true)},
      {"residual_in_fp32", f.boolean("residual_in_fp32", true)},
      {"tie_word_embeddings", f.boolean("tie_embeddings", true)},
      {"layer_norm_epsilon", f.positiveNumber("norm_epsilon", 1e-5)},
  };
  if (s.has("dt_limit"))
    hf["time_step_limit"] = ssm.at("dt_limit");
  if (s.has("d_ssm") && s.size("d_ssm", 1) != expand * hidden)
    return makeError(source + ": field 'ssm_cfg.d_ssm': a partial SSM width "
                              "is not supported (only expand * d_model)");
  // The conversion pads the vocabulary as mamba_ssm's embedding does.
  int64_t vocab = f.size("vocab_size");
  int64_t multiple = f.size("pad_vocab_size_multiple", 1);
  if (f.failed())
    return makeError(f.message());
  if (s.failed())
    return makeError(s.message());
  if (vocab % multiple)
    vocab += multiple - vocab % multiple;
  hf["vocab_size"] = vocab;
  if ((expand * hidden) % headDim != 0)
    return makeError(source +
                     ": field 'ssm_cfg.headdim': " + llvm::Twine(headDim) +
                     " does not divide expand * d_model" + " = " +
                     llvm::Twine(expand * hidden));
  hf["num_heads"] = expand * hidden / headDim;
  return hf;
}

llvm::Error hf::readMamba(Fields &f, const MambaRules &r, ModelSpec &spec) {
  // The key the file uses: the field's name, or an alias the class accepts.
  auto key = [&](const char *name) -> const char * {
    if (!f.present(name))
      for (auto [canonical, alias] : r.aliases)
        if (llvm::StringRef(canonical) == name && f.present(alias))
          return alias;
    return name;
  };
  MambaSpec m;
  m.numHeads = f.size(r.headsKey, r.defaultHeads);
  int64_t inner = 0;
  if (r.innerKey) {
    // Falcon-H1: mamba_d_ssm (null: expand x hidden_size).
    inner = f.present(r.innerKey) && !f.has(r.innerKey)
                ? f.size(r.expandKey, r.defaultExpand) * spec.hiddenSize
                : f.size(r.innerKey, r.defaultInner);
  }
  if (r.autoHeadDim && (!f.present(r.headDimKey) ||
                        (f.at(r.headDimKey).is_string() &&
                         f.at(r.headDimKey).get<std::string>() == "auto"))) {
    if (!f.failed() && inner % m.numHeads != 0)
      f.fail(r.headsKey, llvm::Twine(m.numHeads) + " does not divide " +
                             r.innerKey + " = " + llvm::Twine(inner));
    m.headDim = inner / m.numHeads;
  } else {
    m.headDim = f.size(r.headDimKey, r.defaultHeadDim);
  }
  m.groups = f.size(key(r.groupsKey), r.defaultGroups);
  m.stateSize = f.size(r.stateKey, r.defaultState);
  m.convKernel = f.size(key(r.convKey), r.defaultConv);
  m.chunkSize = f.size(key(r.chunkKey), r.defaultChunk);
  m.convBias = f.boolean(key(r.convBiasKey), r.defaultConvBias);
  m.projBias = f.boolean(r.projBiasKey, r.defaultProjBias);
  m.outBias = r.outBiasKey ? f.boolean(r.outBiasKey, false) : m.projBias;
  if (r.gatedNormKey)
    m.gatedNorm = f.boolean(r.gatedNormKey, r.defaultGatedNorm);
  m.normEps = f.positiveNumber(r.epsKey, r.defaultEps);
  if (r.normBeforeGateKey)
    m.normBeforeGate = f.boolean(r.normBeforeGateKey, r.defaultNormBeforeGate);
  std::string act = f.requiredString(r.activationKey, "silu");
  if (!f.failed() && act != "silu" && act != "swish")
    f.fail(r.activationKey, "unsupported activation '" + act +
                                "' for the Mamba2 conv (supported: silu)");
  if (r.dtLimitFromTimeStepMin) {
    const char *k = key("time_step_min");
    m.dtMin = f.number(k, 0.001);
    if (!f.failed() && !(m.dtMin >= 0 && std::isfinite(m.dtMin)))
      f.fail(k, "must be a finite number >= 0, got " + formatNumber(m.dtMin));
  } else if (f.has(key("time_step_limit"))) {
    std::vector<double> limit = f.numberList(key("time_step_limit"));
    if (!f.failed() &&
        (limit.size() != 2 || !(limit[0] >= 0) || !(limit[1] >= limit[0])))
      f.fail("time_step_limit",
             "must be [min, max] with 0 <= min <= max (max may be Infinity)");
    if (!f.failed()) {
      m.dtMin = limit[0];
      m.dtMax = limit[1];
    }
  }
  int64_t expand = r.expandKey ? f.size(r.expandKey, r.defaultExpand) : 0;
  if (f.failed())
    return makeError(f.message());
  if (r.innerKey && m.innerSize() != inner)
    return makeError(f.source + ": field '" + r.headDimKey +
                     "': " + r.headsKey + " * " + r.headDimKey + " = " +
                     llvm::Twine(m.innerSize()) + " must equal " + r.innerKey +
                     " = " + llvm::Twine(inner));
  if (m.numHeads % m.groups != 0)
    return makeError(f.source + ": field '" + key(r.groupsKey) +
                     "': " + llvm::Twine(m.groups) + " does not divide the " +
                     llvm::Twine(m.numHeads) + " heads ('" + r.headsKey + "')");
  if (r.expandKey && !r.innerKey && expand * spec.hiddenSize != m.innerSize())
    return makeError(f.source + ": field '" + r.headsKey + "': " + r.headsKey +
                     " * " + r.headDimKey + " = " + llvm::Twine(m.innerSize()) +
                     " must equal " + r.expandKey + " * hidden_size = " +
                     llvm::Twine(expand * spec.hiddenSize));
  if (double(m.convChannels()) * double(spec.hiddenSize) >= 1e15)
    return makeError(f.source + ": field '" + r.stateKey +
                     "': the Mamba2 projections are absurdly large");
  spec.mamba = m;
  return llvm::Error::success();
}
