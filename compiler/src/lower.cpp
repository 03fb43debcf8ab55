#include "weft/compiler/lower.h"

#include <algorithm>

namespace weft::compiler {

InstructionDag lower(const dsl::Program& program, const LowerOptions& options) {
  const dsl::Collective& coll = program.collective();
  const int n = program.ranks();
  InstructionDag dag;
  dag.ranks = n;
  dag.operations = &program.operations();
  const auto un = static_cast<std::size_t>(n);
  dag.input_chunks.resize(un);
  dag.output_chunks.resize(un);
  dag.scratch_chunks.resize(un);
  // Named scratch buffers of a rank, one after another in the order the program named them.
  const std::size_t named = program.scratch_names().size();
  std::vector<int> scratch_base(un * named, 0);
  for (int r = 0; r < n; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    dag.input_chunks[ur] = coll.input_chunks(r);
    dag.output_chunks[ur] = coll.output_chunks(r);
    int next = 0;
    for (std::size_t id = 0; id < named; ++id) {
      scratch_base[ur * named + id] = next;
      next += program.scratch_chunks(r, static_cast<int>(id));
    }
    dag.scratch_chunks[ur] = next;
  }
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < coll.output_chunks(r); ++k) {
      if (!coll.specified(r, k)) continue;
      const ir::Alias at = coll.resolve(r, ir::BufferKind::Output, k);
      dag.results.push_back(Slot{r, at.buffer, at.chunk});
    }
  }
  auto offset_of = [&](const dsl::Location& at) {
    if (at.buffer.kind != ir::BufferKind::Scratch) return at.index;
    return at.index + scratch_base[static_cast<std::size_t>(at.rank) * named +
                                   static_cast<std::size_t>(at.buffer.scratch)];
  };

  const std::vector<dsl::Operation>& operations = program.operations();
  dag.instructions.reserve(operations.size() * 2);
  const int piece = std::max(1, options.max_count - 1);
  for (std::size_t o = 0; o < operations.size(); ++o) {
    const dsl::Operation& op = operations[o];
    const int src_offset = offset_of(op.src);
    const int dst_offset = offset_of(op.dst);
    for (int start = 0; start < op.size; start += piece) {
      const int count = std::min(piece, op.size - start);
      Instruction base;
      base.count = count;
      base.operation = static_cast<int>(o);
      base.channel = op.hints.channel;
      if (op.cross_rank()) {
        Instruction send = base;
        send.type = ir::StepType::Send;
        send.rank = op.src.rank;
        send.srcbuf = op.src.buffer.kind;
        send.srcoff = src_offset + start;
        send.send_peer = op.dst.rank;
        send.sendtb = op.hints.sendtb;
        Instruction recv = base;
        recv.rank = op.dst.rank;
        recv.dstbuf = op.dst.buffer.kind;
        recv.dstoff = dst_offset + start;
        recv.recv_peer = op.src.rank;
        recv.recvtb = op.hints.recvtb;
        if (op.kind == dsl::OperationKind::Copy) {
          recv.type = ir::StepType::Recv;
        } else {
          // The local operand of a recv-reduce is the destination itself (docs/architecture.md
          // §2.5).
          recv.type = ir::StepType::RecvReduceCopy;
          recv.srcbuf = recv.dstbuf;
          recv.srcoff = recv.dstoff;
        }
        const int send_index = static_cast<int>(dag.instructions.size());
        send.send_to = send_index + 1;
        recv.recv_from = send_index;
        dag.instructions.push_back(send);
        dag.instructions.push_back(recv);
      } else {
        Instruction local = base;
        local.type =
            op.kind == dsl::OperationKind::Copy ? ir::StepType::Copy : ir::StepType::Reduce;
        local.rank = op.src.rank;
        local.srcbuf = op.src.buffer.kind;
        local.srcoff = src_offset + start;
        local.dstbuf = op.dst.buffer.kind;
        local.dstoff = dst_offset + start;
        local.sendtb = op.hints.sendtb >= 0 ? op.hints.sendtb : op.hints.recvtb;
        dag.instructions.push_back(local);
      }
    }
  }
  compute_dependencies(dag);
  return dag;
}

}  // namespace weft::compiler
