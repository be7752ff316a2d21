//===- JsonText.h - checks on untrusted JSON text before parsing -*- C++
//-*-===//
//
// config.json, safetensors headers, shard indexes, token files and saves
// come from downloads. JSON parsers and printers recurse over nesting, so a
// value nested 100,000 deep overflows the stack when it is copied or printed
// in an error message; Python's json module (and so HF) refuses a UTF-8
// byte-order mark and NUL bytes. Every tfm JSON reader checks its text here
// first: one linear pass, strings and their escapes skipped.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SUPPORT_JSONTEXT_H
#define TFM_SUPPORT_JSONTEXT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::tfm {

/// Deeper than any real config (HF's nest 4 levels), far from the stack.
constexpr unsigned kMaxJsonDepth = 64;

/// Errors: "<source>: ..." naming the byte offset of a BOM, a NUL byte, or
/// the bracket that nests deeper than `maxDepth`.
llvm::Error checkJsonText(llvm::StringRef text, llvm::StringRef source,
                          unsigned maxDepth = kMaxJsonDepth);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_JSONTEXT_H
