//===- OutputPath.cpp - where a tool may write an output file -------------===//

#include "tfm/Support/OutputPath.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::tfm;
namespace fs = llvm::sys::fs;

llvm::Expected<OutputTarget>
mlir::tfm::resolveOutputPath(llvm::StringRef path) {
  if (path.empty())
    return makeError("the output path is empty");
  OutputTarget target{path.str(), true};
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
  llvm::StringRef dir = llvm::sys::path::parent_path(target.path);
  if (dir.empty())
    dir = ".";
  if (!fs::is_directory(dir))
    return makeError(path + ": the folder " + dir + " does not exist");
  if (fs::access(dir, fs::AccessMode::Write))
    return makeError(path + ": the folder " + dir + " is not writable");
  return target;
}

void mlir::tfm::removeWrittenOutput(llvm::StringRef path) {
  llvm::Expected<OutputTarget> target = resolveOutputPath(path);
  if (!target) {
    llvm::consumeError(target.takeError());
    return;
  }
  if (target->atomic)
    fs::remove(target->path);
}

llvm::Error mlir::tfm::writeOutputFile(
    llvm::StringRef path, llvm::function_ref<void(llvm::raw_ostream &)> write) {
  llvm::Expected<OutputTarget> target = resolveOutputPath(path);
  if (!target)
    return target.takeError();
  std::string file = target->atomic ? target->path + ".tmp" : target->path;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec, fs::OF_None);
    if (ec)
      return makeError(path + ": cannot write: " + ec.message());
    write(os);
    os.close();
    if (os.has_error()) {
      std::string why = os.error().message();
      os.clear_error(); // reported here, not by LLVM's abort
      if (target->atomic)
        fs::remove(file);
      return makeError(path + ": write failed: " + why);
    }
  }
  if (!target->atomic)
    return llvm::Error::success();
  if (std::error_code ec = fs::rename(file, target->path)) {
    fs::remove(file);
    return makeError(path + ": cannot rename into place: " + ec.message());
  }
  return llvm::Error::success();
}
