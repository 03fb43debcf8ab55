// The floor of a step: what one handshake through memory costs, measured as a flag ping-pong.
// One side writes a counter and waits for the other to answer with the same value; a round trip
// is two handshakes, so half of it is the least a step that waits for another CTA can take.
//   relaxed  relaxed stores and polls: the bare latency of a flag through the memory system;
//   ordered  the same with what a step also needs, a release fence before each store and an
//            acquire fence after each poll (the full step's pattern, primitives_cuda.cuh).
#pragma once

#include "weft/program/status.h"

namespace weft::latency {

enum class PingPongPlace { OneGrid, TwoGrids };

struct PingPongOptions {
  int round_trips = 10000;
  bool ordered = false;
  double timeout_s = 10;  // a side that never answers (two grids not resident together)
};

// Microseconds per handshake (half a round trip), on CPU threads: figures of the host, not of a
// GPU, but the same protocol, so that the benchmark's logic runs without one.
gpu::Result<double> pingpong_host(const PingPongOptions& options);

// Microseconds per handshake between thread 0 of two CTAs on `device`: of one grid, or of two
// grids launched on two streams. Defined only where weft-latency is built with CUDA.
gpu::Result<double> pingpong_cuda(int device, PingPongPlace place, const PingPongOptions& options);

}  // namespace weft::latency
