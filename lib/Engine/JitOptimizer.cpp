//===- JitOptimizer.cpp - the LLVM pipeline a JIT'd step gets -------------===//

#include "JitOptimizer.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Passes/PassBuilder.h"

using namespace llvm;

Expected<mlir::tfm::JitOptimizer> mlir::tfm::makeJitOptimizer() {
  auto builder = orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  JitOptimizer optimizer;
  optimizer.host = std::move(*machine);
  TargetMachine *host = optimizer.host.get();
  optimizer.transform = [host](Module *module) -> Error {
    LoopAnalysisManager loops;
    FunctionAnalysisManager functions;
    CGSCCAnalysisManager sccs;
    ModuleAnalysisManager modules;
    PipelineTuningOptions tuning;
    // Generated steps are long sequences of loop nests: unrolling them
    // (runtime and full) is where O3's compile time went, and vectorised
    // bodies gain little from it.
    tuning.LoopUnrolling = false;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    PassBuilder passes(host, tuning);
    passes.registerModuleAnalyses(modules);
    passes.registerCGSCCAnalyses(sccs);
    passes.registerFunctionAnalyses(functions);
    passes.registerLoopAnalyses(loops);
    passes.crossRegisterProxies(loops, functions, sccs, modules);
    ModulePassManager pipeline =
        passes.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
    pipeline.run(*module, modules);
    return Error::success();
  };
  return optimizer;
}
