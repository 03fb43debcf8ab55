#include "weft/tuning/contest.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

namespace weft::tuning {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// An entry still in the contest, by its field and its index there (twins name their field's
// indices, which stay put while the proofs leave entries out).
struct Seat {
  std::size_t field;
  std::size_t entry;
  bool proved;
};

// Proves one candidate by its entry's proof; nothing when it proves (or was proved), else why not.
std::optional<std::string> prove_entry(const Entry& entry, const Candidate& candidate,
                                       const ContestRequest& request, double& seconds) {
  if (!entry.prove) return std::nullopt;
  if (request.on_prove) request.on_prove(candidate.name);
  const auto started = Clock::now();
  auto why = entry.prove(candidate);
  seconds += seconds_since(started);
  return why;
}

}  // namespace

std::vector<std::string> Contest::all_rejected() const {
  std::vector<std::string> all;
  for (const auto& field : rejected) all.insert(all.end(), field.begin(), field.end());
  return all;
}

std::size_t Contest::proved_count() const {
  return static_cast<std::size_t>(std::count(proved.begin(), proved.end(), true));
}

Contest run_contest(std::vector<Field> fields, const predict::Topology& topology,
                    const ContestRequest& request) {
  std::optional<std::size_t> prunable;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    if (!fields[f].floor_us) continue;
    if (prunable) {
      // The pruned candidates are one range of the list (TuneRequest::prunable_first).
      throw std::invalid_argument(
          fmt::format("contest: two sources with a lower bound ({} and {}); at most one is pruned",
                      fields[*prunable].source, fields[f].source));
    }
    prunable = f;
  }
  for (const Field& field : fields) {
    for (const Entry& entry : field.entries) {
      if (entry.twin < -1 || entry.twin >= static_cast<int>(field.entries.size())) {
        throw std::invalid_argument(fmt::format("contest: {}'s twin {} is not another of {}'s {}",
                                                entry.candidate.name, entry.twin, field.source,
                                                field.entries.size()));
      }
    }
  }

  Contest contest;
  for (Field& field : fields) contest.rejected.push_back(std::move(field.rejected));
  // The candidates move out of their entries once, in field order, and stay beside their seats:
  // a sketch for a thousand GPUs is large, and a copy per round of proofs would double the
  // memory synthesis takes.
  std::vector<Seat> seats;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    for (std::size_t e = 0; e < fields[f].entries.size(); ++e) {
      seats.push_back({f, e, !fields[f].entries[e].prove});
      contest.candidates.push_back(std::move(fields[f].entries[e].candidate));
    }
  }
  const auto entry_of = [&fields](const Seat& seat) -> const Entry& {
    return fields[seat.field].entries[seat.entry];
  };
  const auto leave_out = [&](std::size_t k) {
    seats.erase(seats.begin() + static_cast<std::ptrdiff_t>(k));
    contest.candidates.erase(contest.candidates.begin() + static_cast<std::ptrdiff_t>(k));
  };
  // With prove_all every candidate is written (`weftc synthesize --all`), so every one is proved
  // first; else only what wins a band is, below: proving every sketch was most of synthesis on
  // many nodes (eight A100 nodes' allreduce: about four of its five seconds, for nine sketches
  // of which one wins).
  for (std::size_t k = 0; request.prove_all && k < seats.size();) {
    if (request.max_threadblocks > 0 &&
        busiest_threadblocks(contest.candidates[k].algorithm) > request.max_threadblocks) {
      ++k;
      continue;
    }
    if (auto why = prove_entry(entry_of(seats[k]), contest.candidates[k], request,
                               contest.prove_seconds)) {
      contest.rejected[seats[k].field].push_back(std::move(*why));
      leave_out(k);
      continue;
    }
    seats[k++].proved = true;
  }

  TuneRequest ask;
  ask.collective = request.collective;
  ask.sizes = request.sizes;
  ask.in_place = request.in_place;
  ask.with_nccl = request.with_nccl;
  ask.on_predict = request.on_predict;
  ask.max_threadblocks = request.max_threadblocks;
  if (prunable) {
    ask.floor_us = fields[*prunable].floor_us;
    ask.prunable_backwards = fields[*prunable].backwards;
    ask.gap = request.gap;
  }
  while (true) {
    ask.prunable_first = 0;
    ask.prunable = 0;
    ask.twins.assign(seats.size(), -1);
    for (std::size_t k = 0; k < seats.size(); ++k) {
      const Seat& seat = seats[k];
      if (prunable && seat.field == *prunable) {
        if (ask.prunable == 0) ask.prunable_first = k;
        ++ask.prunable;
      }
      // The twin's seat, where it is still in the contest.
      const int twin = entry_of(seat).twin;
      for (std::size_t j = 0; twin >= 0 && j < seats.size(); ++j) {
        if (seats[j].field == seat.field && seats[j].entry == static_cast<std::size_t>(twin)) {
          ask.twins[k] = static_cast<int>(j);
        }
      }
    }
    ask.rejected = contest.all_rejected();
    const auto started = Clock::now();
    contest.tuning = tune(contest.candidates, topology, ask);
    contest.predict_seconds += seconds_since(started);
    // The winners, proved; one that does not prove is left out, and the rest are chosen among
    // again (each proof holds for the others: nothing else changes).
    std::optional<std::size_t> failed;
    for (const Band& band : contest.tuning.bands) {
      const auto k = static_cast<std::size_t>(band.contender);
      if (k >= seats.size() || seats[k].proved) continue;
      if (auto why = prove_entry(entry_of(seats[k]), contest.candidates[k], request,
                                 contest.prove_seconds)) {
        contest.rejected[seats[k].field].push_back(std::move(*why));
        failed = k;
        break;
      }
      seats[k].proved = true;
    }
    if (!failed) break;
    leave_out(*failed);
  }
  contest.field_sizes.assign(fields.size(), 0);
  for (const Seat& seat : seats) {
    ++contest.field_sizes[seat.field];
    contest.proved.push_back(seat.proved);
  }
  return contest;
}

}  // namespace weft::tuning
