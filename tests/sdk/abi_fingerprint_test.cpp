// The public SDK headers fingerprint as recorded for this KFORGE_PLUGIN_ABI_VERSION, so an interface
// change without an ABI bump fails here; and the fingerprint and its record behave as documented.
#include "abi_fingerprint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

#include "kforge/sdk/abi.h"

namespace kforge::abi {
namespace {

namespace fs = std::filesystem;

// A scratch copy of the SDK headers (or an empty record file) for one test.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kforge_abi_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path copy_of_headers(const std::string& name) {
  const fs::path dir = scratch(name);
  fs::copy(KFORGE_SDK_HEADER_DIR, dir, fs::copy_options::recursive);
  return dir;
}

void append(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::app) << text; }

// How to record the fingerprint of the current headers.
const char* const kHowToRecord =
    "    cmake --build build --target record_abi_fingerprint\n"
    "  appends \"<KFORGE_PLUGIN_ABI_VERSION> <fingerprint>\" to sdk/abi_fingerprints.txt; commit it with the headers.";

TEST(AbiFingerprint, TheSdkHeadersAreRecordedForThisAbiVersion) {
  const std::string version = std::to_string(KFORGE_PLUGIN_ABI_VERSION);
  const std::string now = fingerprint_headers(KFORGE_SDK_HEADER_DIR);
  const auto recorded = recorded_fingerprint(KFORGE_ABI_FINGERPRINTS, KFORGE_PLUGIN_ABI_VERSION);
  ASSERT_TRUE(recorded) << "No fingerprint is recorded for KFORGE_PLUGIN_ABI_VERSION " << version << " in "
                        << KFORGE_ABI_FINGERPRINTS << " (the headers fingerprint as " << now << "). Record it:\n"
                        << kHowToRecord;
  EXPECT_EQ(*recorded, now) << "SDK headers changed: bump KFORGE_PLUGIN_ABI_VERSION and record the new fingerprint\n"
                            << "  ABI " << version << " is recorded as " << *recorded << " in "
                            << KFORGE_ABI_FINGERPRINTS << ", but the headers in " << KFORGE_SDK_HEADER_DIR
                            << " now fingerprint as " << now
                            << ".\n  Raise KFORGE_PLUGIN_ABI_VERSION in sdk/include/kforge/sdk/abi.h (once per "
                               "release), then:\n"
                            << kHowToRecord;
}

TEST(AbiFingerprint, IgnoresCommentsAndLayout) {
  const fs::path dir = copy_of_headers("layout");
  const std::string before = fingerprint_headers(dir);
  append(dir / "optimizer.h", "\n// a new comment\n/* and a block */\n\n");
  EXPECT_EQ(fingerprint_headers(dir), before);
  fs::remove_all(dir);
}

TEST(AbiFingerprint, SeesAnInterfaceChangeAndANewHeader) {
  const fs::path dir = copy_of_headers("change");
  const std::string before = fingerprint_headers(dir);
  append(dir / "optimizer.h", "namespace kforge::sdk { struct Added { virtual void f(); }; }\n");
  const std::string changed = fingerprint_headers(dir);
  EXPECT_NE(changed, before);
  std::ofstream(dir / "extra.h") << "#pragma once\n";
  EXPECT_NE(fingerprint_headers(dir), changed);
  fs::remove_all(dir);
}

TEST(AbiFingerprint, LeavesOutTheGeneratedVersionHeader) {
  EXPECT_FALSE(fs::exists(fs::path(KFORGE_SDK_HEADER_DIR) / "version.h"))
      << "version.h is generated into the build tree (sdk/version.h.in); a release is not an ABI change";
}

TEST(AbiFingerprint, RecordAppendsANewVersionAndRefusesToOverwriteOne) {
  const fs::path file = scratch("record") / "abi_fingerprints.txt";
  std::ofstream(file) << "# comment\n4 0123456789abcdef\n";
  record_fingerprint(file, 5, "fedcba9876543210");
  record_fingerprint(file, 5, "fedcba9876543210");  // already there: unchanged
  EXPECT_EQ(recorded_fingerprint(file, 4), "0123456789abcdef");
  EXPECT_EQ(recorded_fingerprint(file, 5), "fedcba9876543210");
  EXPECT_EQ(recorded_fingerprint(file, 6), std::nullopt);
  try {
    record_fingerprint(file, 5, "00000000000000ff");
    FAIL() << "a recorded version was given another fingerprint";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ABI 5 is recorded in " + file.string() +
                                         " as fedcba9876543210, but the SDK headers now fingerprint as "
                                         "00000000000000ff: bump KFORGE_PLUGIN_ABI_VERSION"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(file.parent_path());
}

TEST(AbiFingerprint, AMalformedRecordLineIsNamed) {
  const fs::path file = scratch("malformed") / "abi_fingerprints.txt";
  std::ofstream(file) << "5 0123456789abcdef\nfive 12\n";
  EXPECT_EQ(recorded_fingerprint(file, 5), "0123456789abcdef");
  try {
    recorded_fingerprint(file, 6);
    FAIL() << "a malformed line was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), file.string() + ":2: expected \"<abi version> <16 hex digits>\", got \"five 12\"");
  }
  fs::remove_all(file.parent_path());
}

}  // namespace
}  // namespace kforge::abi
