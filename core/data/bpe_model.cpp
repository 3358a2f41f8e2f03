// The merge loop: a per-thread cache of recent pieces (English text repeats most words), then a min-heap of adjacent
// pairs keyed by (rank, position), stale entries skipped on pop, so a pre-token of n bytes costs O(n log n) (a long
// whitespace run included); leftmost first among equal ranks, as tiktoken and Hugging Face tokenizers do.
#include "data/bpe_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "data/byte_level.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

uint64_t bpe_pair_key(int left, int right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

/// A token's bytes as the byte-level text tokenizer.json uses, for messages.
std::string printable_token(std::string_view bytes) {
  std::string out;
  for (char c : bytes) out += byte_to_unicode(static_cast<uint8_t>(c));
  return out;
}

struct BpeMergeCandidate {
  int rank;
  uint32_t start, left_len, right_len;
  int merged;
  bool operator>(const BpeMergeCandidate& o) const { return rank != o.rank ? rank > o.rank : start > o.start; }
};

/// Per-thread buffers of the merge loop, so encoding a pre-token allocates nothing once warm.
struct MergeScratch {
  std::vector<uint32_t> len;  ///< the length of the piece starting at a byte; 0 inside a piece
  std::vector<uint32_t> prev;
  std::vector<int> id;
  std::vector<BpeMergeCandidate> heap;
};

/// A thread's recently merged pieces of one model; dropped when full (a bounded memory, no eviction bookkeeping).
struct BpePieceCache {
  static constexpr size_t kCapacity = 1 << 16;
  static constexpr size_t kLongestPiece = 256;  ///< longer pieces (whitespace runs, say) are merged uncached
  uint64_t model = 0;
  std::unordered_map<std::string, std::vector<int>, BpeModel::StringHash, std::equal_to<>> ids;
};

std::atomic<uint64_t> bpe_model_serials{0};

}  // namespace

BpeModel::BpeModel(std::vector<std::string> tokens, const MergeList* merges, bool whole_token_first,
                   const std::string& origin)
    : tokens_(std::move(tokens)),
      serial_(++bpe_model_serials),
      by_merge_list_(merges != nullptr),
      whole_token_first_(whole_token_first) {
  ids_.reserve(tokens_.size());
  for (size_t id = 0; id < tokens_.size(); ++id) {
    if (tokens_[id].empty()) continue;
    const auto [it, fresh] = ids_.emplace(tokens_[id], static_cast<int>(id));
    if (!fresh) {
      throw sdk::Error(
          fmt::format("{}: token '{}' has two ids, {} and {}", origin, printable_token(tokens_[id]), it->second, id));
    }
  }
  for (int b = 0; b < 256; ++b) {
    const auto id = find(std::string_view(std::string(1, static_cast<char>(b))));
    if (!id) {
      throw sdk::Error(fmt::format("{}: no token for the byte 0x{:02x} ('{}'): a byte-level BPE needs all 256", origin,
                                   b, byte_to_unicode(static_cast<uint8_t>(b))));
    }
    byte_ids_[b] = *id;
  }
  byte_pair_merges_.resize(256 * 256);
  if (merges == nullptr) {
    for (int pair = 0; pair < 256 * 256; ++pair) {
      const char two[2] = {static_cast<char>(pair >> 8), static_cast<char>(pair & 0xFF)};
      if (const auto id = find(std::string_view(two, 2))) byte_pair_merges_[pair] = Merge{*id, *id};
    }
    return;
  }
  merges_.reserve(merges->size());
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    const auto& [left, right] = (*merges)[rank];
    const auto l = find(left), r = find(right), m = find(left + right);
    if (!l || !r || !m) {
      throw sdk::Error(fmt::format("{}[{}] = '{} {}': '{}' is not in the vocabulary", origin, rank,
                                   printable_token(left), printable_token(right),
                                   printable_token(!l   ? left
                                                   : !r ? right
                                                        : left + right)));
    }
    const Merge merge{static_cast<int>(rank), *m};
    merges_.insert_or_assign(bpe_pair_key(*l, *r), merge);  // a repeat wins, as in HF
    if (left.size() == 1 && right.size() == 1) {
      byte_pair_merges_[static_cast<uint8_t>(left[0]) << 8 | static_cast<uint8_t>(right[0])] = merge;
    }
  }
}

