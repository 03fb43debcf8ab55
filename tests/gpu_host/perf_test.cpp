// weft-perf's host side: arguments, size sweep, row geometry, bus factors, the table, and the
// reference/comparison helpers the GPU checks rely on.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "builtin_algorithms.h"
#include "memory_estimate.h"
#include "perf_options.h"
#include "perf_report.h"
#include "reference.h"
#include "weft/ir/collective_spec.h"

namespace weft::perf {
namespace {

ParseOutcome parse(std::vector<const char*> args) {
  args.insert(args.begin(), "weft-perf");
  return parse_perf_options(static_cast<int>(args.size()), args.data());
}

TEST_CASE("nccl-tests flags parse", "[perf]") {
  const ParseOutcome o =
      parse({"--builtin", "ring:2", "--ranks", "8",   "-b", "1K", "-e",      "256M",
             "-f",        "4",      "-n",      "100", "-w", "3",  "-c",      "0",
             "-d",        "bf16",   "-o",      "max", "-G", "10", "--proto", "LL128"});
  INFO(o.text);
  REQUIRE(o.options);
  const PerfOptions& p = *o.options;
  CHECK(p.builtin == "ring:2");
  CHECK(p.ranks == 8);
  CHECK(p.min_bytes == 1024);
  CHECK(p.max_bytes == std::size_t{256} << 20);
  CHECK(p.step_factor == 4);
  CHECK(p.iterations == 100);
  CHECK(p.warmup == 3);
  CHECK_FALSE(p.check);
  CHECK(p.dtype == DataType::Bfloat16);
  CHECK(p.op == ReduceOp::Max);
  CHECK(p.graph_launches == 10);
  CHECK(p.protocol == ir::Protocol::LL128);
}

TEST_CASE("defaults follow nccl-tests and one bound moves the other", "[perf]") {
  auto o = parse({"alg.xml", "--ranks", "2"});
  REQUIRE(o.options);
  CHECK(o.options->xml == "alg.xml");
  CHECK(o.options->min_bytes == std::size_t{32} << 20);
  CHECK(o.options->max_bytes == std::size_t{32} << 20);
  CHECK(o.options->iterations == 20);
  CHECK(o.options->warmup == 5);
  CHECK(o.options->check);
  o = parse({"alg.xml", "--ranks", "2", "-e", "1K"});
  REQUIRE(o.options);
  CHECK(o.options->min_bytes == 1024);
  o = parse({"alg.xml", "--ranks", "2", "-b", "1G"});
  REQUIRE(o.options);
  CHECK(o.options->max_bytes == std::size_t{1} << 30);
}

TEST_CASE("multi-process mode needs rank, nranks and rendezvous", "[perf]") {
  auto o =
      parse({"--builtin", "ring", "--rank", "1", "--nranks", "4", "--rendezvous", "host:1234"});
  REQUIRE(o.options);
  CHECK(o.options->rank == 1);
  CHECK(o.options->nranks == 4);
  CHECK_FALSE(parse({"--builtin", "ring", "--rank", "1", "--nranks", "4"}).options);
  CHECK_FALSE(
      parse({"--builtin", "ring", "--rank", "4", "--nranks", "4", "--rendezvous", "h:1"}).options);
  CHECK_FALSE(parse({"--builtin", "ring", "--ranks", "2", "--rank", "0", "--nranks", "2",
                     "--rendezvous", "h:1"})
                  .options);
}

TEST_CASE("the rendezvous takes the text weftMakeRendezvous writes, secret included", "[perf]") {
  const std::string secret(32, 'a');
  const std::string tcp_text = "127.0.0.1:29500#" + secret;
  const std::string local_text = "unix:weft-0123456789abcdef#" + secret;
  CHECK(
      parse({"--builtin", "ring", "--rank", "1", "--nranks", "2", "--rendezvous", tcp_text.c_str()})
          .options);
  CHECK(parse({"--builtin", "ring", "--rank", "1", "--nranks", "2", "--rendezvous",
               local_text.c_str()})
            .options);
  // A damaged secret is named, not taken for no secret.
  auto damaged = parse({"--builtin", "ring", "--rank", "1", "--nranks", "2", "--rendezvous",
                        "127.0.0.1:29500#00ff"});
  CHECK_FALSE(damaged.options);
  CHECK_THAT(damaged.text, Catch::Contains("--rendezvous") && Catch::Contains("32 lowercase hex"));
}

TEST_CASE("the device is a number or host", "[perf]") {
  auto gpu = parse({"--builtin", "ring", "--ranks", "4", "--device", "3"});
  REQUIRE(gpu.options);
  CHECK(gpu.options->device == 3);
  CHECK_FALSE(gpu.options->host);
  auto host = parse({"--builtin", "ring", "--ranks", "4", "--device", "host"});
  REQUIRE(host.options);
  CHECK(host.options->host);
  for (const char* bad : {"-1", "gpu", "3x", ""}) {
    const ParseOutcome o = parse({"--builtin", "ring", "--ranks", "4", "--device", bad});
    CHECK_FALSE(o.options);
    CHECK(o.exit_code == 2);
  }
  // Host mode also runs a process per rank, the others reached through the proxy.
  const ParseOutcome multi = parse({"--builtin", "ring", "--device", "host", "--rank", "0",
                                    "--nranks", "2", "--rendezvous", "h:1"});
  REQUIRE(multi.options);
  CHECK(multi.options->host);
  CHECK(multi.options->nranks == 2);
  // ... but not both ways at once.
  const ParseOutcome both = parse({"--builtin", "ring", "--device", "host", "--ranks", "2",
                                   "--rank", "0", "--nranks", "2", "--rendezvous", "h:1"});
  CHECK_FALSE(both.options);
  CHECK_THAT(both.text, Catch::Contains("exclude each other"));
}

TEST_CASE("any-size sets the file's band aside; without it the band stands", "[perf]") {
  auto any = parse({"--builtin", "ring", "--ranks", "4", "--any-size"});
  REQUIRE(any.options);
  CHECK(any.options->any_size);
  auto plain = parse({"--builtin", "ring", "--ranks", "4"});
  REQUIRE(plain.options);
  CHECK_FALSE(plain.options->any_size);
}

TEST_CASE("bad arguments fail with a message and exit code 2; help exits 0", "[perf]") {
  for (const auto& args : std::vector<std::vector<const char*>>{
           {"--ranks", "2"},                                   // no algorithm
           {"--builtin", "ring"},                              // no mode
           {"--builtin", "ring", "--ranks", "2", "-b", "1X"},  // bad size
           {"--builtin", "ring", "--ranks", "2", "-b", "2M", "-e", "1M"},
           {"--builtin", "ring", "--ranks", "2", "-d", "complex"},
           {"--builtin", "ring", "--ranks", "2", "-o", "xor"},
           {"--builtin", "ring", "--ranks", "2", "--proto", "LL64"},
           {"--builtin", "ring", "--ranks", "2", "-f", "1"},
           {"--builtin", "ring", "--ranks", "2", "--bogus"},
           {"a.xml", "--builtin", "ring", "--ranks", "2"}}) {
    const ParseOutcome o = parse(args);
    CHECK_FALSE(o.options);
    CHECK(o.exit_code == 2);
    CHECK_THAT(o.text, Catch::StartsWith("weft-perf: "));
  }
  const ParseOutcome help = parse({"--help"});
  CHECK_FALSE(help.options);
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.text, Catch::Contains("--ranks") && Catch::Contains("-G"));
}

TEST_CASE("an XML file without --ranks is emulated at the file's rank count", "[perf]") {
  const std::string ring = std::string(WEFT_TEST_DATA_DIR) + "/xml/ring_allreduce_4r.xml";
  const ParseOutcome o = parse({"--xml", ring.c_str(), "--device", "host"});
  INFO(o.text);
  REQUIRE(o.options);
  CHECK(o.options->ranks == 4);
  // A file that does not read is named, with the reader's place, before anything runs.
  const std::string missing = std::string(WEFT_TEST_DATA_DIR) + "/xml/no-such-file.xml";
  const ParseOutcome bad = parse({"--xml", missing.c_str()});
  CHECK_FALSE(bad.options);
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.text, Catch::Contains("no-such-file.xml"));
  // --builtin has no file to ask: it still needs --ranks.
  CHECK_THAT(parse({"--builtin", "ring"}).text, Catch::Contains("give --ranks N"));
}

