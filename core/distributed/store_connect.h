#pragma once
// Joining the rendezvous store (c10d's TCPStore at MASTER_ADDR:MASTER_PORT)
// within the run's timeout, whatever is at that address. c10d bounds the
// wait for a peer that is not there yet, but not for one that accepts the
// connection and never answers (a stray server on the port): its client
// then waits forever. The connection is made on a thread of its own, and
// abandoned once the timeout (plus a few seconds for c10d's own error) has
// passed.
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <chrono>
#include <string>

#include "distributed/world_info.h"

namespace plab {

// The store, or DistributedError naming `who`, the address and why: c10d's
// own error, or "something at ADDR:PORT accepted the connection but did not
// answer as a rendezvous store" (a silent listener), or that nothing
// accepted a connection there.
c10::intrusive_ptr<c10d::Store> connectStoreWithin(const WorldInfo& world, const c10d::TCPStoreOptions& options,
                                                   const std::string& who);

// Whether a TCP connection to addr:port is accepted within `within`.
bool acceptsConnections(const std::string& addr, int port, std::chrono::milliseconds within);

}  // namespace plab