void BpeModel::MergeTable::reserve(size_t pairs) {
  size_t capacity = 16;
  shift_ = 60;
  while (capacity < 2 * pairs) {
    capacity *= 2;
    --shift_;
  }
  slots_.assign(capacity, Slot{});
}

void BpeModel::MergeTable::insert_or_assign(uint64_t key, Merge merge) {
  for (size_t i = index(key);; i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i].key == key || slots_[i].key == kEmpty) {
      size_ += slots_[i].key == kEmpty;
      slots_[i] = Slot{key, merge};
      return;
    }
  }
}

BpeModel::Merge BpeModel::MergeTable::find(uint64_t key) const {
  if (slots_.empty()) return {};
  for (size_t i = index(key);; i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i].key == key) return slots_[i].merge;
    if (slots_[i].key == kEmpty) return {};
  }
}

std::optional<int> BpeModel::find(std::string_view bytes) const {
  const auto it = ids_.find(bytes);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::string_view BpeModel::bytes(int id) const {
  if (id < 0 || id >= size()) return {};
  return tokens_[id];
}

BpeModel::Merge BpeModel::merge_of(std::string_view piece, size_t a, size_t b, size_t c, int left, int right) const {
  if (b - a == 1 && c - b == 1) {
    return byte_pair_merges_[static_cast<uint8_t>(piece[a]) << 8 | static_cast<uint8_t>(piece[b])];
  }
  if (by_merge_list_) return merges_.find(bpe_pair_key(left, right));
  const auto id = find(piece.substr(a, c - a));
  return id ? Merge{*id, *id} : Merge{};
}

void BpeModel::encode(std::string_view piece, std::vector<int>& out) const {
  const size_t n = piece.size();
  if (n == 0) return;
  if (n == 1) {
    out.push_back(byte_ids_[static_cast<uint8_t>(piece[0])]);
    return;
  }
  if (whole_token_first_) {
    if (const auto id = find(piece)) {
      out.push_back(*id);
      return;
    }
  }
  thread_local BpePieceCache cache;
  if (cache.model != serial_ || cache.ids.size() >= BpePieceCache::kCapacity) {
    cache.ids.clear();
    cache.model = serial_;
  }
  if (n > BpePieceCache::kLongestPiece) return merge(piece, out);
  auto it = cache.ids.find(piece);
  if (it == cache.ids.end()) {
    std::vector<int> ids;
    merge(piece, ids);
    it = cache.ids.emplace(std::string(piece), std::move(ids)).first;
  }
  out.insert(out.end(), it->second.begin(), it->second.end());
}

void BpeModel::merge(std::string_view piece, std::vector<int>& out) const {
  const size_t n = piece.size();
  thread_local MergeScratch s;
  s.len.assign(n, 1);
  s.prev.resize(n);
  s.id.resize(n);
  s.heap.clear();
  const auto push_pair = [&](uint32_t a) {
    const uint32_t b = a + s.len[a];
    const size_t c = b + s.len[b];
    if (const Merge m = merge_of(piece, a, b, c, s.id[a], s.id[b]); m.rank >= 0) {
      s.heap.push_back(BpeMergeCandidate{m.rank, a, s.len[a], s.len[b], m.merged});
      std::push_heap(s.heap.begin(), s.heap.end(), std::greater<>{});
    }
  };
  for (uint32_t i = 0; i < n; ++i) {
    s.id[i] = byte_ids_[static_cast<uint8_t>(piece[i])];
    s.prev[i] = i - 1;
  }
  for (uint32_t i = 0; i + 1 < n; ++i) push_pair(i);
  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), std::greater<>{});
    const BpeMergeCandidate top = s.heap.back();
    s.heap.pop_back();
    const uint32_t a = top.start, b = a + top.left_len;
    if (s.len[a] != top.left_len || b >= n || s.len[b] != top.right_len) continue;  // stale: a side has merged
    s.len[a] += s.len[b];
    s.len[b] = 0;
    s.id[a] = top.merged;
    const uint32_t c = a + s.len[a];
    if (c < n) {
      s.prev[c] = a;
      push_pair(a);
    }
    if (a > 0) push_pair(s.prev[a]);
  }
  for (uint32_t i = 0; i < n; i += s.len[i]) out.push_back(s.id[i]);
}

}  // namespace kforge::data
