// ThreadRing: the ranks of a context-parallel ring simulated by threads of one process, each rank's pass handing its
// tensors to the next rank's mailbox and taking the previous rank's from its own.
#pragma once

#include <ATen/ATen.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "transformer/ring_attention.h"

namespace kforge::test {

class ThreadRing {
 public:
  explicit ThreadRing(int size) : boxes_(static_cast<size_t>(size)) {
    for (int r = 0; r < size; ++r) {
      rings_.push_back({r, size, [this, r, size](const std::vector<at::Tensor>& tensors) {
                          std::vector<at::Tensor> copies;
                          for (const at::Tensor& t : tensors) copies.push_back(t.clone());
                          put(static_cast<size_t>((r + 1) % size), std::move(copies));
                          return take(static_cast<size_t>(r));
                        }});
    }
  }
  const builtin::models::Ring& ring(int rank) const { return rings_[static_cast<size_t>(rank)]; }

  /// Runs `body(rank)` on one thread per rank and waits for them all.
  void run(const std::function<void(int rank)>& body) const {
    std::vector<std::thread> threads;
    for (size_t r = 0; r < rings_.size(); ++r) threads.emplace_back(body, static_cast<int>(r));
    for (std::thread& t : threads) t.join();
  }

 private:
  struct Box {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::vector<at::Tensor>> letters;
  };
  void put(size_t rank, std::vector<at::Tensor> letter) {
    Box& box = boxes_[rank];
    {
      const std::lock_guard<std::mutex> lock(box.mutex);
      box.letters.push_back(std::move(letter));
    }
    box.ready.notify_one();
  }
  std::vector<at::Tensor> take(size_t rank) {
    Box& box = boxes_[rank];
    std::unique_lock<std::mutex> lock(box.mutex);
    box.ready.wait(lock, [&] { return !box.letters.empty(); });
    std::vector<at::Tensor> letter = std::move(box.letters.front());
    box.letters.pop_front();
    return letter;
  }

  std::vector<Box> boxes_;
  std::vector<builtin::models::Ring> rings_;
};

}  // namespace kforge::test
