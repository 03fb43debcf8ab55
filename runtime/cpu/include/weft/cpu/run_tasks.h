// Independent tasks on a few threads of this process: the proof's cases (verify.cpp) and the
// compiler's predictions of candidate schedules (time judge). One place for what both need under
// weftc's memory limit: a worker's exception is raised in the caller once every worker has
// stopped (from a thread it would end the process), and a thread that cannot be started (its stack
// past the limit) leaves its share to the others.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace weft::cpu {

// task(index, state) for every index below `count`, on up to `threads` threads (0: one per
// hardware thread), the calling thread one of them. Each worker has its own default-constructed
// `State` (a cache of what its tasks share). Rethrows the first worker's exception, if any.
template <typename State, typename Task>
void run_tasks(std::size_t count, int threads, const Task& task) {
  std::size_t workers = threads > 0 ? static_cast<std::size_t>(threads)
                                    : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min(workers, count);
  if (workers == 0) return;
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failed(workers);
  auto work = [&](std::size_t w) {
    try {
      State state;
      for (std::size_t t = next++; t < count; t = next++) task(t, state);
    } catch (...) {
      failed[w] = std::current_exception();
      next = count;  // the others stop after their current task
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(work, w);
    } catch (const std::system_error&) {
      break;  // no thread to spare (a tight memory limit): the others take its share
    }
  }
  work(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace weft::cpu
