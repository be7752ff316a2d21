//===- JitOptimizer.cpp - the LLVM pipeline a JIT'd step gets -------------===//

#include "JitOptimizer.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Passes/PassBuilder.h"

using namespace llvm;

/// Adds the functions `c` refers to (through constant expressions and
/// aggregates) to `work`.
static void addReferencedFunctions(const Constant *c,
                                   SmallVectorImpl<const Function *> &work,
                                   SmallPtrSetImpl<const Constant *> &seen) {
  if (!seen.insert(c).second)
    return;
  if (auto *f = dyn_cast<Function>(c)) {
    work.push_back(f);
    return;
  }
  if (isa<GlobalVariable>(c))
    return; // its initializer is a root of its own
  for (const Use &op : c->operands())
    if (auto *operand = dyn_cast<Constant>(op.get()))
      addReferencedFunctions(operand, work, seen);
}

/// Erases every function definition that neither `root` nor a global
/// variable's initializer reaches through calls or references.
static void dropUnreachableFunctions(Module &module, StringRef root) {
  SmallVector<const Function *> work;
  SmallPtrSet<const Constant *, 32> seen;
  if (const Function *entry = module.getFunction(root))
    work.push_back(entry);
  for (const GlobalVariable &g : module.globals())
    if (g.hasInitializer())
      addReferencedFunctions(g.getInitializer(), work, seen);
  SmallPtrSet<const Function *, 32> live;
  while (!work.empty()) {
    const Function *f = work.pop_back_val();
    if (!live.insert(f).second)
      continue;
    for (const BasicBlock &block : *f)
      for (const Instruction &inst : block)
        for (const Use &op : inst.operands())
          if (auto *c = dyn_cast<Constant>(op.get()))
            addReferencedFunctions(c, work, seen);
  }
  SmallVector<Function *> dead;
  for (Function &f : module)
    if (!f.isDeclaration() && !live.contains(&f))
      dead.push_back(&f);
  for (Function *f : dead)
    f->dropAllReferences();
  for (Function *f : dead)
    f->eraseFromParent();
}

Expected<mlir::tfm::JitOptimizer>
mlir::tfm::makeJitOptimizer(std::string root) {
  auto builder = orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  auto machine = builder->createTargetMachine();
  if (!machine)
    return machine.takeError();
  JitOptimizer optimizer;
  optimizer.host = std::move(*machine);
  TargetMachine *host = optimizer.host.get();
  optimizer.transform = [host, root](Module *module) -> Error {
    dropUnreachableFunctions(*module, root);
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
