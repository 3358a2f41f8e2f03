// BPE merges over the bytes of one pre-token, with either rule: tiktoken's (two adjacent pieces merge when their
// concatenation is a token, the lowest id first) or a Hugging Face merge list (pairs merge in the list's order).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kforge::data {

class BpeModel {
 public:
  /// Lets string-keyed maps look up string_views without a copy.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using MergeList = std::vector<std::pair<std::string, std::string>>;

  /// `tokens[id]` holds the bytes of token `id` (empty: no token has this id); every single byte must be a token.
  /// `merges` (Hugging Face) in priority order, or nullptr for tiktoken's rule. `whole_token_first`: a pre-token
  /// that is itself a token maps to it without merging (tiktoken, and tokenizer.json's ignore_merges).
  /// Errors name `origin` (the file and where in it the tokens and merges come from).
  BpeModel(std::vector<std::string> tokens, const MergeList* merges, bool whole_token_first, const std::string& origin);

  /// Appends the ids of `piece`. Thread-safe: each thread keeps a cache of the pieces it merged recently.
  void encode(std::string_view piece, std::vector<int>& out) const;

  std::optional<int> find(std::string_view bytes) const;
  /// The bytes of `id`; empty when no token has it or it is out of range.
  std::string_view bytes(int id) const;
  int size() const { return static_cast<int>(tokens_.size()); }
  size_t merge_count() const { return merges_.size(); }

 private:
  struct Merge {
    int rank = -1;  ///< -1: the pair does not merge
    int merged = -1;
  };
  /// Pair -> merge, open addressing with linear probing: one cache miss per lookup, where a node-based map has two.
  class MergeTable {
   public:
    void reserve(size_t pairs);
    void insert_or_assign(uint64_t key, Merge merge);
    Merge find(uint64_t key) const;
    size_t size() const { return size_; }

   private:
    struct Slot {
      uint64_t key = kEmpty;
      Merge merge;
    };
    static constexpr uint64_t kEmpty = ~uint64_t{0};
    size_t index(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
    std::vector<Slot> slots_;
    int shift_ = 64;
    size_t size_ = 0;
  };
  void merge(std::string_view piece, std::vector<int>& out) const;
  /// The merge of the adjacent pieces [a, b) and [b, c) of `piece`, with ids `left` and `right`.
  Merge merge_of(std::string_view piece, size_t a, size_t b, size_t c, int left, int right) const;

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> ids_;
  MergeTable merges_;                    ///< (left id << 32 | right id) -> rank and merged id (merge lists only)
  std::vector<Merge> byte_pair_merges_;  ///< (first byte << 8 | second byte) -> merge: the first round, in L2
  uint64_t serial_;  ///< tells this model's entries in a thread's cache from those of a model freed before
  bool by_merge_list_;
  bool whole_token_first_;
  int byte_ids_[256];
};

}  // namespace kforge::data
