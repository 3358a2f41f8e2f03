// "Did you mean": the edit distance, and the one suggestion it yields (the closest candidate within
// max(2, a third of the name's length) edits, the first of equally close ones), or none.
#include "cmdline/did_you_mean.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kforge::cmdline {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("dry-run", "dry-run"), 0u);
  EXPECT_EQ(edit_distance("dryrun", "dry-run"), 1u);   // one insertion
  EXPECT_EQ(edit_distance("rmsnrom", "rmsnorm"), 2u);  // a swap is two substitutions
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("sitting", "kitten"), 3u);  // symmetric
}

TEST(DidYouMean, SuggestsTheClosestCandidate) {
  const std::vector<std::string> options = {"--dry-run", "--plugin-dir", "--help"};
  EXPECT_EQ(did_you_mean("--dryrun", options), " Did you mean '--dry-run'?");
  EXPECT_EQ(did_you_mean("--plugin-dirs", options), " Did you mean '--plugin-dir'?");
}

TEST(DidYouMean, PrefersTheFirstOfEquallyCloseCandidates) {
  EXPECT_EQ(did_you_mean("cat", {"bat", "hat"}), " Did you mean 'bat'?");
  EXPECT_EQ(did_you_mean("cat", {"hat", "bat"}), " Did you mean 'hat'?");
}

TEST(DidYouMean, AllowsTwoEditsForShortNamesAndAThirdOfTheLengthForLongOnes) {
  EXPECT_EQ(did_you_mean("lr", {"lx"}), " Did you mean 'lx'?");  // 1 edit, limit 2
  EXPECT_EQ(did_you_mean("ab", {"cd"}), " Did you mean 'cd'?");  // 2 edits, limit 2
  EXPECT_EQ(did_you_mean("abc", {"xyz"}), "");                   // 3 edits, limit 2
  // 12 characters: limit 4.
  EXPECT_EQ(did_you_mean("abcdefghijkl", {"wxyzefghijkl"}), " Did you mean 'wxyzefghijkl'?");
  EXPECT_EQ(did_you_mean("abcdefghijkl", {"vwxyzfghijkl"}), "");  // 5 edits
}

TEST(DidYouMean, SaysNothingWithoutCandidates) { EXPECT_EQ(did_you_mean("anything", {}), ""); }

}  // namespace
}  // namespace kforge::cmdline
