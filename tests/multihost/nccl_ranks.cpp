// An NCCL application on host memory, for the shim in standalone host mode (WEFT_STANDALONE=1,
// WEFT_DEVICE=host): one process per rank, the ranks spread over host ids in consecutive blocks,
// allreduce, allgather, reducescatter and alltoall over a size sweep, every result checked against
// values the program computes itself. It knows nothing of Weft.
//
//   weft-nccl-host-ranks -n RANKS -p RANKS_PER_HOST [-c LIST] [-b MIN] [-e MAX] [-f FACTOR] [-i]
//
// Without --rank it is the launcher: it makes the unique id, starts a copy of itself per rank with
// WEFT_HOSTID=host<rank / RANKS_PER_HOST>, and exits 0 only if every rank did.
#include <nccl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Options {
  int nranks = 4;
  int per_host = 2;
  int rank = -1;
  std::string id_hex;
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = 256 * 1024;
  std::size_t factor = 16;
  std::vector<std::string> collectives = {"allreduce", "allgather", "reducescatter", "alltoall"};
  bool in_place = false;
};

std::size_t size_of(const char* text) {
  char* end = nullptr;
  std::size_t value = std::strtoull(text, &end, 10);
  if (end != nullptr && (*end == 'K' || *end == 'k')) value <<= 10;
  if (end != nullptr && (*end == 'M' || *end == 'm')) value <<= 20;
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "-n") o.nranks = std::atoi(next());
    else if (a == "-p") o.per_host = std::atoi(next());
    else if (a == "--rank") o.rank = std::atoi(next());
    else if (a == "--id") o.id_hex = next();
    else if (a == "-b") o.min_bytes = size_of(next());
    else if (a == "-e") o.max_bytes = size_of(next());
    else if (a == "-f") o.factor = size_of(next());
    else if (a == "-i") o.in_place = true;
    else if (a == "-c") {
      o.collectives.clear();
      std::string list = next();
      for (std::size_t start = 0; start <= list.size();) {
        const auto comma = list.find(',', start);
        o.collectives.push_back(list.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.nranks < 1 || o.per_host < 1 || o.nranks % o.per_host != 0 || o.factor < 2) {
    std::fprintf(stderr, "need -n a multiple of -p, and -f >= 2\n");
    std::exit(2);
  }
  return o;
}

std::string to_hex(const ncclUniqueId& id) {
  std::string hex;
  for (unsigned char c : id.internal) {
    char b[3];
    std::snprintf(b, sizeof(b), "%02x", c);
    hex += b;
  }
  return hex;
}

ncclUniqueId from_hex(const std::string& hex) {
  ncclUniqueId id{};
  for (std::size_t i = 0; i < sizeof(id.internal) && 2 * i + 1 < hex.size(); ++i) {
    id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return id;
}

// Rank r's send value at i: small integers, so that every sum is exact in float.
float value(int rank, std::size_t i) {
  return static_cast<float>((rank + 1) * 3 + static_cast<int>(i % 11));
}

int run_rank(const Options& o) {
  ncclComm_t comm = nullptr;
  if (ncclResult_t r = ncclCommInitRank(&comm, o.nranks, from_hex(o.id_hex), o.rank);
      r != ncclSuccess) {
    std::fprintf(stderr, "rank %d: ncclCommInitRank: %s (%s)\n", o.rank, ncclGetErrorString(r),
                 ncclGetLastError(nullptr));
    return 1;
  }
  const auto n = static_cast<std::size_t>(o.nranks);
  const auto me = static_cast<std::size_t>(o.rank);
  long calls = 0, wrong = 0;
  int status = 0;
  for (const std::string& c : o.collectives) {
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
      for (int mode = 0; mode < (o.in_place ? 2 : 1); ++mode) {
        const bool in_place = mode == 1;
        // count: NCCL's, per rank (allgather's send, reducescatter's receive, alltoall's per peer).
        const bool per_peer = c != "allreduce";
        const std::size_t count = bytes / sizeof(float) / (per_peer ? n : 1);
        if (count == 0) continue;
        const std::size_t send_count = c == "allreduce" || c == "allgather" ? count : count * n;
        const std::size_t recv_count = c == "allreduce" || c == "reducescatter" ? count : count * n;
        std::vector<float> recv(std::max(recv_count, send_count), -1.0f);
        std::vector<float> own(send_count);
        for (std::size_t i = 0; i < send_count; ++i) own[i] = value(o.rank, i);
        float* sendbuf = nullptr;
        std::vector<float> send;
        if (in_place) {
          // NCCL's in-place layouts: allgather's send is its block of the receive buffer,
          // reducescatter's receive is its block of the send buffer.
          float* at = c == "allgather" ? recv.data() + me * count : recv.data();
          std::memcpy(at, own.data(), send_count * sizeof(float));
          sendbuf = at;
        } else {
          send = own;
          sendbuf = send.data();
        }
        float* recvbuf = in_place && c == "reducescatter" ? sendbuf + me * count : recv.data();
        ncclResult_t r = ncclSuccess;
        if (c == "allreduce") {
          r = ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, nullptr);
        } else if (c == "allgather") {
          r = ncclAllGather(sendbuf, recvbuf, count, ncclFloat, comm, nullptr);
        } else if (c == "reducescatter") {
          r = ncclReduceScatter(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, nullptr);
        } else if (c == "alltoall") {
          r = ncclAlltoAll(sendbuf, recvbuf, count, ncclFloat, comm, nullptr);
        } else {
          std::fprintf(stderr, "unknown collective %s\n", c.c_str());
          return 2;
        }
        if (r != ncclSuccess) {
          std::fprintf(stderr, "rank %d: %s of %zu bytes%s: %s (%s)\n", o.rank, c.c_str(), bytes,
                       in_place ? " in place" : "", ncclGetErrorString(r),
                       ncclGetLastError(comm));
          status = 1;
          continue;
        }
        ++calls;
        long bad = 0;
        for (std::size_t i = 0; i < recv_count; ++i) {
          float want = 0;
          if (c == "allreduce") {
            for (int p = 0; p < o.nranks; ++p) want += value(p, i);
          } else if (c == "allgather") {
            want = value(static_cast<int>(i / count), i % count);
          } else if (c == "reducescatter") {
            for (int p = 0; p < o.nranks; ++p) want += value(p, me * count + i);
          } else {
            want = value(static_cast<int>(i / count), me * count + i % count);
          }
          if (recvbuf[i] != want) ++bad;
        }
        if (bad > 0) {
          std::fprintf(stderr, "rank %d: %s of %zu bytes%s: %ld of %zu elements wrong\n", o.rank,
                       c.c_str(), bytes, in_place ? " in place" : "", bad, recv_count);
          status = 1;
        }
        wrong += bad;
      }
    }
  }
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm, &async);
  if (async != ncclSuccess) {
    std::fprintf(stderr, "rank %d: asynchronous error: %s\n", o.rank, ncclGetLastError(comm));
    status = 1;
  }
  ncclCommDestroy(comm);
  std::printf("rank %d: %ld calls checked, %ld elements wrong\n", o.rank, calls, wrong);
  return status;
}

