//===- ImportedModel.h - an HF config imported as tfm IR --------*- C++ -*-===//
//
// What `tfm-import-hf` produces, as an object the embedding APIs hold (the
// C API's tfmModel, Python's tfm.Model): the parsed config, where it came
// from (so a checkpoint folder can be bound later without naming it again),
// the imported module and its parameter summary.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_IMPORTEDMODEL_H
#define TFM_ENGINE_IMPORTEDMODEL_H

#include "tfm/Engine/TrainingStep.h"
#include "tfm/Import/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir::tfm {

class ImportedModel {
public:
  /// Imports `path`, a config.json or a checkpoint folder holding one, with
  /// parameters and activations of `precision`; without `logits`, @forward
  /// returns the loss only. Errors name the file and the field.
  static llvm::Expected<std::unique_ptr<ImportedModel>>
  import(llvm::StringRef path, Precision precision = Precision::f32,
         bool logits = true);
  ~ImportedModel();

  const ModelSpec &getSpec() const { return spec; }
  /// The folder holding the config (where its weights are, when any).
  const std::string &getDirectory() const { return directory; }
  /// HF's num_parameters(): unique parameters, buffers excluded.
  int64_t getNumParameters() const;
  /// tfm-import-hf --summary's JSON object.
  const std::string &getSummaryJson() const { return summaryJson; }
  /// The imported module as MLIR text.
  std::string getMLIR() const;

  /// A training step of this model (TrainingStep::create), after applying
  /// `moeAuxLoss` (auto, on or off; setMoeAuxLoss) to a copy of the spec.
  llvm::Expected<std::unique_ptr<TrainingStep>>
  createStep(const StepOptions &options,
             llvm::StringRef moeAuxLoss = "auto") const;

private:
  ImportedModel() = default;
  struct IR;
  ModelSpec spec;
  std::string directory, summaryJson;
  int64_t numParameters = 0;
  std::unique_ptr<IR> ir;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_IMPORTEDMODEL_H
