// Helpers of the proxy's tests: several participants of one communicator in this process, one
// thread each, every participant its own "host" (host id) and its own memory, so that every
// connection between them goes through the proxies over UCX exactly as between processes on
// different hosts. Catch2's assertions are not for other threads: a participant's thread only
// records what happened, and the test checks it afterwards.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device_call.h"
#include "perf_device.h"
#include "reference.h"
#include "weft/communicator/bootstrap.h"
#include "weft/communicator/communicator.h"
#include "weft/cpu/cpu_executor.h"
#include "weft/host/host_network.h"
#include "weft/ir/collective_spec.h"
#include "weft/ir/geometry.h"
#include "weft/proxy/engine.h"

namespace weft::proxy::testing {

// Whether UCX can be used here (its headers at build time, libucp at run time).
inline gpu::Status ucx_available() {
  auto engine = make_ucx_engine();
  return engine.ok() ? gpu::Status{} : engine.status();
}

struct Side {
  std::string host;
  std::vector<int> ranks;
  ProxyOptions proxy;
  // Runs instead of the plain rendezvous's Bootstrap when set (to stand in for a faulty peer).
  std::function<std::shared_ptr<gpu::Bootstrap>(std::shared_ptr<gpu::Bootstrap>)> wrap;
};

struct Outcome {
  gpu::Status status;     // the first failure: transport, load, call, or the call's error
  std::size_t wrong = 0;  // elements that differ from the CPU reference
  std::string network;    // the transport's network(), once it was made
  bool ran = false;       // the call was launched
};

struct CallSpec {
  std::size_t chunk_elements = 37;
  DataType dtype = DataType::Float;
  ReduceOp op = ReduceOp::Sum;
  bool in_place = false;
  int calls = 2;  // back to back: counters carry over from one call to the next
};

// Each side on its own thread: the transport, a communicator, the algorithm loaded, `spec.calls`
// calls run, the outputs checked against the CPU reference.
inline std::vector<Outcome> run_across(const std::vector<Side>& sides, const ir::Algorithm& algo,
                                       const gpu::RuntimeOptions& options, const CallSpec& spec) {
  const cpu::Executor executor(algo, standard_spec(algo, 0));
  const perf::Reference reference =
      perf::compute_reference(executor, spec.chunk_elements, spec.dtype, spec.op, 0, spec.in_place);
  const std::size_t total = spec.chunk_elements * static_cast<std::size_t>(algo.nchunksperloop);
  const std::size_t count =
      total / static_cast<std::size_t>(std::max(ir::count_multiplier(algo), 1));
  auto rendezvous =
      gpu::InProcessRendezvous::create(static_cast<int>(sides.size()), std::chrono::seconds(60));
  std::vector<Outcome> outcomes(sides.size());
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < sides.size(); ++p) {
    threads.emplace_back([&, p] {
      Outcome& out = outcomes[p];
      const Side& side = sides[p];
      auto joined = rendezvous->join(static_cast<int>(p));
      if (!joined.ok()) {
        out.status = joined.status();
        return;
      }
      std::shared_ptr<gpu::Bootstrap> bootstrap = std::move(joined.value());
      if (side.wrap) bootstrap = side.wrap(bootstrap);
      gpu::HostNetworkOptions network;
      network.host = side.host;
      network.proxy = side.proxy;
      auto transport = gpu::make_host_network_transport(bootstrap, algo.ngpus, side.ranks, network);
      if (!transport.ok()) {
        out.status = transport.status();
        return;
      }
      out.network = transport.value()->network();
      auto comm = gpu::Communicator::create(transport.value(), options);
      if (!comm.ok()) {
        out.status = comm.status();
        return;
      }
      auto handle = comm.value()->load(algo);
      if (!handle.ok()) {
        out.status = handle.status();
        return;
      }
      auto device = perf::make_host_perf_device();
      auto call =
          perf::DeviceCall::create(*device, *comm.value(), algo, count, spec.dtype, spec.in_place);
      if (!call.ok()) {
        out.status = call.status();
        return;
      }
      for (int k = 0; k < spec.calls && out.status.ok(); ++k) {
        if (gpu::Status s = call.value()->upload(reference); !s.ok()) {
          out.status = s;
          break;
        }
        out.ran = true;
        if (gpu::Status s = call.value()->run(*comm.value(), handle.value(), spec.op, 0, nullptr);
            !s.ok()) {
          out.status = s;
          break;
        }
        if (gpu::Status s = comm.value()->async_error(); !s.ok()) {
          out.status = s;
          break;
        }
        auto wrong = call.value()->count_wrong(reference);
        if (!wrong.ok()) {
          out.status = wrong.status();
          break;
        }
        out.wrong += wrong.value();
      }
      if (out.status.ok()) out.status = comm.value()->unload(handle.value());
    });
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

}  // namespace weft::proxy::testing
