//===- Communicator.cpp - one process, and the run's world ----------------===//

#include "tfm/Distributed/Communicator.h"
#include "tfm/Support/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir::tfm;

Communicator::~Communicator() = default;

namespace {
/// World size 1: every collective leaves the values as they are.
class SingleProcess final : public Communicator {
public:
  int getRank() const override { return 0; }
  int getSize() const override { return 1; }
  std::string describe() const override { return "one process"; }
  llvm::Error allReduceSum(float *, size_t) override {
    return llvm::Error::success();
  }
  llvm::Error allReduceSum(double *, size_t) override {
    return llvm::Error::success();
  }
  llvm::Error allReduceSum(int64_t *, size_t) override {
    return llvm::Error::success();
  }
  llvm::Error reduceScatterSum(const float *data, float *shard,
                               llvm::ArrayRef<size_t> counts) override {
    if (data != shard)
      std::memmove(shard, data, counts[0] * sizeof(float));
    return llvm::Error::success();
  }
  llvm::Error allGather(const void *shard, void *data,
                        llvm::ArrayRef<size_t> byteCounts) override {
    if (data != shard)
      std::memmove(data, shard, byteCounts[0]);
    return llvm::Error::success();
  }
  llvm::Error gather(const void *shard, void *data,
                     llvm::ArrayRef<size_t> byteCounts, int) override {
    return allGather(shard, data, byteCounts);
  }
  llvm::Error broadcast(void *, size_t, int) override {
    return llvm::Error::success();
  }
  llvm::Expected<std::vector<std::string>>
  allGatherBytes(llvm::StringRef value) override {
    return std::vector<std::string>{value.str()};
  }
  llvm::Error barrier() override { return llvm::Error::success(); }
  [[noreturn]] void abortAll(int code) override { std::exit(code); }
};
} // namespace

Communicator &mlir::tfm::getSingleProcessCommunicator() {
  static SingleProcess alone;
  return alone;
}

/// The size a process manager announced to this process, if any: MPICH's
/// Hydra (PMI_SIZE) or Open MPI's (OMPI_COMM_WORLD_SIZE).
static int announcedSize(const char *variable) {
  std::optional<std::string> v = llvm::sys::Process::GetEnv(variable);
  int size = 0;
  if (!v || llvm::StringRef(*v).getAsInteger(10, size))
    return 0;
  return size;
}

llvm::Expected<Communicator &> mlir::tfm::getWorldCommunicator() {
  static std::once_flag once;
  static std::unique_ptr<Communicator> mpi;
  static Communicator *world = nullptr;
  static std::string error;
  std::call_once(once, [] {
    int mpich = announcedSize("PMI_SIZE");
    int openMpi = announcedSize("OMPI_COMM_WORLD_SIZE");
    if (mpich > 1) {
      auto made = createMpiCommunicator();
      if (made) {
        mpi = std::move(*made);
        world = mpi.get();
      } else {
        error = llvm::toString(made.takeError());
      }
    } else if (openMpi > 1 && !mpich) {
      // Each rank would initialise MPICH as a world of one and train alone.
      error = "started by Open MPI's mpirun (" + std::to_string(openMpi) +
              " processes): tfm uses MPICH; start it with mpirun.mpich";
    } else {
      world = &getSingleProcessCommunicator();
    }
  });
  if (!world)
    return makeError(error);
  return *world;
}

llvm::Error mlir::tfm::checkSameOnEveryRank(Communicator &comm,
                                            uint64_t fingerprint,
                                            llvm::StringRef what) {
  char bytes[sizeof(fingerprint)];
  std::memcpy(bytes, &fingerprint, sizeof(bytes));
  auto all = comm.allGatherBytes(llvm::StringRef(bytes, sizeof(bytes)));
  if (!all)
    return all.takeError();
  for (size_t r = 1; r < all->size(); ++r)
    if ((*all)[r] != (*all)[0])
      return makeError("rank " + llvm::Twine(r) + " of " +
                       llvm::Twine(all->size()) + " differs from rank 0 in " +
                       what + ": every rank must be started the same way");
  return llvm::Error::success();
}

std::vector<size_t> mlir::tfm::shardCounts(int64_t rows, int64_t rowSize,
                                           int size) {
  std::vector<size_t> counts;
  for (int r = 0; r < size; ++r) {
    int64_t mine = rows / size + (r < rows % size ? 1 : 0);
    counts.push_back(size_t(mine * rowSize));
  }
  return counts;
}
