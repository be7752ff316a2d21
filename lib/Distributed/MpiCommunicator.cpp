//===- MpiCommunicator.cpp - the ranks of MPI_COMM_WORLD (MPICH) ----------===//
//
// Built when pkg-config finds MPICH: its mpi.h gives the ABI (handles and
// constants are integer macros in MPICH), and libmpich.so.12 is opened at
// run time on first use, like the CUDA libraries ($TFM_MPI_LIBRARY to
// choose another). Linking it would load MPICH and its UCX transport into
// every process that links tfm, to no use outside mpirun, and UCX's memory
// hooks break AddressSanitizer's at start-up. MPI is initialised on first
// use and finalised at exit. Errors come back as return codes
// (MPI_ERRORS_RETURN), turned into errors naming the collective; a rank
// that cannot go on ends every rank with MPI_Abort.
//
//===----------------------------------------------------------------------===//

#include "tfm/Distributed/Communicator.h"
#include "tfm/Support/Error.h"

// The C API only (MPICH would also pull in its C++ bindings).
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <dlfcn.h>

#include <cstdlib>

using namespace mlir::tfm;

bool mlir::tfm::haveMpi() { return true; }

namespace {
/// The MPI functions tfm calls, from the opened library.
struct MpiApi {
#define TFM_MPI_FUNCTIONS(X)                                                   \
  X(Init_thread)                                                               \
  X(Initialized)                                                               \
  X(Finalized)                                                                 \
  X(Finalize)                                                                  \
  X(Comm_set_errhandler)                                                       \
  X(Comm_rank)                                                                 \
  X(Comm_size)                                                                 \
  X(Get_library_version)                                                       \
  X(Error_string)                                                              \
  X(Type_size)                                                                 \
  X(Allreduce)                                                                 \
  X(Reduce_scatter)                                                            \
  X(Allgatherv)                                                                \
  X(Gatherv)                                                                   \
  X(Allgather)                                                                 \
  X(Bcast)                                                                     \
  X(Barrier)                                                                   \
  X(Abort)
#define TFM_MPI_FIELD(name) decltype(&MPI_##name) name = nullptr;
  TFM_MPI_FUNCTIONS(TFM_MPI_FIELD)
#undef TFM_MPI_FIELD
};
} // namespace

/// The opened library's functions (loaded once).
static llvm::Expected<const MpiApi &> mpiApi() {
  static MpiApi api;
  static std::string error;
  static bool loaded = [] {
    const char *path = std::getenv("TFM_MPI_LIBRARY");
    if (!path || !*path)
      path = "libmpich.so.12";
    // Global: MPICH's own plugins resolve its symbols.
    void *handle = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      error = std::string("cannot load MPICH (") + path + "): " + dlerror();
      return false;
    }
#define TFM_MPI_LOAD(name)                                                     \
  api.name =                                                                   \
      reinterpret_cast<decltype(api.name)>(dlsym(handle, "MPI_" #name));       \
  if (!api.name) {                                                             \
    error = std::string(path) + ": no MPI_" #name;                             \
    return false;                                                              \
  }
    TFM_MPI_FUNCTIONS(TFM_MPI_LOAD)
#undef TFM_MPI_LOAD
    return true;
  }();
  if (!loaded)
    return makeError(error);
  return api;
}

namespace {
class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(const MpiApi &mpi, int rank, int size)
      : mpi(mpi), rank(rank), size(size) {}
  int getRank() const override { return rank; }
  int getSize() const override { return size; }
  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    mpi.Get_library_version(version, &length);
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
    return check(mpi.Reduce_scatter(data, shard, recvCounts.data(), MPI_FLOAT,
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
    return check(mpi.Allgatherv(send, recvCounts[rank], MPI_BYTE, data,
                                recvCounts.data(), offsets.data(), MPI_BYTE,
                                MPI_COMM_WORLD),
                 "all-gather");
  }

  llvm::Error gather(const void *shard, void *data,
                     llvm::ArrayRef<size_t> byteCounts, int root) override {
    std::vector<int> recvCounts, offsets;
    if (auto e = byteOffsets(byteCounts, recvCounts, offsets))
      return e;
    return check(mpi.Gatherv(shard, recvCounts[rank], MPI_BYTE, data,
                             recvCounts.data(), offsets.data(), MPI_BYTE, root,
                             MPI_COMM_WORLD),
                 "gather");
  }

  llvm::Error broadcast(void *data, size_t bytes, int root) override {
    if (bytes > size_t(INT32_MAX))
      return makeError("MPI broadcast of " + llvm::Twine(bytes) +
                       " bytes: beyond one call's 2^31");
    return check(mpi.Bcast(data, int(bytes), MPI_BYTE, root, MPI_COMM_WORLD),
                 "broadcast");
  }
  llvm::Expected<std::vector<std::string>>
  allGatherBytes(llvm::StringRef value) override {
    std::string all(value.size() * size_t(size), '\0');
    if (auto e = check(mpi.Allgather(value.data(), int(value.size()), MPI_BYTE,
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
    return check(mpi.Barrier(MPI_COMM_WORLD), "barrier");
  }
  [[noreturn]] void abortAll(int code) override {
    mpi.Abort(MPI_COMM_WORLD, code);
    std::_Exit(code); // MPI_Abort does not return; in case it does
  }

private:
  llvm::Error allReduce(void *data, size_t count, MPI_Datatype type,
                        const char *what) {
    // In pieces of at most 2^30 values (MPI counts are int).
    constexpr size_t piece = size_t(1) << 30;
    int typeSize = 0;
    mpi.Type_size(type, &typeSize);
    for (size_t at = 0; at < count; at += piece) {
      int n = int(std::min(piece, count - at));
      char *first = static_cast<char *>(data) + at * size_t(typeSize);
      if (auto e = check(mpi.Allreduce(MPI_IN_PLACE, first, n, type, MPI_SUM,
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
    mpi.Error_string(code, text, &length);
    return makeError("rank " + llvm::Twine(rank) + " of " + llvm::Twine(size) +
                     ": MPI " + what +
                     " failed: " + llvm::StringRef(text, length));
  }

  const MpiApi &mpi;
  int rank, size;
};
} // namespace

static void finalizeAtExit() {
  auto mpi = mpiApi();
  if (!mpi) {
    llvm::consumeError(mpi.takeError());
    return;
  }
  int finalized = 0;
  mpi->Finalized(&finalized);
  if (!finalized)
    mpi->Finalize();
}

llvm::Expected<std::unique_ptr<Communicator>>
mlir::tfm::createMpiCommunicator() {
  auto mpi = mpiApi();
  if (!mpi)
    return mpi.takeError();
  int initialized = 0;
  mpi->Initialized(&initialized);
  if (!initialized) {
    // Collectives are called from the thread that trains only.
    int provided = 0;
    if (mpi->Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
      return makeError("MPI_Init_thread failed");
    std::atexit(finalizeAtExit);
  }
  mpi->Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  mpi->Comm_rank(MPI_COMM_WORLD, &rank);
  mpi->Comm_size(MPI_COMM_WORLD, &size);
  return std::make_unique<MpiCommunicator>(*mpi, rank, size);
}
