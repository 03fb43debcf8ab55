// NCCL's own tuning figures, the one place both the NCCL baseline model and the cost defaults
// read them from. Source: NVIDIA/nccl master (2.2x), src/graph/tuning.cc (the tuner constants'
// defaults, the tree correction factors), src/graph/topo.h (per-link bandwidths) and
// src/graph/search.cc (the speeds the channel search tries). Latencies in us, bandwidths in GB/s.
//
// Indices follow NCCL, not Weft: protocol LL = 0, LL128 = 1, Simple = 2 (nccl_protocol() maps
// ir::Protocol); algorithm Tree = 0, Ring = 1; hardware NVLink = 0, PCI = 1, network = 2; GPU
// generation Volta = 0, Ampere = 1, Hopper = 2, Blackwell = 3; node-count column 1, 2, >2 nodes.
#pragma once

#include <array>
#include <cstddef>

#include "weft/ir/ir.h"

namespace weft::predict::nccl {

inline constexpr std::size_t kLL = 0, kLL128 = 1, kSimple = 2;
inline constexpr std::size_t kTree = 0, kRing = 1;
inline constexpr std::size_t kHwNvlink = 0, kHwPci = 1, kHwNet = 2;

constexpr std::size_t nccl_protocol(ir::Protocol p) {
  return p == ir::Protocol::LL ? kLL : p == ir::Protocol::LL128 ? kLL128 : kSimple;
}

// tuning.cc, baseLatencies: per call, by algorithm and protocol.
inline constexpr double kBaseLatency[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};

// tuning.cc, hwLatencies: per step, by hardware, algorithm and protocol.
inline constexpr double kHwLatency[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},   // NVLink: Tree, Ring
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},    // PCI
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}},  // network
};

// tuning.cc, llMaxBws: LL's bus bandwidth ceiling. Row: on one node the GPU generation, on more
// the CPU (0 Intel, 1 AMD); column: nodes 1, 2, >2.
inline constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
// tuning.cc, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws: per-channel ceilings
// by GPU generation and node column.
inline constexpr double kPerChMaxRingLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
inline constexpr double kPerChMaxTreeLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
inline constexpr double kPerChMaxTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};

// tuning.cc, the bandwidth factors of the model refinements.
inline constexpr double kRingLLFactor = 0.5;      // LL moves 8 bytes for 4 of payload
inline constexpr double kRingLL128Factor = 0.92;  // NCCL's stand-in for 120/128
inline constexpr double kTreeFactor = 0.92;       // tree allreduce
inline constexpr double kTreeLLFactor = 1.0 / 3.8;
inline constexpr double kTreeLL128FactorOneNode = 7.0 / 9.0;
inline constexpr double kTreeLL128FactorNodes = 120.0 / 128.0;
// Ring Simple allreduce across nodes: "plateau effect", the latency multiplied by 1.4 (1.9
// before Ampere) once each channel and rank has at least 64 bytes.
inline constexpr double kRingPlateau = 1.4, kRingPlateauVolta = 1.9;
// Per-step network post overhead (getNetOverhead): 1 us on Intel, 2 us on AMD; x3 for Simple.
inline constexpr double kNetOverheadIntel = 1.0, kNetOverheadAmd = 2.0;

// tuning.cc, treeCorrectionFactor: tree allreduce bandwidth by protocol and log2(bytes / 64).
inline constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

// topo.h: what NCCL counts per NVLink link by generation (SM70/80/90/100_NVLINK_BW; 86: 12).
constexpr double nvlink_link_bw(int sm) {
  return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0 : sm >= 70 ? 20.0 : 18.0;
}
// topo.cc: a PCIe link counts width x (GT/s x 7.5) / 80 GB/s: Gen4 x16 24, Gen5 x16 48. Weft's
// PCIe links hold the line rate after 128b/130b, so NCCL's figure is that times 0.75 x 130/128.
inline constexpr double kPciShareOfLineRate = 0.75 * 130.0 / 128.0;

// search.cc: the per-channel speeds the search tries, fastest first; intra (one node) and
// inter, before Hopper and from Hopper on (Blackwell's arrays are not modelled).
inline constexpr std::array kSpeedIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                        9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
inline constexpr std::array kSpeedInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array kSpeedIntraSm90{60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                            15.0, 12.0, 11.0, 6.0,  3.0};
inline constexpr std::array kSpeedInterSm90{48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                            15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
// init.cc: the ring search looks for at most MAXCHANNELS / 2 channels.
inline constexpr int kMaxRingChannels = 32;

constexpr std::size_t generation(int sm) {
  return sm >= 100 ? 3 : sm >= 90 ? 2 : sm >= 80 ? 1 : 0;
}

}  // namespace weft::predict::nccl
