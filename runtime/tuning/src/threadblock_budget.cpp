#include "weft/tuning/threadblock_budget.h"

#include <fmt/format.h>

namespace weft::tuning {

int nccl_channel_ceiling(int sm) {
  return sm >= 100 ? 16 : 32;
}

std::string gpu_generation(int sm) {
  if (sm <= 0) return "an unknown GPU";
  if (sm < 75) return "Volta";
  if (sm < 80) return "Turing";
  if (sm < 89) return "Ampere";
  if (sm < 90) return "Ada";
  if (sm < 100) return "Hopper";
  return "Blackwell";
}

ThreadblockBudget threadblock_budget(const predict::Topology& topology, int asked) {
  if (asked > 0) return {asked, "--max-threadblocks"};
  const int sm = topology.machine().gpu_sm;
  return {nccl_channel_ceiling(sm),
          fmt::format("NCCL's channel ceiling on {}{}; --max-threadblocks sets another",
                      gpu_generation(sm), sm > 0 ? fmt::format(", sm {}", sm) : std::string())};
}

}  // namespace weft::tuning