TEST_CASE("out-of-range numbers name a range a person can read", "[perf]") {
  for (const auto& args : std::vector<std::vector<const char*>>{
           {"--builtin", "ring", "--ranks", "2", "--root", "-1"},
           {"--builtin", "ring", "--rank", "-1", "--nranks", "2", "--rendezvous", "h:1"},
           {"--builtin", "ring", "--ranks", "2", "--timeout", "0"}}) {
    const ParseOutcome o = parse(args);
    INFO(o.text);
    CHECK_FALSE(o.options);
    CHECK(o.exit_code == 2);
    CHECK_THAT(o.text, Catch::Contains("not in range"));
    CHECK(o.text.size() < 200);  // no 300-digit bound
  }
}

TEST_CASE("the memory estimate counts every rank's buffers and the reference", "[perf]") {
  const ir::Algorithm ring = builtin_algorithm("ring", 4, ir::Protocol::Simple).value();
  const std::size_t count = std::size_t{16} << 20;  // 64 MB of floats per rank
  const MemoryEstimate checked =
      estimate_memory(ring, {1024, count}, DataType::Float, 4, true, true);
  // An allreduce: each rank holds its input and output, 64 MB each.
  CHECK(checked.buffers == std::uint64_t{4} * 2 * (std::uint64_t{64} << 20));
  CHECK(checked.reference == 2 * checked.buffers);
  // Measured at this shape: 817 MB without a check, 1.96 GB with one (memory_estimate.cpp).
  const MemoryEstimate unchecked = estimate_memory(ring, {count}, DataType::Float, 4, false, true);
  CHECK(unchecked.total >= 817'000'000);
  CHECK(unchecked.total <= 1'100'000'000);
  CHECK(checked.total >= 1'960'000'000);
  CHECK(checked.total <= 2'600'000'000);
  // On a GPU the buffers are the device's: only the reference is host memory.
  CHECK(estimate_memory(ring, {count}, DataType::Float, 4, false, false).total == 0);
  // The limit: --max-memory as given, else a share of what the machine has available.
  CHECK(memory_limit(std::uint64_t{1} << 30) == std::uint64_t{1} << 30);
  const auto machine = memory_limit(std::nullopt);
  REQUIRE(machine.has_value());
  CHECK(*machine > 0);
  CHECK(human_bytes(17'179'869'184) == "17.2 GB");
}

TEST_CASE("weft-perf --max-memory takes a size", "[perf]") {
  const ParseOutcome o = parse({"--builtin", "ring", "--ranks", "2", "--max-memory", "8G"});
  REQUIRE(o.options);
  CHECK(o.options->max_memory == std::uint64_t{8} << 30);
  CHECK_THAT(parse({"--builtin", "ring", "--ranks", "2", "--max-memory", "lots"}).text,
             Catch::Contains("--max-memory"));
}

TEST_CASE("the size sweep multiplies from -b to -e inclusive", "[perf]") {
  CHECK(size_sweep(1024, 8192, 2) == std::vector<std::size_t>{1024, 2048, 4096, 8192});
  CHECK(size_sweep(1024, 10000, 4) == std::vector<std::size_t>{1024, 4096});
  CHECK(size_sweep(100, 100, 2) == std::vector<std::size_t>{100});
  CHECK(size_sweep(1, ~std::size_t{0}, 2).size() == 64);  // stops before overflowing
  CHECK(size_sweep(0, 100, 2).empty());
}

TEST_CASE("rows round the count to what the algorithm divides", "[perf]") {
  const ir::Algorithm ring = ring_allreduce(8, ir::Protocol::Simple);  // 8 chunks
  RowCall row = row_call(ring, 1024, DataType::Float);
  CHECK(row.count == 256);
  CHECK(row.bytes == 1024);
  row = row_call(ring, 1000, DataType::Float);  // 250 → 248
  CHECK(row.count == 248);
  CHECK(row.bytes == 992);
  row = row_call(ring, 4, DataType::Float);  // below one element per chunk: one per chunk
  CHECK(row.count == 8);
  const ir::Algorithm gather = ring_allgather(8, ir::Protocol::Simple);  // m = 8, 8 chunks
  row = row_call(gather, 1024, DataType::Float);
  CHECK(row.count == 32);
  CHECK(row.total_elements == 256);
}

TEST_CASE("bus factors are nccl-tests'", "[perf]") {
  CHECK(bus_factor(ir::Collective::AllReduce, 8) == Approx(1.75));
  CHECK(bus_factor(ir::Collective::AllGather, 8) == Approx(0.875));
  CHECK(bus_factor(ir::Collective::ReduceScatter, 4) == Approx(0.75));
  CHECK(bus_factor(ir::Collective::AllToAll, 2) == Approx(0.5));
  CHECK(bus_factor(ir::Collective::Broadcast, 8) == Approx(1.0));
  CHECK(bus_factor(ir::Collective::Reduce, 8) == Approx(1.0));
}

TEST_CASE("measurements become algbw, busbw and copy-bandwidth fractions", "[perf]") {
  const ModeResult m = measure(1'000'000, 10.0, 1.75, 4'000'000, 800.0, 0);
  CHECK(m.algbw_gbs == Approx(100.0));
  CHECK(m.busbw_gbs == Approx(175.0));
  CHECK(m.copy_fraction == Approx(0.5));
  Row row;
  row.bytes = 1'000'000;
  row.count = 250'000;
  row.out_of_place = m;
  const std::string line = format_row(row);
  CHECK_THAT(line, Catch::Contains("1000000") && Catch::Contains("175.00") &&
                       Catch::Contains("50.0") && Catch::Contains("N/A"));
  CHECK_THAT(table_header(),
             Catch::Contains("busbw") && Catch::Contains("#wrong") && Catch::Contains("devbytes"));
  CHECK_THAT(table_footer(0, 1.5), Catch::Contains("0 OK"));
  CHECK_THAT(table_footer(3, 1.5), Catch::Contains("3 FAILED"));
}

TEST_CASE("built-in algorithms by name", "[perf]") {
  auto ring = builtin_algorithm("ring:4", 8, ir::Protocol::LL);
  REQUIRE(ring.ok());
  CHECK(ring.value().nchannels == 4);
  CHECK(ring.value().protocol == ir::Protocol::LL);
  CHECK(builtin_algorithm("allpairs", 8, ir::Protocol::Simple).ok());
  CHECK(builtin_algorithm("allgather-ring", 4, ir::Protocol::Simple).ok());
  CHECK_FALSE(builtin_algorithm("tree", 8, ir::Protocol::Simple).ok());
  CHECK_FALSE(builtin_algorithm("ring:0", 8, ir::Protocol::Simple).ok());
  CHECK_FALSE(builtin_algorithm("ring", 1, ir::Protocol::Simple).ok());
}

TEST_CASE("in-place layouts follow NCCL's aliasing", "[perf]") {
  const ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple);
  CallLayout l = call_layout(ring, 2, 400, 4, false);
  CHECK(l.send_bytes == 1600);
  CHECK(l.recv_bytes == 1600);
  l = call_layout(ring, 2, 400, 4, true);
  CHECK(l.recv_bytes == 1600);
  CHECK(l.send_offset == 0);
  const ir::Algorithm gather = ring_allgather(4, ir::Protocol::Simple);
  l = call_layout(gather, 2, 100, 4, false);
  CHECK(l.send_bytes == 400);
  CHECK(l.recv_bytes == 1600);
  l = call_layout(gather, 2, 100, 4, true);
  CHECK(l.recv_bytes == 1600);
  CHECK(l.send_offset == 800);
}

TEST_CASE("the reference matches its own layout and comparisons count elements", "[perf]") {
  const ir::Algorithm ring = ring_allreduce(4, ir::Protocol::Simple);
  const cpu::Executor executor(ring, standard_spec(ring, 0));
  for (bool in_place : {false, true}) {
    const Reference ref =
        compute_reference(executor, 10, DataType::Int32, ReduceOp::Sum, 0, in_place);
    REQUIRE(ref.error.empty());
    for (int r = 0; r < 4; ++r) {
      const CallLayout l = call_layout(ring, r, 40, 4, in_place);
      CHECK(device_image(ref.expected[static_cast<std::size_t>(r)], in_place).size() ==
            l.recv_bytes);
      if (!in_place)
        CHECK(send_image(ref.initial[static_cast<std::size_t>(r)]).size() == l.send_bytes);
    }
    // Every rank ends with the same sum.
    CHECK(device_image(ref.expected[0], in_place) == device_image(ref.expected[3], in_place));
  }
  std::vector<std::byte> a(40), b(40);
  CHECK(count_wrong(DataType::Int32, a, b) == 0);
  b[5] = std::byte{1};
  b[13] = std::byte{1};
  CHECK(count_wrong(DataType::Int32, a, b) == 2);
  // Floats: within tolerance is right, NaN matches NaN.
  const float x = 1.0f, y = 1.0f + 1e-7f, z = 1.1f, nan = NAN;
  std::vector<std::byte> fa(8), fb(8);
  std::memcpy(fa.data(), &x, 4);
  std::memcpy(fb.data(), &y, 4);
  std::memcpy(fa.data() + 4, &nan, 4);
  std::memcpy(fb.data() + 4, &nan, 4);
  CHECK(count_wrong(DataType::Float, fa, fb) == 0);
  std::memcpy(fb.data(), &z, 4);
  CHECK(count_wrong(DataType::Float, fa, fb) == 1);
}

}  // namespace
}  // namespace weft::perf
