//===- ImportedModel.cpp - an HF config imported as tfm IR ----------------===//

#include "tfm/Engine/ImportedModel.h"
#include "tfm/Dialect/Tfm/IR/TfmOps.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"
#include "tfm/Import/HFConfig.h"
#include "tfm/Import/ModelBuilder.h"
#include "tfm/Import/ParamSummary.h"
#include "tfm/InitAll.h"
#include "tfm/Support/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tfm;

struct ImportedModel::IR {
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> module;
};

ImportedModel::~ImportedModel() = default;

llvm::Expected<std::unique_ptr<ImportedModel>>
ImportedModel::import(llvm::StringRef path, Precision precision, bool logits) {
  llvm::Expected<ModelSpec> spec = readHFConfig(path);
  if (!spec)
    return spec.takeError();
  std::unique_ptr<ImportedModel> model(new ImportedModel);
  model->spec = std::move(*spec);
  model->directory = llvm::sys::fs::is_directory(path)
                         ? path.str()
                         : llvm::sys::path::parent_path(path).str();
  if (model->directory.empty())
    model->directory = ".";

  DialectRegistry registry;
  registerAllTfmDialects(registry);
  auto ir = std::make_unique<IR>();
  ir->ctx = std::make_unique<MLIRContext>(registry);
  ir->ctx->loadDialect<TfmDialect, func::FuncDialect>();
  DiagnosticCollector diagnostics(ir->ctx.get());
  Type elem = precision == Precision::bf16
                  ? Type(BFloat16Type::get(ir->ctx.get()))
                  : Type(Float32Type::get(ir->ctx.get()));
  ir->module = buildModel(*ir->ctx, model->spec, elem, logits);
  // IR that does not verify is an importer bug,
  // reported rather than handed out.
  PassManager pm(ir->ctx.get());
  pm.addPass(createTfmCheckWeightMapPass());
  if (failed(verify(*ir->module)) || failed(pm.run(*ir->module)))
    return makeError(path + ": internal error, the imported IR is invalid: " +
                     diagnostics.str());
  FailureOr<ParamSummary> summary =
      summarizeParams(*ir->module, kForwardFuncName);
  if (failed(summary))
    return makeError(path + ": " + diagnostics.str());
  model->numParameters = summary->total;
  model->summaryJson = formatSummaryJson(*ir->module, *summary);
  model->ir = std::move(ir);
  return model;
}

int64_t ImportedModel::getNumParameters() const { return numParameters; }

std::string ImportedModel::getMLIR() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  ir->module->print(os);
  os << "\n";
  return text;
}

llvm::Expected<std::unique_ptr<TrainingStep>>
ImportedModel::createStep(const StepOptions &options,
                          llvm::StringRef moeAuxLoss) const {
  ModelSpec copy = spec;
  if (llvm::Error e = setMoeAuxLoss(copy, moeAuxLoss))
    return std::move(e);
  return TrainingStep::create(copy, options);
}
