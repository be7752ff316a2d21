//===- OutputPath.h - where a tool may write an output file -----*- C++ -*-===//
//
// A tool's output is checked before any work (an empty path, a folder, a
// file it may not write, or a folder that cannot take a new file, such as
// /proc, is refused up front, not after a step that ran for minutes), and
// written the way `cp` would: through a symlink to the file it names, over
// an existing file keeping its mode (in place when it has other hard links
// or another owner, which a rename would cut or take over), and in place
// into an existing device or pipe (/dev/null, /dev/stdout), which a rename
// would replace with a file.
//
//===----------------------------------------------------------------------===//

#ifndef TFM_SUPPORT_OUTPUTPATH_H
#define TFM_SUPPORT_OUTPUTPATH_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::tfm {

struct OutputTarget {
  /// The file to write: `path`, or the final target of the symlink it is.
  std::string path;
  /// A regular file (or none yet): written aside under a unique name, then
  /// renamed (or, see below, copied) into place. Otherwise an existing
  /// device or pipe, or a descriptor path (/dev/stdout), written in place.
  bool atomic = true;
};

/// Resolves `path` as described above; errors name the path and the
/// reason.
llvm::Expected<OutputTarget> resolveOutputPath(llvm::StringRef path);

/// Writes `path` (resolved as above) with `write`: aside and renamed into
/// place, so that a failure leaves the old file (or none); in place into a
/// device or a descriptor; into an existing file with other hard links, or
/// another owner or group, copied in place once complete (as cp, a failure
/// partway through that copy leaves it partial). A failed write is an error
/// naming `path`, never LLVM's abort.
llvm::Error
writeOutputFile(llvm::StringRef path,
                llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Removes a file this tool wrote to `path` when a later step fails, as
/// resolved above: a regular file only (never a device), the link's target
/// rather than the link.
void removeWrittenOutput(llvm::StringRef path);

} // namespace mlir::tfm

#endif // TFM_SUPPORT_OUTPUTPATH_H
