//===- OutputPath.cpp - where a tool may write an output file -------------===//

#include "tfm/Support/OutputPath.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::tfm;
namespace fs = llvm::sys::fs;

static void removeSibling(llvm::StringRef name) {
  fs::remove(name);
  llvm::sys::DontRemoveFileOnSignal(name);
}

/// A descriptor the caller already holds (/dev/stdout, /dev/fd/1,
/// /proc/self/fd/1): written through, whatever file it stands for; renaming
/// over that file would leave the caller writing to an orphaned one.
static bool isDescriptorPath(llvm::StringRef path) {
  return path == "/dev/stdout" || path == "/dev/stderr" ||
         path.starts_with("/dev/fd/") ||
         (path.starts_with("/proc/") && path.contains("/fd/"));
}

/// Where `path` leads (see OutputTarget), without the checks.
static llvm::Expected<OutputTarget> resolveTarget(llvm::StringRef path) {
  if (path.empty())
    return makeError("the output path is empty");
  OutputTarget target{path.str(), true};
  if (isDescriptorPath(path)) {
    target.atomic = false;
    return target;
  }
  fs::file_status status;
  // fs::status follows symlinks: a link to a missing file is written
  // through to that file, as cp does.
  if (!fs::status(path, status) && fs::exists(status)) {
    if (fs::is_directory(status))
      return makeError(path + ": is a folder, expected a file path");
    llvm::SmallString<256> real;
    if (!fs::real_path(path, real))
      target.path = std::string(real);
    target.atomic = fs::is_regular_file(status);
    if (!target.atomic)
      return target; // a device or pipe: opened, not created
  } else if (fs::is_symlink_file(path)) {
    // A dangling link: resolve its text relative to the link's folder.
    char buffer[4096];
    std::string pathText = path.str();
    ssize_t n = ::readlink(pathText.c_str(), buffer, sizeof(buffer));
    if (n < 0 || size_t(n) >= sizeof(buffer))
      return makeError(path + ": cannot read the link");
    llvm::StringRef linkText(buffer, size_t(n));
    llvm::SmallString<256> resolved;
    if (llvm::sys::path::is_absolute(linkText)) {
      resolved = linkText;
    } else {
      resolved = llvm::sys::path::parent_path(path);
      llvm::sys::path::append(resolved, linkText);
    }
    target.path = std::string(resolved);
  }
  return target;
}

static llvm::StringRef folderOf(llvm::StringRef file) {
  llvm::StringRef dir = llvm::sys::path::parent_path(file);
  return dir.empty() ? "." : dir;
}

/// resolveTarget, and what the modes say: the folder exists and may take
/// files, an existing file may be written (cp refuses one it may not
/// write; it would not replace it).
static llvm::Expected<OutputTarget> checkedTarget(llvm::StringRef path) {
  llvm::Expected<OutputTarget> target = resolveTarget(path);
  if (!target || !target->atomic)
    return target;
  llvm::StringRef dir = folderOf(target->path);
  if (!fs::is_directory(dir))
    return makeError(path + ": the folder " + dir + " does not exist");
  if (fs::access(dir, fs::AccessMode::Write))
    return makeError(path + ": the folder " + dir + " is not writable");
  if (fs::exists(target->path) &&
      fs::access(target->path, fs::AccessMode::Write))
    return makeError(path + ": the file is not writable");
  return target;
}

/// The temporary file the output is written to first, or the error naming
/// `path` when its folder takes no new file: a new file in the target's
/// folder that no one else names (never `file`.tmp, which may be the
/// user's; of fixed length, so that a file name near the 255-byte limit
/// still has one), as the umask makes new files. Removed if the tool is
/// interrupted before it is renamed or removed (removeSibling).
static llvm::Error newSibling(const OutputTarget &target, llvm::StringRef path,
                              int &fd, llvm::SmallVectorImpl<char> &name) {
  llvm::StringRef dir = folderOf(target.path);
  llvm::SmallString<256> model = dir;
  llvm::sys::path::append(model, ".tfm-%%%%%%%%.tmp");
  if (std::error_code ec = fs::createUniqueFile(model, fd, name, fs::OF_None,
                                                fs::all_read | fs::all_write))
    return makeError(path + ": the folder " + dir +
                     " cannot take a new file: " + ec.message());
  llvm::sys::RemoveFileOnSignal(llvm::StringRef(name.data(), name.size()));
  return llvm::Error::success();
}

