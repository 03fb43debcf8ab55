// CUDA IPC among the processes of a host, the proxy (weft/proxy/proxy.h) between hosts: the
// transport of a communicator whose ranks span hosts (docs/architecture.md §6). Processes with
// the same host id share memory as make_ipc_transport's do; a connection to a rank of another
// host has its ends in mapped host memory that the kernel and the proxy both reach, and the
// proxy moves its messages over the network engine, staging through that pinned memory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "weft/communicator/bootstrap.h"
#include "weft/communicator/transport.h"
#include "weft/proxy/proxy.h"

namespace weft::gpu {

struct CudaNetworkOptions {
  std::string host;  // this process's host id (proxy::host_id)
  proxy::ProxyOptions proxy;
};

// Collective over `bootstrap`. Where every participant shares one host it is
// make_ipc_transport; otherwise each participant starts the proxy.
Result<std::shared_ptr<Transport>> make_ipc_network_transport(std::shared_ptr<Bootstrap> bootstrap,
                                                              int nranks,
                                                              std::vector<int> local_ranks,
                                                              int device,
                                                              CudaNetworkOptions options);

}  // namespace weft::gpu
