#include "weft/dsl/postcondition.h"

#include <algorithm>

#include <fmt/format.h>

namespace weft::dsl {

namespace {

// Sum of the fingerprints of input chunk `chunk` of every rank, for each chunk: what a reducing
// collective expects, computed once per chunk rather than once per rank and chunk.
std::vector<Fingerprint> column_fingerprints(int ranks, int chunks) {
  std::vector<Fingerprint> columns(static_cast<std::size_t>(chunks));
  for (int k = 0; k < chunks; ++k) {
    for (int q = 0; q < ranks; ++q) columns[static_cast<std::size_t>(k)] += fingerprint_of({q, k});
  }
  return columns;
}

Fingerprint fingerprint_of(const std::vector<ChunkId>& chunks) {
  Fingerprint fp;
  for (const ChunkId& id : chunks) fp += weft::dsl::fingerprint_of(id);
  return fp;
}

// The last operation writing `at`: only looked for when a failure is reported, so a scan is fine.
std::string last_writer(const Program& program, const Location& at) {
  const auto& ops = program.operations();
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    if (it->dst.rank == at.rank && it->dst.buffer == at.buffer && it->dst.index <= at.index &&
        at.index < it->dst.index + it->size) {
      return describe(*it);
    }
  }
  return {};
}

}  // namespace

std::string PostconditionFailure::str() const {
  std::string text =
      fmt::format("rank {} output[{}]: expected {}, found ", rank, index, to_string(expected));
  if (found.empty()) return text + "nothing (no operation wrote it)";
  text += to_string(found);
  std::vector<ChunkId> missing;
  std::vector<Contribution> extra;
  std::vector<Contribution> repeated;
  for (const ChunkId& id : expected) {
    const auto it = std::find_if(found.begin(), found.end(),
                                 [&](const Contribution& c) { return c.chunk == id; });
    if (it == found.end()) missing.push_back(id);
  }
  for (const Contribution& c : found) {
    if (!std::binary_search(expected.begin(), expected.end(), c.chunk)) {
      extra.push_back(c);
    } else if (c.times > 1) {
      repeated.push_back(c);
    }
  }
  if (!missing.empty()) text += fmt::format("; missing {}", to_string(missing));
  if (!extra.empty()) text += fmt::format("; unexpected {}", to_string(extra));
  if (!repeated.empty()) text += fmt::format("; reduced more than once {}", to_string(repeated));
  if (!last_written_by.empty()) text += fmt::format(" (last written by {})", last_written_by);
  return text;
}

std::string PostconditionReport::str() const {
  if (ok()) return "postcondition holds";
  std::string text = fmt::format("postcondition fails for {} output chunk{}:", failure_count,
                                 failure_count == 1 ? "" : "s");
  for (const PostconditionFailure& failure : failures) text += "\n  " + failure.str();
  if (failure_count > failures.size()) {
    text += fmt::format("\n  ... and {} more", failure_count - failures.size());
  }
  return text;
}

PostconditionReport check_postcondition(const Program& program, std::size_t max_reported) {
  const Collective& coll = program.collective();
  const int n = coll.ranks();
  const int c = coll.chunk_factor();
  std::vector<Fingerprint> columns;
  switch (coll.kind()) {
    case ir::Collective::AllReduce:
    case ir::Collective::Reduce:
      columns = column_fingerprints(n, c);
      break;
    case ir::Collective::ReduceScatter:
      columns = column_fingerprints(n, n * c);
      break;
    default:
      break;
  }
  PostconditionReport report;
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < coll.output_chunks(r); ++k) {
      if (!coll.specified(r, k)) continue;
      Fingerprint expected;
      switch (coll.kind()) {
        case ir::Collective::AllReduce:
        case ir::Collective::Reduce:
          expected = columns[static_cast<std::size_t>(k)];
          break;
        case ir::Collective::ReduceScatter:
          expected = columns[static_cast<std::size_t>(r * c + k)];
          break;
        case ir::Collective::AllGather:
          expected = weft::dsl::fingerprint_of(ChunkId{k / c, k % c});
          break;
        case ir::Collective::AllToAll:
          expected = weft::dsl::fingerprint_of(ChunkId{k / c, r * c + k % c});
          break;
        case ir::Collective::Broadcast:
          expected = weft::dsl::fingerprint_of(ChunkId{coll.root(), k});
          break;
        case ir::Collective::Custom:
          expected = fingerprint_of(coll.expected(r, k));
          break;
      }
      const ir::Alias at = coll.resolve(r, ir::BufferKind::Output, k);
      const Location place{r, Buffer{at.buffer, -1}, at.chunk};
      const ContentId found = program.content(place);
      if (program.content_store().fingerprint(found) == expected) continue;
      ++report.failure_count;
      if (report.failures.size() < max_reported) {
        report.failures.push_back(PostconditionFailure{r, k, coll.expected(r, k),
                                                       program.content_store().expand(found),
                                                       last_writer(program, place)});
      }
    }
  }
  return report;
}

}  // namespace weft::dsl