llvm::Expected<OutputTarget>
mlir::tfm::resolveOutputPath(llvm::StringRef path) {
  llvm::Expected<OutputTarget> target = checkedTarget(path);
  if (!target || !target->atomic)
    return target;
  // The folder's mode says nothing on some file systems (/proc, a read-only
  // mount, a full quota): create the file's neighbour once, now, rather
  // than after a step that ran for minutes.
  int fd;
  llvm::SmallString<256> probe;
  if (llvm::Error e = newSibling(*target, path, fd, probe))
    return std::move(e);
  ::close(fd);
  removeSibling(probe);
  return target;
}

/// Closes `os` and turns a failed write into an error naming `path` (the
/// stream's error cleared: reported here, not by LLVM's abort).
static llvm::Error closeWritten(llvm::raw_fd_ostream &os,
                                llvm::StringRef path) {
  os.close();
  if (!os.has_error())
    return llvm::Error::success();
  std::string why = os.error().message();
  os.clear_error();
  return makeError(path + ": write failed: " + why);
}

void mlir::tfm::removeWrittenOutput(llvm::StringRef path) {
  // Only where the file went: the checks (which a full disk may now fail)
  // must not keep it.
  llvm::Expected<OutputTarget> target = resolveTarget(path);
  if (!target) {
    llvm::consumeError(target.takeError());
    return;
  }
  if (target->atomic)
    fs::remove(target->path);
}

llvm::Error mlir::tfm::writeOutputFile(
    llvm::StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  // The checks, but no probe: creating the temporary file below is one.
  llvm::Expected<OutputTarget> target = checkedTarget(path);
  if (!target)
    return target.takeError();
  if (!target->atomic) {
    std::error_code ec;
    llvm::raw_fd_ostream os(target->path, ec, fs::OF_None);
    if (ec)
      return makeError(path + ": cannot write: " + ec.message());
    write(os);
    return closeWritten(os, path);
  }
  // Written aside first, so that a failure leaves the old file (or none).
  int fd;
  llvm::SmallString<256> file;
  if (llvm::Error e = newSibling(*target, path, fd, file))
    return e;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    if (llvm::Error e = closeWritten(os, path)) {
      removeSibling(file);
      return e;
    }
  }
  // An existing file is overwritten as cp overwrites it: a rename would
  // give it our mode, owner and group and cut its other hard links, so
  // those that a rename cannot keep get the bytes in place (truncated and
  // rewritten, as by cp: a failure partway leaves it partial); the rest
  // keep their mode.
  fs::file_status old;
  if (!fs::status(target->path, old) && fs::is_regular_file(old)) {
    if (old.getLinkCount() > 1 || old.getUser() != ::geteuid() ||
        old.getGroup() != ::getegid()) {
      std::error_code ec = fs::copy_file(file, target->path);
      removeSibling(file);
      if (ec)
        return makeError(path + ": write failed: " + ec.message());
      return llvm::Error::success();
    }
    if (std::error_code ec = fs::setPermissions(file, old.permissions())) {
      removeSibling(file);
      return makeError(path + ": cannot keep the file's mode: " + ec.message());
    }
  }
  if (std::error_code ec = fs::rename(file, target->path)) {
    removeSibling(file);
    return makeError(path + ": cannot rename into place: " + ec.message());
  }
  llvm::sys::DontRemoveFileOnSignal(file);
  return llvm::Error::success();
}
