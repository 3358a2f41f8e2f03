#include "dist/device_mesh.h"

#include <fmt/format.h>

#include <algorithm>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

size_t dim_index(const std::string& dim) {
  const auto it = std::find(kMeshDims.begin(), kMeshDims.end(), dim);
  if (it == kMeshDims.end()) throw sdk::Error(fmt::format("'{}' is not a device mesh dimension", dim));
  return static_cast<size_t>(it - kMeshDims.begin());
}

// Row-major coordinates (tp fastest), like torch's init_device_mesh.
std::array<int, 6> coordinates(const MeshShape& shape, int rank) {
  std::array<int, 6> c{};
  for (size_t d = kMeshDims.size(); d-- > 0;) {
    c[d] = rank % shape.sizes[d];
    rank /= shape.sizes[d];
  }
  return c;
}

}  // namespace

MeshShape MeshShape::resolve(const config::DistributedConfig& d, int world_size) {
  for (const auto& [key, value] : {std::pair{"dp_replicate", d.dp_replicate}, {"tp", d.tp}, {"pp", d.pp},
                                   {"cp", d.cp}, {"ep", d.ep}}) {
    if (value < 1) throw sdk::ConfigError(fmt::format("[distributed] {} = {} must be >= 1", key, value));
  }
  if (d.dp_shard == 0 || d.dp_shard < -1) {
    throw sdk::ConfigError(fmt::format("[distributed] dp_shard = {} must be >= 1, or -1 for the rest of the world", d.dp_shard));
  }
  const int64_t fixed = d.dp_replicate * d.tp * d.pp * d.cp * d.ep;
  int64_t dp_shard = d.dp_shard;
  if (dp_shard == -1) {
    if (world_size % fixed != 0) {
      throw sdk::ConfigError(fmt::format(
          "[distributed] dp_shard = -1 (auto) needs the world size ({}) divisible by dp_replicate*tp*pp*cp*ep = {}*{}*{}*{}*{} "
          "= {}; change those keys or the number of processes",
          world_size, d.dp_replicate, d.tp, d.pp, d.cp, d.ep, fixed, world_size));
    }
    dp_shard = world_size / fixed;
  }
  if (fixed * dp_shard != world_size) {
    throw sdk::ConfigError(fmt::format(
        "[distributed] dp_replicate={} x dp_shard={} x tp={} x pp={} x cp={} x ep={} = {} does not match the world size "
        "({} processes); make the product equal the number of processes or set dp_shard = -1",
        d.dp_replicate, dp_shard, d.tp, d.pp, d.cp, d.ep, fixed * dp_shard, world_size));
  }
  MeshShape shape;
  shape.sizes = {static_cast<int>(d.pp), static_cast<int>(d.dp_replicate), static_cast<int>(dp_shard),
                 static_cast<int>(d.cp), static_cast<int>(d.ep), static_cast<int>(d.tp)};
  return shape;
}

int MeshShape::size(const std::string& dim) const {
  if (dim == "dp") return sizes[1] * sizes[2];
  if (dim == "dp_cp") return sizes[1] * sizes[2] * sizes[3];
  if (dim == "dp_shard_cp") return sizes[2] * sizes[3];
  return sizes[dim_index(dim)];
}

int MeshShape::world_size() const {
  int n = 1;
  for (int s : sizes) n *= s;
  return n;
}

std::string MeshShape::describe() const {
  std::string out;
  for (size_t d = 0; d < kMeshDims.size(); ++d) out += fmt::format("{}{}={}", d ? " " : "", kMeshDims[d], sizes[d]);
  return out;
}

std::vector<int> DeviceMesh::peers(const MeshShape& shape, int rank, const std::vector<std::string>& dims) {
  const std::array<int, 6> mine = coordinates(shape, rank);
  std::vector<int> out;
  for (int r = 0; r < shape.world_size(); ++r) {
    const std::array<int, 6> c = coordinates(shape, r);
    bool same = true;
    for (size_t d = 0; d < kMeshDims.size(); ++d) {
      const bool free = std::find(dims.begin(), dims.end(), kMeshDims[d]) != dims.end();
      if (!free && c[d] != mine[d]) same = false;
    }
    if (same) out.push_back(r);
  }
  return out;
}

DeviceMesh::DeviceMesh(const MeshShape& shape, int rank, const c10::intrusive_ptr<c10d::Store>& store,
                       std::chrono::milliseconds timeout, const Endpoints& endpoints, c10::Device device)
    : shape_(shape), coords_(coordinates(shape, rank)) {
  auto join = [&](const std::string& name, const std::vector<std::string>& dims) {
    const std::vector<int> members = peers(shape, rank, dims);
    if (members.size() == 1) return;
    const int group_rank = static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
    // Groups along the same dims are told apart by their lowest member.
    groups_[name] = std::make_unique<Group>(store, fmt::format("{}/{}", name, members.front()), group_rank,
                                            static_cast<int>(members.size()), rank, timeout, endpoints, device);
  };
  for (const char* dim : kMeshDims) join(dim, {dim});
  join("dp", {"dp_replicate", "dp_shard"});
  if (shape.size("cp") > 1) {
    join("dp_cp", {"dp_replicate", "dp_shard", "cp"});
    join("dp_shard_cp", {"dp_shard", "cp"});
  }
}

int DeviceMesh::coordinate(const std::string& dim) const {
  if (dim == "dp") return coords_[1] * shape_.sizes[2] + coords_[2];
  if (dim == "dp_cp") return coordinate("dp") * shape_.sizes[3] + coords_[3];
  if (dim == "dp_shard_cp") return coords_[2] * shape_.sizes[3] + coords_[3];
  return coords_[dim_index(dim)];
}

const Group& DeviceMesh::group(const std::string& dim) const {
  static const Group self;
  // Without cp the ranks sharing gradients are the data-parallel ones.
  if (shape_.sizes[3] == 1 && (dim == "dp_cp" || dim == "dp_shard_cp")) return group(dim == "dp_cp" ? "dp" : "dp_shard");
  if (dim != "dp" && dim != "dp_cp" && dim != "dp_shard_cp") dim_index(dim);  // validates the name
  const auto it = groups_.find(dim);
  return it == groups_.end() ? self : *it->second;
}

}  // namespace kforge::dist
