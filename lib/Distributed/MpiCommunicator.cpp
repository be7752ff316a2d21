//===- MpiCommunicator.cpp - the ranks of MPI_COMM_WORLD (MPICH) ----------===//
//
// Built when pkg-config finds MPICH. MPI is initialised on first use (not
// at load: a process that never trains in parallel never starts it) and
// finalised at exit. Errors come back as return codes
// (MPI_ERRORS_RETURN), turned into errors naming the collective; a rank
// that cannot go on ends every rank with MPI_Abort.
//
//===----------------------------------------------------------------------===//

#include "tfm/Distributed/Communicator.h"
#include "tfm/Support/Error.h"

// The C API only (MPICH would also pull in its C++ bindings).
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdlib>

using namespace mlir::tfm;

bool mlir::tfm::haveMpi() { return true; }

namespace {
class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(int rank, int size) : rank(rank), size(size) {}
  int getRank() const override { return rank; }
  int getSize() const override { return size; }
  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    // "MPICH Version:\t4.0.2\n...": "MPICH 4.0.2".
    llvm::StringRef first = llvm::StringRef(version, length).split('\n').first;
    auto [name, number] = first.split(':');
    name = name.trim();
    name.consume_back("Version");
    return "MPI (" + name.trim().str() + " " + number.trim().str() + ")";
  }

  llvm::Error allReduceSum(float *data, size_t count) override {
    return allReduce(data, count, MPI_FLOAT, "float sum");
  }
  llvm::Error allReduceSum(double *data, size_t count) override {
    return allReduce(data, count, MPI_DOUBLE, "double sum");
  }
  llvm::Error allReduceSum(int64_t *data, size_t count) override {
    return allReduce(data, count, MPI_INT64_T, "integer sum");
  }

  llvm::Error reduceScatterSum(const float *data, float *shard,
                               llvm::ArrayRef<size_t> counts) override {
    std::vector<int> recvCounts;
    if (auto e = intCounts(counts, recvCounts))
      return e;
    return check(MPI_Reduce_scatter(data, shard, recvCounts.data(), MPI_FLOAT,
                                    MPI_SUM, MPI_COMM_WORLD),
                 "reduce-scatter");
  }
  llvm::Error allGather(const void *shard, void *data,
                        llvm::ArrayRef<size_t> byteCounts) override {
    std::vector<int> recvCounts, offsets;
    if (auto e = byteOffsets(byteCounts, recvCounts, offsets))
      return e;
    // MPI forbids aliased buffers: a shard in place is MPI_IN_PLACE.
    const char *own = static_cast<const char *>(data) + offsets[rank];
    const void *send = shard == own ? MPI_IN_PLACE : shard;
    return check(MPI_Allgatherv(send, recvCounts[rank], MPI_BYTE, data,
                                recvCounts.data(), offsets.data(), MPI_BYTE,
                                MPI_COMM_WORLD),
                 "all-gather");
  }

  llvm::Error gather(const void *shard, void *data,
                     llvm::ArrayRef<size_t> byteCounts, int root) override {
    std::vector<int> recvCounts, offsets;
    if (auto e = byteOffsets(byteCounts, recvCounts, offsets))
      return e;
    return check(MPI_Gatherv(shard, recvCounts[rank], MPI_BYTE, data,
                             recvCounts.data(), offsets.data(), MPI_BYTE, root,
                             MPI_COMM_WORLD),
                 "gather");
  }

  llvm::Error broadcast(void *data, size_t bytes, int root) override {
    if (bytes > size_t(INT32_MAX))
      return makeError("MPI broadcast of " + llvm::Twine(bytes) +
                       " bytes: beyond one call's 2^31");
    return check(MPI_Bcast(data, int(bytes), MPI_BYTE, root, MPI_COMM_WORLD),
                 "broadcast");
  }
  llvm::Expected<std::vector<std::string>>
  allGatherBytes(llvm::StringRef value) override {
    std::string all(value.size() * size_t(size), '\0');
    if (auto e = check(MPI_Allgather(value.data(), int(value.size()), MPI_BYTE,
                                     all.data(), int(value.size()), MPI_BYTE,
                                     MPI_COMM_WORLD),
                       "all-gather"))
      return std::move(e);
    std::vector<std::string> out;
    for (int r = 0; r < size; ++r)
      out.push_back(all.substr(size_t(r) * value.size(), value.size()));
    return out;
  }
  llvm::Error barrier() override {
    return check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
  }
  [[noreturn]] void abortAll(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code); // MPI_Abort does not return; in case it does
  }

private:
  llvm::Error allReduce(void *data, size_t count, MPI_Datatype type,
                        const char *what) {
    // In pieces of at most 2^30 values (MPI counts are int).
    constexpr size_t piece = size_t(1) << 30;
    int typeSize = 0;
    MPI_Type_size(type, &typeSize);
    for (size_t at = 0; at < count; at += piece) {
      int n = int(std::min(piece, count - at));
      char *first = static_cast<char *>(data) + at * size_t(typeSize);
      if (auto e = check(MPI_Allreduce(MPI_IN_PLACE, first, n, type, MPI_SUM,
                                       MPI_COMM_WORLD),
                         what))
        return e;
    }
    return llvm::Error::success();
  }
  /// Counts and displacements as MPI's int.
  static llvm::Error byteOffsets(llvm::ArrayRef<size_t> byteCounts,
                                 std::vector<int> &counts,
                                 std::vector<int> &offsets) {
    if (auto e = intCounts(byteCounts, counts))
      return e;
    size_t offset = 0;
    for (int c : counts) {
      if (offset > size_t(INT32_MAX))
        return makeError("MPI gather of " + llvm::Twine(offset) +
                         " bytes: beyond one call's 2^31");
      offsets.push_back(int(offset));
      offset += size_t(c);
    }
    return llvm::Error::success();
  }
  static llvm::Error intCounts(llvm::ArrayRef<size_t> counts,
                               std::vector<int> &out) {
    for (size_t c : counts) {
      if (c > size_t(INT32_MAX))
        return makeError("MPI collective of " + llvm::Twine(c) +
                         " values per rank: beyond one call's 2^31");
      out.push_back(int(c));
    }
    return llvm::Error::success();
  }
  llvm::Error check(int code, const char *what) const {
    if (code == MPI_SUCCESS)
      return llvm::Error::success();
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    return makeError("rank " + llvm::Twine(rank) + " of " + llvm::Twine(size) +
                     ": MPI " + what +
                     " failed: " + llvm::StringRef(text, length));
  }

  int rank, size;
};
} // namespace

static void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

llvm::Expected<std::unique_ptr<Communicator>>
mlir::tfm::createMpiCommunicator() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Collectives are called from the thread that trains only.
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
      return makeError("MPI_Init_thread failed");
    std::atexit(finalizeAtExit);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::make_unique<MpiCommunicator>(rank, size);
}
