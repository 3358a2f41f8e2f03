#include "listing/listing_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kforge::listing {
namespace fs = std::filesystem;
namespace {

// FNV-1a, 64 bits: the entry's file name (from its key) and its checksum (of its body).
std::string fnv1a_hex(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

constexpr const char* kMagic = "kforge-listing-cache 1 ";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// "<what> <path> dev ino mode size mtime ctime\n", or "<what> <path> missing\n"; stat follows symlinks.
std::string stat_line(const char* what, const fs::path& path) {
  struct stat st {};
  std::ostringstream line;
  line << what << ' ' << path.string();
  if (::stat(path.c_str(), &st) != 0) {
    line << " missing\n";
    return line.str();
  }
  line << ' ' << st.st_dev << ' ' << st.st_ino << ' ' << st.st_mode << ' ' << st.st_size << ' '
       << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec << ' ' << st.st_ctim.tv_sec << '.' << st.st_ctim.tv_nsec
       << '\n';
  return line.str();
}

// "above <dir> dev ino mode uid gid\n" for each directory above `path` (canonical), up to "/": what decides whether
// a plugin below it is safe to load, and not its times, which change with every entry written beside it.
std::string above_lines(const fs::path& path) {
  std::ostringstream out;
  for (fs::path up = path.parent_path(); !up.empty(); up = up.parent_path()) {
    struct stat st {};
    out << "above " << up.string();
    if (::stat(up.c_str(), &st) != 0) {
      out << " missing\n";
    } else {
      out << ' ' << st.st_dev << ' ' << st.st_ino << ' ' << st.st_mode << ' ' << st.st_uid << ' ' << st.st_gid << '\n';
    }
    if (up == up.root_path()) break;
  }
  return out.str();
}

fs::path entry_path(const fs::path& dir, const std::string& key) {
  return dir / ("list-plugins-" + fnv1a_hex(key) + ".entry");
}

// Fields are "<length>:<bytes>\n", so any byte may appear in them; a list is its count, then its items.
void put(std::string& out, const std::string& field) {
  out += std::to_string(field.size()) + ':' + field + '\n';
}

void put(std::string& out, const std::vector<std::string>& list) {
  put(out, std::to_string(list.size()));
  for (const std::string& item : list) put(out, item);
}

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  bool get(std::string& field) {
    const size_t colon = text_.find(':', pos_);
    if (colon == std::string::npos || colon == pos_ || colon - pos_ > 12) return false;
    const std::string digits = text_.substr(pos_, colon - pos_);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    const size_t size = std::stoull(digits);
    if (size > text_.size() - colon - 1 || text_.size() - colon - 1 - size < 1 || text_[colon + 1 + size] != '\n') {
      return false;
    }
    field = text_.substr(colon + 1, size);
    pos_ = colon + 2 + size;
    return true;
  }

  bool get(std::vector<std::string>& list) {
    std::string count;
    if (!get(count) || count.empty() || count.size() > 6 ||
        !std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    list.resize(std::stoul(count));
    return std::all_of(list.begin(), list.end(), [this](std::string& item) { return get(item); });
  }

  bool at_end() const { return pos_ == text_.size(); }

 private:
  const std::string& text_;
  size_t pos_ = 0;
};

std::string serialize(const Entry& entry) {
  std::string body;
  put(body, entry.key);
  put(body, entry.plugin_dirs);
  put(body, entry.libraries);
  put(body, entry.fingerprint);
  put(body, entry.output);
  return sealed_entry(body);
}

// The entry in `text`, or nullopt when it is truncated, altered or of another format.
std::optional<Entry> parse(const std::string& text) {
  const std::string header_prefix = kMagic;
  const size_t header_size = header_prefix.size() + 16 + 1;
  if (text.size() < header_size || text.compare(0, header_prefix.size(), header_prefix) != 0 ||
      text[header_size - 1] != '\n') {
    return std::nullopt;
  }
  const std::string body = text.substr(header_size);
  if (text.compare(header_prefix.size(), 16, fnv1a_hex(body)) != 0) return std::nullopt;
  Entry entry;
  Reader in(body);
  if (!in.get(entry.key) || !in.get(entry.plugin_dirs) || !in.get(entry.libraries) || !in.get(entry.fingerprint) ||
      !in.get(entry.output) || !in.at_end()) {
    return std::nullopt;
  }
  return entry;
}

}  // namespace

std::string sealed_entry(const std::string& body) { return kMagic + fnv1a_hex(body) + '\n' + body; }

std::string fingerprint(const fs::path& host_exe, const std::vector<fs::path>& dirs) {
  std::string out = stat_line("host", host_exe);
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(dir, ec);
    const fs::path& resolved = ec ? dir : canonical;
    out += stat_line("dir", resolved) + above_lines(resolved);
    for (const fs::path& file : plugin_files(resolved)) {
      // A plugin linked from elsewhere is judged below the directories of its target.
      const fs::path target = fs::canonical(file, ec);
      out += stat_line("plugin", file);
      if (!ec && target.parent_path() != resolved) out += above_lines(target);
    }
  }
  return out;
}

std::string fingerprint(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& file : files) out += stat_line("library", file);
  return out;
}

std::string key(const fs::path& host_exe, const std::vector<std::string>& args) {
  std::string out;
  put(out, host_exe.string());
  put(out, "LD_LIBRARY_PATH=" + env("LD_LIBRARY_PATH"));
  put(out, "LD_PRELOAD=" + env("LD_PRELOAD"));
  put(out, args);
  return out;
}

fs::path cache_dir() {
  if (const std::string dir = env("KFORGE_CACHE_DIR"); !dir.empty()) return dir;
  if (const std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) return fs::path(xdg) / "kforge";
  if (const std::string home = env("HOME"); !home.empty()) return fs::path(home) / ".cache" / "kforge";
  return {};
}

bool disabled() {
  const std::string v = env("KFORGE_NO_CATALOGUE_CACHE");
  return !v.empty() && v != "0";
}

void store(const Entry& entry) {
  const fs::path dir = cache_dir();
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path path = entry_path(dir, entry.key);
  const fs::path temp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << serialize(entry);
    if (!out.flush()) {
      fs::remove(temp, ec);
      return;
    }
  }
  fs::rename(temp, path, ec);
  if (ec) fs::remove(temp, ec);
}

std::optional<std::string> lookup(const fs::path& host_exe, const std::vector<std::string>& args) {
  const fs::path dir = cache_dir();
  if (dir.empty()) return std::nullopt;
  const std::string wanted = key(host_exe, args);
  std::ifstream in(entry_path(dir, wanted), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const std::optional<Entry> entry = parse(text.str());
  if (!entry || entry->key != wanted) return std::nullopt;
  const std::vector<fs::path> dirs = plugin_search_dirs(entry->plugin_dirs, host_exe);
  if (fingerprint(host_exe, dirs) + fingerprint(entry->libraries) != entry->fingerprint) return std::nullopt;
  return entry->output;
}

}  // namespace kforge::listing
