// Rendezvous, the job's process groups and the device mesh (see runtime.h).
#include "dist/runtime.h"

#include <fmt/format.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "dist/await_listener.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::dist {
namespace {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? name : "?";
}

}  // namespace

Runtime::Runtime(const RankInfo& info, const config::DistributedConfig& config, c10::Device device)
    : info_(info), timeout_(std::chrono::seconds(config.timeout_sec)) {
  const MeshShape shape = MeshShape::resolve(config, info_.world_size);
  if (info_.world_size == 1) return;
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(info_.master_port);
  options.isServer = info_.rank == 0;
  options.numWorkers = static_cast<size_t>(info_.world_size);
  options.waitWorkers = false;  // exchange_endpoints waits, and names the ranks that never came
  options.timeout = timeout_;
  const GlooBinding binding = gloo_interfaces(info_.master_addr, info_.master_port, info_.single_node());
  endpoints_.bound = binding.interfaces;
  log::get().info("rendezvous: waiting for {} ranks at {}:{} (timeout {} s, distributed.nccl_timeout_sec)",
                  info_.world_size, info_.master_addr, info_.master_port, config.timeout_sec);
  const auto failed = [&](const std::string& why) {
    return sdk::Error(fmt::format(
        "rank {}: rendezvous at {}:{} ({} of {} ranks) failed: {}. Check MASTER_ADDR/MASTER_PORT (the port must be "
        "free on rank 0's host) and that every rank was started",
        info_.rank, info_.master_addr, info_.master_port, info_.rank, info_.world_size, why));
  };
  // A client that finds the store not yet listening would sleep a second before its next try.
  if (!options.isServer && !await_listener(info_.master_addr, info_.master_port, timeout_)) {
    throw failed(
        fmt::format("nothing accepted a connection there within {} s (distributed.nccl_timeout_sec; is MASTER_ADDR a "
                    "name this host resolves?)",
                    config.timeout_sec));
  }
  try {
    store_ = c10::make_intrusive<c10d::TCPStore>(info_.master_addr, options);
  } catch (const std::exception& e) {
    throw failed(e.what());
  }
  Peer mine{info_.rank, host_name(), "", endpoints_.bound.front().address, static_cast<int>(::getpid())};
  for (const NetInterface& i : endpoints_.bound) mine.interface += (mine.interface.empty() ? "" : ",") + i.name;
  log::get().info("rank {} on host {}: Gloo listens on {} ({}; chosen by {})", info_.rank, mine.host, mine.address,
                  mine.interface, binding.reason);
  endpoints_.peers = std::make_shared<const std::vector<Peer>>(
      exchange_endpoints(*store_, mine, info_.world_size, info_.master_addr, timeout_));
  check_no_loopback_across_hosts(*endpoints_.peers);
  world_ =
      std::make_unique<Group>(store_, "world", info_.rank, info_.world_size, info_.rank, timeout_, endpoints_, device);
  checkpoint_ =
      std::make_unique<Group>(store_, "checkpoint", info_.rank, info_.world_size, info_.rank, timeout_, endpoints_);
  checkpoint_writer_ = std::make_unique<Group>(store_, "checkpoint_writer", info_.rank, info_.world_size, info_.rank,
                                               timeout_, endpoints_);
  mesh_ = std::make_unique<DeviceMesh>(shape, info_.rank, store_, timeout_, endpoints_, device);
  world_->barrier();  // fail fast: every rank reached the same point with the same groups
}

Runtime::~Runtime() = default;

std::unique_ptr<Group> Runtime::world_group(const std::string& name, std::chrono::milliseconds timeout,
                                            const std::string& timeout_key) const {
  if (info_.world_size == 1) return std::make_unique<Group>();
  return std::make_unique<Group>(store_, name, info_.rank, info_.world_size, info_.rank, timeout, endpoints_,
                                 c10::Device(c10::DeviceType::CPU), timeout_key);
}

const std::vector<Peer>& Runtime::peers() const {
  static const std::vector<Peer> none;
  return endpoints_.peers ? *endpoints_.peers : none;
}

std::vector<std::string> Runtime::all_gather_strings(const std::string& tag, const std::string& value) const {
  if (info_.world_size == 1) return {value};
  store_->set(fmt::format("kforge/gather/{}/{}", tag, info_.rank), std::vector<uint8_t>(value.begin(), value.end()));
  std::vector<std::string> out;
  for (int r = 0; r < info_.world_size; ++r) {
    const std::string key = fmt::format("kforge/gather/{}/{}", tag, r);
    try {
      const std::vector<uint8_t> bytes = store_->get(key);
      out.emplace_back(bytes.begin(), bytes.end());
    } catch (const std::exception& e) {
      throw sdk::Error(fmt::format("rank {}: waiting for {}'s '{}' failed ({}); it died, hung or lost its link",
                                   info_.rank, describe(endpoints_.peers->at(static_cast<size_t>(r))), tag, e.what()));
    }
  }
  return out;
}

}  // namespace kforge::dist
