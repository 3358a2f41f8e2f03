// run_in_order: one mutex; chunks carry a sequence number; results wait in a map until their turn.
#include "data/ordered_pool.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kforge::data {

void run_in_order(int threads, size_t max_in_flight, const OrderedPoolSteps& steps) {
  std::mutex m;
  std::condition_variable work_ready, result_ready, space_free;
  std::deque<std::pair<size_t, TextChunk>> todo;
  std::map<size_t, EncodedChunk> done;
  std::map<size_t, std::exception_ptr> errors;  ///< by the sequence number at which to raise them
  size_t produced = 0, consumed = 0;
  bool producer_finished = false, stop = false;
  max_in_flight = std::max<size_t>(max_in_flight, 1);

  auto reader = [&] {
    while (true) {
      {
        std::unique_lock lock(m);
        space_free.wait(lock, [&] { return stop || produced - consumed < max_in_flight; });
        if (stop) return;
      }
      TextChunk chunk;
      bool more = false;
      std::exception_ptr error;
      try {
        more = steps.produce(chunk);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(m);
      if (error) errors.emplace(produced, error);
      if (error || !more) {
        producer_finished = true;
        work_ready.notify_all();
        result_ready.notify_all();
        return;
      }
      todo.emplace_back(produced++, std::move(chunk));
      work_ready.notify_one();
    }
  };
  auto worker = [&] {
    while (true) {
      std::pair<size_t, TextChunk> item;
      {
        std::unique_lock lock(m);
        work_ready.wait(lock, [&] { return stop || !todo.empty() || producer_finished; });
        if (stop || todo.empty()) return;
        item = std::move(todo.front());
        todo.pop_front();
      }
      try {
        EncodedChunk result = steps.work(item.second);
        std::lock_guard lock(m);
        done.emplace(item.first, std::move(result));
      } catch (...) {
        std::lock_guard lock(m);
        errors.emplace(item.first, std::current_exception());
      }
      result_ready.notify_all();
    }
  };

  std::vector<std::thread> pool;
  pool.emplace_back(reader);
  for (int i = 0; i < std::max(threads, 1); ++i) pool.emplace_back(worker);
  auto shut_down = [&] {
    {
      std::lock_guard lock(m);
      stop = true;
    }
    work_ready.notify_all();
    space_free.notify_all();
    for (auto& t : pool) t.join();
  };

  std::exception_ptr error;
  while (!error) {
    EncodedChunk next;
    {
      std::unique_lock lock(m);
      result_ready.wait(lock, [&] {
        return done.count(consumed) || errors.count(consumed) || (producer_finished && consumed == produced);
      });
      if (const auto e = errors.find(consumed); e != errors.end()) {
        error = e->second;
        break;
      }
      const auto it = done.find(consumed);
      if (it == done.end()) break;  // every chunk consumed
      next = std::move(it->second);
      done.erase(it);
      ++consumed;
    }
    space_free.notify_one();
    try {
      steps.consume(next);
    } catch (...) {
      error = std::current_exception();
    }
  }
  shut_down();
  if (error) std::rethrow_exception(error);
}

}  // namespace kforge::data
