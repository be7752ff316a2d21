#!/usr/bin/env bash
# Regenerates docs/generated/ from the ODS and pass definitions (the lit test
# test/Docs/generated-docs.test fails when they are stale).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/docs/generated}
tblgen=/usr/lib/llvm-22/bin/mlir-tblgen
inc=(-I "$root/include" -I /usr/lib/llvm-22/include)
mkdir -p "$out"
$tblgen -gen-op-doc "${inc[@]}" "$root/include/tfm/Dialect/Tfm/IR/TfmOps.td" -o "$out/TfmOps.md"
$tblgen -gen-attrdef-doc "${inc[@]}" "$root/include/tfm/Dialect/Tfm/IR/TfmAttrs.td" -o "$out/TfmAttrs.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Dialect/Tfm/Transforms/Passes.td" -o "$out/TfmPasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Conversion/Passes.td" -o "$out/TfmConversionPasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/GPU/Passes.td" -o "$out/TfmGPUPasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Autodiff/Passes.td" -o "$out/TfmAutodiffPasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Analysis/Passes.td" -o "$out/TfmAnalysisPasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Recompute/Passes.td" -o "$out/TfmRecomputePasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Training/Passes.td" -o "$out/TfmTrainingPasses.md"
$tblgen -gen-pass-doc "${inc[@]}" "$root/include/tfm/Adapters/Passes.td" -o "$out/TfmAdaptersPasses.md"
$tblgen -gen-op-interface-docs "${inc[@]}" "$root/include/tfm/Interfaces/DifferentiableOpInterface.td" -o "$out/DifferentiableOpInterface.md"
$tblgen -gen-op-interface-docs "${inc[@]}" "$root/include/tfm/Interfaces/CostOpInterface.td" -o "$out/CostOpInterface.md"
$tblgen -gen-op-interface-docs "${inc[@]}" "$root/include/tfm/Dialect/Tfm/IR/TfmIndexOperands.td" -o "$out/IndexOperandsOpInterface.md"
