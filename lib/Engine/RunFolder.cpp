//===- RunFolder.cpp - the output folder a training run owns --------------===//

#include "tfm/Engine/RunFolder.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::tfm;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

static constexpr llvm::StringLiteral kLockFile = ".tfm-train.lock";

std::string mlir::tfm::childPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  path::append(p, name);
  return p.str().str();
}

/// Removes `name` in the folder `dirFd`: unlinkat removes a file or a link
/// as itself; only a real folder (opened with O_NOFOLLOW) is descended.
static int removeAt(int dirFd, const char *name) {
  if (::unlinkat(dirFd, name, 0) == 0 || errno == ENOENT)
    return 0;
  if (errno != EISDIR && errno != EPERM)
    return errno;
  int fd =
      ::openat(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno;
  DIR *dir = ::fdopendir(fd);
  if (!dir) {
    int err = errno;
    ::close(fd);
    return err;
  }
  int err = 0;
  while (dirent *entry = ::readdir(dir)) {
    llvm::StringRef child(entry->d_name);
    if (child == "." || child == "..")
      continue;
    if (int e = removeAt(fd, entry->d_name); e && !err)
      err = e;
  }
  ::closedir(dir); // closes fd
  if (::unlinkat(dirFd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && !err)
    err = errno;
  return err;
}

std::error_code mlir::tfm::removeTreeNoFollow(llvm::StringRef target) {
  llvm::SmallString<256> parent(target);
  path::remove_filename(parent);
  if (parent.empty())
    parent = ".";
  std::string name = path::filename(target).str();
  int dirFd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd < 0)
    return errno == ENOENT ? std::error_code()
                           : std::error_code(errno, std::generic_category());
  int err = removeAt(dirFd, name.c_str());
  ::close(dirFd);
  return std::error_code(err, std::generic_category());
}

std::error_code mlir::tfm::syncFolder(llvm::StringRef dir) {
  std::string text = dir.str();
  int fd = ::open(text.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return std::error_code(errno, std::generic_category());
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return std::error_code(err, std::generic_category());
}

std::error_code mlir::tfm::syncTree(llvm::StringRef dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec, /*follow_symlinks=*/false), end;
       it != end && !ec; it.increment(ec)) {
    if (it->type() != fs::file_type::regular_file)
      continue;
    int fd = ::open(it->path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      return std::error_code(errno, std::generic_category());
    int err = ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    if (err)
      return std::error_code(err, std::generic_category());
  }
  if (ec)
    return ec;
  return syncFolder(dir);
}

bool mlir::tfm::isRealDirectory(llvm::StringRef p) {
  fs::file_status status;
  return !fs::status(p, status, /*Follow=*/false) &&
         status.type() == fs::file_type::directory_file;
}

llvm::Error mlir::tfm::writeFileAtomically(llvm::StringRef file,
                                           llvm::StringRef text) {
  llvm::SmallString<256> model(file);
  path::remove_filename(model);
  path::append(model, "." + path::filename(file) + "-%%%%%%%%.tmp");
  int fd;
  llvm::SmallString<256> tmp;
  // createUniqueFile opens with O_CREAT | O_EXCL: never an existing file or
  // a link's target.
  if (std::error_code ec = fs::createUniqueFile(model, fd, tmp))
    return makeError(file + ": cannot write: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      fs::remove(tmp);
      return makeError(file + ": write failed");
    }
  }
  if (std::error_code ec = fs::rename(tmp, file)) {
    fs::remove(tmp);
    return makeError(file + ": cannot rename into place: " + ec.message());
  }
  return llvm::Error::success();
}

/// The pid a lock file records, or "unknown".
static std::string lockHolder(int fd) {
  char buffer[32] = {};
  ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  llvm::StringRef text(buffer, n > 0 ? size_t(n) : 0);
  unsigned long long pid;
  if (text.trim().getAsInteger(10, pid))
    return "unknown";
  return std::to_string(pid);
}

llvm::Expected<std::unique_ptr<RunFolderLock>>
RunFolderLock::acquire(llvm::StringRef dir) {
  std::string file = childPath(dir, kLockFile);
  // A holder that exits removes the file while others may have it open:
  // the lock is ours only if the file we locked is still the one at `file`.
  for (int attempt = 0; attempt < 8; ++attempt) {
    int fd =
        ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ELOOP)
      return makeError(file + ": is a symbolic link; a training run never "
                              "writes through one (remove it)");
    if (fd < 0)
      return makeError(dir + ": the output directory is not writable (" + file +
                       ": " + std::strerror(errno) + ")");
    // A hard link planted there would have the pid written into the file
    // it shares (O_NOFOLLOW stops only symbolic links).
    struct stat opened;
    if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) ||
        opened.st_nlink != 1) {
      ::close(fd);
      return makeError(file + ": is not a plain file of its own (a hard "
                              "link?); a training run never writes into one "
                              "(remove it)");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      std::string holder = lockHolder(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        return makeError(dir + ": in use by another training run (pid " +
                         holder + ", " + file + ")");
      return makeError(file + ": cannot lock: " + std::strerror(err));
    }
    struct stat locked, current;
    if (::fstat(fd, &locked) == 0 && ::lstat(file.c_str(), &current) == 0 &&
        locked.st_ino == current.st_ino && locked.st_dev == current.st_dev) {
      std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 ||
          ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
        int err = errno;
        ::unlink(file.c_str());
        ::close(fd);
        return makeError(file + ": cannot write: " + std::strerror(err));
      }
      return std::unique_ptr<RunFolderLock>(new RunFolderLock(file, fd));
    }
    ::close(fd); // replaced under us: try the new file
  }
  return makeError(file + ": cannot lock: the file keeps being replaced");
}

RunFolderLock::~RunFolderLock() {
  ::unlink(file.c_str());
  ::close(fd);
}
