//===- JsonText.cpp - checks on untrusted JSON text before parsing --------===//

#include "tfm/Support/JsonText.h"
#include "tfm/Support/Error.h"

using namespace mlir;
using namespace mlir::tfm;

llvm::Error mlir::tfm::checkJsonText(llvm::StringRef text,
                                     llvm::StringRef source,
                                     unsigned maxDepth) {
  if (text.starts_with("\xEF\xBB\xBF"))
    return makeError(source + ": starts with a UTF-8 byte-order mark, which "
                              "JSON (and HF's json.load) does not allow");
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '\0')
      return makeError(source + ": NUL byte at byte " + llvm::Twine(i) +
                       " (not JSON text)");
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character cannot end the string
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return makeError(source + ": JSON nested deeper than " +
                         llvm::Twine(maxDepth) + " levels at byte " +
                         llvm::Twine(i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::Error::success();
}
