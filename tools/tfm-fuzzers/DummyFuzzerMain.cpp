//===- DummyFuzzerMain.cpp - a fuzz target without libFuzzer --------------===//
//
// In a build without -fsanitize=fuzzer (the default Release build), each
// target is a program that runs LLVMFuzzerTestOneInput once per file named
// on its command line, or in a folder named there (a corpus, in name order):
// the corpora and past findings replay as lit tests.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/// The files `arg` names: itself, or a folder's regular files by name.
static std::vector<std::string> inputsOf(const std::string &arg) {
  if (!llvm::sys::fs::is_directory(arg))
    return {arg};
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(arg, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::is_regular_file(it->path()))
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

int main(int argc, char **argv) {
  int runs = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') // libFuzzer's flags mean nothing here
      continue;
    for (const std::string &path : inputsOf(argv[i])) {
      auto buffer =
          llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
      if (!buffer) {
        llvm::errs() << path << ": cannot read: " << buffer.getError().message()
                     << "\n";
        return 1;
      }
      // A copy of exactly the input's size, so that a read past its end is
      // caught by a sanitizer as it would be under libFuzzer.
      llvm::StringRef bytes = (*buffer)->getBuffer();
      std::vector<uint8_t> copy(bytes.begin(), bytes.end());
      LLVMFuzzerTestOneInput(copy.data(), copy.size());
      ++runs;
    }
  }
  llvm::outs() << "ran " << runs << " inputs\n";
  return 0;
}
