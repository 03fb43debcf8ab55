// Host mode across processes: the interpreter's source on CPU threads, one process per
// participant, each process's ranks in its own memory and every other process's ranks reached
// through the proxy (weft/proxy/proxy.h) over the network engine — as ranks on other hosts are
// on a GPU. Processes of one machine given different WEFT_HOSTIDs act as different hosts; those
// of one host id still meet through the proxy (UCX then may use shared memory), since host-mode
// memory is private to its process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/transport.h"
#include "weft/proxy/proxy.h"

namespace weft::gpu {

struct HostNetworkOptions {
  std::string host;  // this process's host id (proxy::host_id)
  proxy::ProxyOptions proxy;
};

// Collective over `bootstrap` (one participant per process): exchanges hosts and ranks, starts
// the proxy (connecting every pair of processes), then serves windows like make_host_transport.
Result<std::shared_ptr<Transport>> make_host_network_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                               int nranks,
                                                               std::vector<int> local_ranks,
                                                               HostNetworkOptions options);

}  // namespace weft::gpu
