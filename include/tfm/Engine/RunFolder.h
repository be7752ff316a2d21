//===- RunFolder.h - the output folder a training run owns ------*- C++ -*-===//
//
// A training run writes and removes files only inside its --output-dir, and
// never through a symbolic link found there: a `checkpoint-N` that is a link
// is not a save (it is neither read nor cleaned up), a link in the way of a
// file the run writes is replaced, not written through, and removing a tree
// removes links, never what they name. One run at a time holds the folder
// (an advisory lock on OUT/.tfm-train.lock that names its process).
//
//===----------------------------------------------------------------------===//

#ifndef TFM_ENGINE_RUNFOLDER_H
#define TFM_ENGINE_RUNFOLDER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir::tfm {

/// `dir`/`name`.
std::string childPath(llvm::StringRef dir, llvm::StringRef name);

/// Removes `path`: a file or a link itself, a real folder with everything
/// in it. Links inside are removed as links, never followed (the walk opens
/// each folder relative to its parent with O_NOFOLLOW, so a folder swapped
/// for a link mid-walk is not entered). A missing `path` is not an error.
std::error_code removeTreeNoFollow(llvm::StringRef path);

/// fsyncs every regular file directly in `dir`, then `dir` itself: what
/// was written there survives a power loss before anything older is
/// removed.
std::error_code syncTree(llvm::StringRef dir);
/// fsyncs the folder `dir` (its entries: renames and removals).
std::error_code syncFolder(llvm::StringRef dir);

/// Whether `path` is a real folder (not a link to one).
bool isRealDirectory(llvm::StringRef path);

/// Writes `text` to `path` under a new unique name in the same folder
/// (created exclusively, so nothing there is written through), then renames
/// it over `path` (a link at `path` is replaced, not followed).
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text);

/// An exclusive hold on an output folder for the lifetime of the object.
class RunFolderLock {
public:
  /// Locks `dir` (which exists). When another live process holds it, the
  /// error names that process: "OUT: in use by another training run (pid
  /// 1234, OUT/.tfm-train.lock)".
  static llvm::Expected<std::unique_ptr<RunFolderLock>>
  acquire(llvm::StringRef dir);
  /// Removes the lock file and releases the lock.
  ~RunFolderLock();

  RunFolderLock(const RunFolderLock &) = delete;
  RunFolderLock &operator=(const RunFolderLock &) = delete;

private:
  RunFolderLock(std::string file, int fd) : file(std::move(file)), fd(fd) {}
  std::string file;
  int fd;
};

} // namespace mlir::tfm

#endif // TFM_ENGINE_RUNFOLDER_H
