//===- ParserHazards.cpp - MLIR text that crashes MLIR 22's parser --------===//

#include "tfm/Support/ParserHazards.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {

/// A forward-only reader over MLIR text with the lexer's notions of
/// whitespace, comments, string literals and bare identifiers.
class Cursor {
public:
  explicit Cursor(llvm::StringRef text) : text(text) {}

  bool atEnd() const { return pos >= text.size(); }
  char peek(size_t ahead = 0) const {
    return pos + ahead < text.size() ? text[pos + ahead] : '\0';
  }
  size_t offset() const { return pos; }

  /// Skips whitespace and `//` comments.
  void skipTrivia() {
    while (!atEnd()) {
      if (llvm::isSpace(peek())) {
        ++pos;
      } else if (peek() == '/' && peek(1) == '/') {
        size_t eol = text.find('\n', pos);
        pos = eol == llvm::StringRef::npos ? text.size() : eol + 1;
      } else {
        return;
      }
    }
  }

  /// Skips a string literal at the cursor (the lexer ends one at a newline
  /// too, with an error).
  void skipString() {
    for (++pos; !atEnd(); ++pos) {
      if (peek() == '\\') {
        ++pos;
      } else if (peek() == '"' || peek() == '\n') {
        ++pos;
        return;
      }
    }
  }

  static bool isIdStart(char c) { return llvm::isAlpha(c) || c == '_'; }
  static bool isIdChar(char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
  }

  /// A bare identifier at the cursor (`[A-Za-z_][A-Za-z0-9_$.]*`).
  llvm::StringRef takeIdentifier() {
    size_t start = pos;
    while (!atEnd() && isIdChar(peek()))
      ++pos;
    return text.slice(start, pos);
  }

  bool consume(char c) {
    skipTrivia();
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }

  /// One integer of a DenseI64ArrayAttr: `-`? then decimal or `0x` hex
  /// digits whose value fits int64_t.
  bool consumeInt64() {
    skipTrivia();
    bool negative = peek() == '-';
    if (negative) {
      ++pos;
      skipTrivia();
    }
    unsigned radix = 10;
    if (peek() == '0' && peek(1) == 'x' && llvm::isHexDigit(peek(2))) {
      radix = 16;
      pos += 2;
    }
    size_t start = pos;
    while (!atEnd() &&
           (radix == 16 ? llvm::isHexDigit(peek()) : llvm::isDigit(peek())))
      ++pos;
    uint64_t magnitude;
    if (pos == start || text.slice(start, pos).getAsInteger(radix, magnitude) ||
        magnitude > uint64_t(INT64_MAX) + (negative ? 1 : 0))
      return false;
    // The integer token ends here: `12abc` lexes as one bad token.
    return atEnd() || !isIdChar(peek());
  }

  /// `[` int64 (`,` int64)* `]` or `[` `]`.
  bool consumeInt64List() {
    if (!consume('['))
      return false;
    if (consume(']'))
      return true;
    do {
      if (!consumeInt64())
        return false;
    } while (consume(','));
    return consume(']');
  }

private:
  llvm::StringRef text;
  size_t pos = 0;
};

} // namespace

std::optional<ParserHazard> mlir::tfm::findParserHazard(llvm::StringRef text) {
  Cursor cur(text);
  // Ops whose attribute keyword is still to come, with that keyword. More
  // than one can be open: `linalg.reduce { linalg.transpose } ...` names
  // an op as its payload before its own keyword.
  llvm::SmallVector<std::pair<llvm::StringRef, llvm::StringRef>> pending;
  while (!cur.atEnd()) {
    cur.skipTrivia();
    if (cur.atEnd())
      break;
    char c = cur.peek();
    if (c == '"') {
      cur.skipString();
      continue;
    }
    if (llvm::is_contained(llvm::StringRef("%@#!^"), c)) {
      // SSA values, symbols, aliases and blocks: `%permutation` is a name.
      cur.consume(c);
      if (cur.peek() == '"')
        cur.skipString();
      else
        cur.takeIdentifier();
      continue;
    }
    if (!Cursor::isIdStart(c)) {
      cur.consume(c);
      continue;
    }
    size_t at = cur.offset();
    llvm::StringRef word = cur.takeIdentifier();
    llvm::StringRef key = llvm::StringSwitch<llvm::StringRef>(word)
                              .Case("linalg.transpose", "permutation")
                              .Case("linalg.broadcast", "dimensions")
                              .Case("linalg.reduce", "dimensions")
                              .Default("");
    if (!key.empty()) {
      pending.push_back({word, key});
      continue;
    }
    auto open = llvm::find_if(llvm::reverse(pending),
                              [&](const auto &p) { return p.second == word; });
    if (open == pending.rend())
      continue;
    llvm::StringRef op = open->first;
    pending.erase(std::next(open).base());
    // The parser reads the keyword, `=`, then the array; without `=` it
    // fails cleanly.
    if (cur.consume('=') && !cur.consumeInt64List())
      return ParserHazard{
          at, ("'" + op + "' needs a list of 64-bit integers after '" + word +
               " =' (MLIR 22's parser crashes on anything "
               "else here)")
                  .str()};
  }
  return std::nullopt;
}

LogicalResult mlir::tfm::refuseParserHazards(llvm::SourceMgr &sources) {
  const llvm::MemoryBuffer *buffer =
      sources.getMemoryBuffer(sources.getMainFileID());
  std::optional<ParserHazard> hazard = findParserHazard(buffer->getBuffer());
  if (!hazard)
    return success();
  sources.PrintMessage(
      llvm::SMLoc::getFromPointer(buffer->getBufferStart() + hazard->offset),
      llvm::SourceMgr::DK_Error, hazard->message);
  return failure();
}