int launch(const Options& o, char** argv) {
  ncclUniqueId id{};
  if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess) {
    std::fprintf(stderr, "ncclGetUniqueId: %s\n", ncclGetErrorString(r));
    return 1;
  }
  const std::string hex = to_hex(id);
  std::vector<pid_t> children;
  for (int rank = 0; rank < o.nranks; ++rank) {
    std::vector<std::string> args = {argv[0], "-n", std::to_string(o.nranks), "-p",
                                     std::to_string(o.per_host), "--rank", std::to_string(rank),
                                     "--id", hex, "-b", std::to_string(o.min_bytes), "-e",
                                     std::to_string(o.max_bytes), "-f", std::to_string(o.factor)};
    std::string list;
    for (const std::string& c : o.collectives) list += (list.empty() ? "" : ",") + c;
    args.push_back("-c");
    args.push_back(list);
    if (o.in_place) args.push_back("-i");
    std::vector<char*> raw;
    for (std::string& a : args) raw.push_back(a.data());
    raw.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (std::strncmp(*e, "WEFT_HOSTID=", 12) != 0) env.emplace_back(*e);
    }
    env.push_back("WEFT_HOSTID=host" + std::to_string(rank / o.per_host));
    std::vector<char*> raw_env;
    for (std::string& e : env) raw_env.push_back(e.data());
    raw_env.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, raw.data(), raw_env.data()) != 0) {
      std::perror("posix_spawn");
      return 1;
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
  }
  if (failed > 0) {
    std::printf("%d of %d ranks failed\n", failed, o.nranks);
    return 1;
  }
  std::printf("every rank's results are right (%d ranks on %d hosts)\n", o.nranks,
              o.nranks / o.per_host);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  return o.rank < 0 ? launch(o, argv) : run_rank(o);
}
