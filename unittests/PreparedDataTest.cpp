//===- PreparedDataTest.cpp - reading and packing prepared corpora --------===//
//
// Folders written here byte by byte in the documented format (docs/data.md),
// independently of tfm.data's writer: what opens, what is refused, and the
// rows packing and padding make (positions restarting at each document,
// -100 at each document's first label and where the loss mask says).
//
//===----------------------------------------------------------------------===//

#include "tfm/Data/PreparedData.h"
#include "tfm/Data/Packing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir::tfm;

namespace {

struct Corpus {
  std::vector<std::vector<int64_t>> documents{};
  std::vector<std::vector<uint8_t>> masks{}; // empty: no loss mask
  std::string meta{};                        // empty: the right one
};

template <typename T>
void writeLittle(llvm::raw_ostream &os, T value, unsigned bytes) {
  for (unsigned b = 0; b < bytes; ++b)
    os << char((uint64_t(value) >> (8 * b)) & 0xff);
}

/// A temporary folder, removed with the object.
struct Folder {
  std::string path;
  ~Folder() { llvm::sys::fs::remove_directories(path); }
};

/// A prepared folder (uint16 ids) under a fresh temporary directory.
Folder writeFolder(const Corpus &c) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("prepared", dir));
  auto path = [&](const char *name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  std::error_code ec;
  llvm::raw_fd_ostream tokens(path("tokens.bin"), ec),
      offsets(path("offsets.bin"), ec);
  uint64_t total = 0;
  writeLittle(offsets, uint64_t(0), 8);
  for (const auto &d : c.documents) {
    for (int64_t id : d)
      writeLittle(tokens, id, 2);
    total += d.size();
    writeLittle(offsets, total, 8);
  }
  if (!c.masks.empty()) {
    llvm::raw_fd_ostream mask(path("loss_mask.bin"), ec);
    for (const auto &m : c.masks)
      for (uint8_t v : m)
        mask << char(v);
  }
  llvm::raw_fd_ostream meta(path("meta.json"), ec);
  if (!c.meta.empty())
    meta << c.meta;
  else
    meta << "{\"format\": \"tfm-prepared-tokens\", \"version\": 1, \"dtype\": "
            "\"uint16\", \"documents\": "
         << c.documents.size() << ", \"tokens\": " << total
         << ", \"vocab_size\": 20, \"eos_token_id\": 1, \"loss_mask\": "
         << (c.masks.empty() ? "false" : "true") << "}";
  return {std::string(dir)};
}

std::string openError(const Corpus &c, int64_t vocab = 32) {
  Folder f = writeFolder(c);
  auto d = PreparedData::open(f.path, vocab);
  if (d)
    return "";
  return llvm::toString(d.takeError());
}

TEST(PreparedData, PackedRowsRestartPositionsAtDocuments) {
  // Documents of 3, 2 and 4 tokens (each ending with EOS = 1); windows of
  // 4: [3 | 1 of 2], [1 of 2 | 3 of 4], the 1 left over is dropped.
  Corpus c{{{5, 6, 1}, {7, 1}, {8, 9, 10, 1}}};
  Folder f = writeFolder(c);
  auto d = PreparedData::open(f.path, 32);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  DocumentWindows windows(**d, 4, /*packed=*/true);
  ASSERT_EQ(windows.size(), 2);
  PackedRow r0 = windows.row(0), r1 = windows.row(1);
  EXPECT_EQ(r0.ids, (std::vector<int64_t>{5, 6, 1, 7}));
  EXPECT_EQ(r0.positions, (std::vector<int64_t>{0, 1, 2, 0}));
  EXPECT_EQ(r0.labels, (std::vector<int64_t>{-100, 6, 1, -100}));
  // The second window starts inside document 1: its piece restarts at 0.
  EXPECT_EQ(r1.ids, (std::vector<int64_t>{1, 8, 9, 10}));
  EXPECT_EQ(r1.positions, (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(r1.labels, (std::vector<int64_t>{-100, -100, 9, 10}));
}

TEST(PreparedData, UnpackedRowsPadWithEosAndSplitLongDocuments) {
  Corpus c{{{5, 6, 1}, {8, 9, 10, 11, 12, 1}}};
  Folder f = writeFolder(c);
  auto d = PreparedData::open(f.path, 32);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  DocumentWindows windows(**d, 4, /*packed=*/false);
  ASSERT_EQ(windows.size(), 3);
  PackedRow r0 = windows.row(0), r2 = windows.row(2);
  EXPECT_EQ(r0.ids, (std::vector<int64_t>{5, 6, 1, 1}));
  EXPECT_EQ(r0.labels, (std::vector<int64_t>{-100, 6, 1, -100}));
  EXPECT_EQ(r0.positions, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(r2.ids, (std::vector<int64_t>{12, 1, 1, 1}));
  EXPECT_EQ(r2.labels, (std::vector<int64_t>{-100, 1, -100, -100}));
}

TEST(PreparedData, LossMaskDropsLabels) {
  Corpus c{{{5, 6, 7, 1}}, {{0, 0, 1, 1}}};
  Folder f = writeFolder(c);
  auto d = PreparedData::open(f.path, 32);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(DocumentWindows(**d, 4, true).row(0).labels,
            (std::vector<int64_t>{-100, -100, 7, 1}));
}

TEST(PreparedData, BadFoldersAreRefusedNamingTheFile) {
  EXPECT_NE(
      openError({{{5, 40, 1}}})
          .find("tokens.bin: id 40 (document 0) is outside the vocabulary"),
      std::string::npos);
  EXPECT_NE(openError({{{5, 6, 1}}}, /*vocab=*/16)
                .find("prepared with a tokenizer of 20 tokens, more than the "
                      "model's vocabulary of 16"),
            std::string::npos);
  EXPECT_NE(openError({{{5, 6, 1}}, {{0, 2, 1}}})
                .find("loss_mask.bin: value 2 at token 1 is not 0 or 1"),
            std::string::npos);
  Corpus wrongCount{{{5, 6, 1}}};
  wrongCount.meta = "{\"format\": \"tfm-prepared-tokens\", \"version\": 1, "
                    "\"dtype\": \"uint16\", \"documents\": 1, \"tokens\": 4, "
                    "\"vocab_size\": 20}";
  EXPECT_NE(openError(wrongCount)
                .find("tokens.bin: 6 bytes, meta.json's counts say 8"),
            std::string::npos);
  Corpus empty{{{5, 6, 1}, {}}};
  EXPECT_NE(openError(empty).find(
                "offsets.bin: document 1 is empty or ends before it starts"),
            std::string::npos);
  Corpus other{{{5, 1}}};
  other.meta = "{\"format\": \"something else\"}";
  EXPECT_NE(openError(other).find("not a prepared-data folder"),
            std::string::npos);
}

} // namespace
