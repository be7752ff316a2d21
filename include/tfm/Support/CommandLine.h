//===- CommandLine.h - what every tfm tool's main does alike ----*- C++ -*-===//

#ifndef TFM_SUPPORT_COMMANDLINE_H
#define TFM_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace llvm {
class raw_fd_ostream;
} // namespace llvm

namespace mlir::tfm {

/// Hides (from --help, not from parsing) every command-line option
/// registered so far. Called first in main, it hides the hundreds of options
/// libLLVM registers statically (--amdgpu-..., --x86-...), so --help lists
/// only what the tool registers afterwards; --help-hidden shows all.
void hideOptionsRegisteredSoFar();

/// tfm's version, "MAJOR.MINOR.PATCH" (the CMake project's).
llvm::StringRef getTfmVersion();

/// Makes --version print "tfm version X", then the LLVM it was built with.
void setToolVersionPrinter();

/// An option's number as a user types it, for messages: "nan", "inf",
/// "-inf", "0.5", "1e+30".
std::string formatOptionNumber(double value);

/// Prints "<tool>: error: <message>" and returns the exit status 1.
int reportToolError(llvm::StringRef tool, const llvm::Twine &message);

/// The end of a tool's main: flushes stdout and turns a failed write (a
/// full disk, /dev/full) into the tool's own one-line error and status 1,
/// instead of LLVM's "IO failure on output stream" abort at exit.
int finishToolOutput(llvm::StringRef tool, int status);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_COMMANDLINE_H
