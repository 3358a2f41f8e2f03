// AsyncWriter: double-buffered staging and the writer thread.
#include "checkpoint/async_writer.h"

#include <ATen/ATen.h>

namespace kforge::checkpoint {
namespace {

void stage_tensors(const TensorMap& live, TensorMap& buffer, bool pinned) {
  for (auto it = buffer.begin(); it != buffer.end();) it = live.count(it->first) ? std::next(it) : buffer.erase(it);
  for (const auto& [name, t] : live) {
    at::Tensor& copy = buffer[name];
    if (!copy.defined() || copy.sizes() != t.sizes() || copy.scalar_type() != t.scalar_type()) {
      copy = at::empty(t.sizes(), t.options()
                                      .device(at::kCPU)
                                      .pinned_memory(pinned && !t.device().is_cpu())
                                      .memory_format(at::MemoryFormat::Contiguous));
    }
    copy.copy_(t.detach());
  }
}

}  // namespace

void stage_snapshot(const Snapshot& live, Snapshot& buffer, bool pinned) {
  buffer.step = live.step;
  buffer.tokens_seen = live.tokens_seen;
  stage_tensors(live.model, buffer.model, pinned);
  stage_tensors(live.optimizer, buffer.optimizer, pinned);
  buffer.rng = live.rng.defined() ? live.rng.clone() : at::Tensor();
  buffer.rng_cuda = live.rng_cuda.defined() ? live.rng_cuda.clone() : at::Tensor();
  buffer.train_state = live.train_state;
  buffer.config_toml = live.config_toml;
  buffer.plugins = live.plugins;
  buffer.placements = live.placements;
}

AsyncWriter::AsyncWriter(CheckpointManager& manager, bool pinned)
    : manager_(manager), pinned_(pinned), thread_([this] { run(); }) {}

AsyncWriter::~AsyncWriter() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  thread_.join();  // the thread finishes the save in flight first
}

void AsyncWriter::rethrow_failure() {
  if (failure_) std::rethrow_exception(failure_);
}

void AsyncWriter::save(const Snapshot& live) {
  Snapshot& buffer = buffers_[next_buffer_];
  stage_snapshot(live, buffer, pinned_);  // the other buffer may be being written meanwhile
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !writing_; });
  rethrow_failure();
  handed_ = &buffer;
  writing_ = true;
  next_buffer_ = 1 - next_buffer_;
  changed_.notify_all();
}

void AsyncWriter::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !writing_; });
  rethrow_failure();
}

std::vector<std::pair<int64_t, std::filesystem::path>> AsyncWriter::committed() {
  std::unique_lock<std::mutex> lock(mutex_);
  rethrow_failure();
  return std::exchange(committed_, {});
}

void AsyncWriter::run() {
  for (;;) {
    const Snapshot* snapshot = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [this] { return handed_ != nullptr || stopping_; });
      if (handed_ == nullptr) return;  // stopping, nothing left to write
      snapshot = std::exchange(handed_, nullptr);
    }
    std::exception_ptr failure;
    std::filesystem::path dir;
    try {
      dir = manager_.save(*snapshot);
    } catch (...) {
      failure = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    if (failure) {
      failure_ = failure;
    } else {
      committed_.emplace_back(snapshot->step, dir);
    }
    writing_ = false;
    changed_.notify_all();
    if (failure_) return;  // no later save may commit after a failed one
  }
}

}  // namespace kforge::checkpoint
