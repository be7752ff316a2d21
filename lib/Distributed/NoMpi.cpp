//===- NoMpi.cpp - a build without MPI ------------------------------------===//
//
// Built in place of MpiCommunicator.cpp when pkg-config found no MPICH:
// one process trains, and a run started by mpirun says why it cannot.
//
//===----------------------------------------------------------------------===//

#include "tfm/Distributed/Communicator.h"
#include "tfm/Support/Error.h"

using namespace mlir::tfm;

bool mlir::tfm::haveMpi() { return false; }

llvm::Expected<std::unique_ptr<Communicator>>
mlir::tfm::createMpiCommunicator() {
  return makeError("started by mpirun as one of several ranks, but this tfm "
                   "was built without MPI (install libmpich-dev and "
                   "reconfigure)");
}
