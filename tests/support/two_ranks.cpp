#include "two_ranks.h"

#include <thread>

#include "launch/free_port.h"

namespace kforge::test {

std::vector<std::string> on_two_ranks(const std::function<void(const dist::Runtime&)>& body) {
  return on_ranks(2, body);
}

std::vector<std::string> on_ranks(int size, const std::function<void(const dist::Runtime&)>& body) {
  const int port = launch::free_local_port();
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      dist::RankInfo info;
      info.rank = info.local_rank = rank;
      info.world_size = info.local_world_size = size;
      info.master_port = port;
      const config::DistributedConfig d{-1, 1, 1, 1, 1, 1, /*timeout_sec=*/30};
      try {
        const dist::Runtime runtime(info, d);
        body(runtime);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(rank)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace kforge::test
