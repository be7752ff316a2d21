//===- Communicator.h - the ranks of a data-parallel run --------*- C++ -*-===//
//
// What the training loop needs from the processes it trains with: its rank,
// the world size and the collectives of data parallelism, over an existing
// engine (never a home-made transport):
//
// - one process (the default): every collective is the identity;
// - MPI (MPICH, linked when the build found it by pkg-config): processes
//   started by `mpirun.mpich -np N`, on the CPU;
// - NCCL (libnccl.so.2 opened at run time): GPUs, one per rank, its unique
//   id broadcast over MPI.
//
// Collectives are blocking and in rank order: every rank calls the same
// ones with the same counts. Sums of floating-point values are the same
// bits on every rank (the compiled optimizer step then runs on identical
// inputs everywhere); for two ranks they are also the bits one process
// gets adding the same two values.
//
//   llvm::Expected<Communicator &> world = getWorldCommunicator();
//   (*world).allReduceSum(grad.data(), grad.size());
//
//===----------------------------------------------------------------------===//

#ifndef TFM_DISTRIBUTED_COMMUNICATOR_H
#define TFM_DISTRIBUTED_COMMUNICATOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::tfm {

class Communicator {
public:
  virtual ~Communicator();

  virtual int getRank() const = 0;
  virtual int getSize() const = 0;
  /// "one process", "MPI (MPICH 4.0.2)", "NCCL 2.28.3".
  virtual std::string describe() const = 0;

  /// In place: every rank's `count` values summed, on every rank.
  virtual llvm::Error allReduceSum(float *data, size_t count) = 0;
  virtual llvm::Error allReduceSum(double *data, size_t count) = 0;
  virtual llvm::Error allReduceSum(int64_t *data, size_t count) = 0;

  /// ZeRO's pair. reduceScatterSum: `data` holds sum(counts) values on
  /// every rank; rank r receives in `shard` the sum over ranks of the
  /// counts[r] values at offset counts[0] + ... + counts[r-1].
  /// allGather: the inverse movement without a sum, in bytes (f32 master
  /// shards and bf16 model copies alike); rank r gives its byteCounts[r]
  /// bytes in `shard`, every rank receives all of them in `data`. `shard`
  /// may be the rank's own part of `data` (in place).
  virtual llvm::Error reduceScatterSum(const float *data, float *shard,
                                       llvm::ArrayRef<size_t> counts) = 0;
  virtual llvm::Error allGather(const void *shard, void *data,
                                llvm::ArrayRef<size_t> byteCounts) = 0;

  /// allGather's movement to rank `root` alone (`data` is only written
  /// there): what one rank needs to write a whole save.
  virtual llvm::Error gather(const void *shard, void *data,
                             llvm::ArrayRef<size_t> byteCounts, int root) = 0;

  /// Rank `root`'s `bytes` bytes at `data`, on every rank.
  virtual llvm::Error broadcast(void *data, size_t bytes, int root) = 0;
  /// Every rank's `value` (each the same size), in rank order.
  virtual llvm::Expected<std::vector<std::string>>
  allGatherBytes(llvm::StringRef value) = 0;
  /// Returns when every rank has called it.
  virtual llvm::Error barrier() = 0;

  /// Ends every rank's process with `code`, now: what a rank does when it
  /// cannot go on, since the others would wait for it in their next
  /// collective forever.
  [[noreturn]] virtual void abortAll(int code) = 0;
};

/// The process alone (world size 1); one per process.
Communicator &getSingleProcessCommunicator();

/// The processes of MPI_COMM_WORLD (initialising MPI on first use). An
/// error when the build has no MPI.
llvm::Expected<std::unique_ptr<Communicator>> createMpiCommunicator();

/// Whether this build has the MPI communicator.
bool haveMpi();

/// The run's world, made once per process: MPI's when a process manager
/// (mpirun.mpich) started this process as one of several ranks, one
/// process otherwise. Errors: started by Open MPI's mpirun (whose ranks
/// would each train alone), or by mpirun in a build without MPI.
llvm::Expected<Communicator &> getWorldCommunicator();

/// Refuses to go on when the ranks differ in `fingerprint` (a hash of what
/// each rank compiled and the options and data it trains with), naming the
/// first rank that differs from rank 0 and `what` it covers.
llvm::Error checkSameOnEveryRank(Communicator &comm, uint64_t fingerprint,
                                 llvm::StringRef what);

/// Splits `total` values into `size` dim-0 shards of whole rows of
/// `rowSize` values: the first ones take one row more when the rows do not
/// divide (a rank may own none). The counts, in values.
std::vector<size_t> shardCounts(int64_t rows, int64_t rowSize, int size);

} // namespace mlir::tfm

#endif // TFM_DISTRIBUTED_COMMUNICATOR_H
