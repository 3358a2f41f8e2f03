// NpzWriter: each array one stored (uncompressed) zip entry, its npy_header then its bytes; no
// timestamps, so the same arrays give the same file (as numpy.savez's 1980-01-01 entries).
#include "data/npz_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <functional>
#include <numeric>

#include "data/npy_writer.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

// archive_write_free also closes; a null archive (never made) is left alone.
int npz_free_archive(archive* a) { return a ? archive_write_free(a) : ARCHIVE_OK; }

// libarchive's message for the last error, which may be none.
std::string npz_error(archive* a) {
  const char* message = a ? archive_error_string(a) : nullptr;
  return message ? message : "libarchive gave no reason";
}

}  // namespace

NpzWriter::NpzWriter(const std::filesystem::path& path) : path_(path), archive_(archive_write_new(), npz_free_archive) {
  archive* a = archive_.get();
  if (a == nullptr || archive_write_set_format_zip(a) != ARCHIVE_OK ||
      archive_write_set_options(a, "zip:compression=store") != ARCHIVE_OK ||
      archive_write_open_filename(a, path.c_str()) != ARCHIVE_OK) {
    throw sdk::Error(fmt::format("cannot create '{}': {}", path.string(), npz_error(a)));
  }
}

NpzWriter::~NpzWriter() {
  try {
    close();
  } catch (...) {
  }
}

void NpzWriter::add(const std::string& name, const std::string& descr, size_t item_size,
                    const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  if (!archive_) throw sdk::Error(fmt::format("'{}' is already closed: cannot add '{}'", path_.string(), name));
  const int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
  if (count < 0 || static_cast<size_t>(count) * item_size != bytes) {
    throw sdk::Error(fmt::format("'{}': array '{}' has {} bytes, not the {} of its shape ({})", path_.string(), name,
                                 bytes, count * static_cast<int64_t>(item_size), fmt::join(shape, ", ")));
  }
  const std::string header = npy_header(descr, shape);
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(entry.get(), (name + ".npy").c_str());
  archive_entry_set_filetype(entry.get(), AE_IFREG);
  archive_entry_set_perm(entry.get(), 0644);
  archive_entry_set_size(entry.get(), static_cast<la_int64_t>(header.size() + bytes));
  archive* a = archive_.get();
  const auto failed = [&](const char* what) {
    return sdk::Error(fmt::format("cannot write '{}' into '{}' ({}): {} (disk full?)", name + ".npy", path_.string(),
                                  what, npz_error(a)));
  };
  if (archive_write_header(a, entry.get()) != ARCHIVE_OK) throw failed("entry header");
  if (archive_write_data(a, header.data(), header.size()) != static_cast<la_ssize_t>(header.size())) {
    throw failed("npy header");
  }
  if (bytes > 0 && archive_write_data(a, data, bytes) != static_cast<la_ssize_t>(bytes)) throw failed("array data");
  if (archive_write_finish_entry(a) != ARCHIVE_OK) throw failed("entry end");
}

void NpzWriter::close() {
  if (!archive_) return;
  archive* a = archive_.release();
  const int closed = archive_write_close(a);
  const std::string message = closed == ARCHIVE_OK ? "" : npz_error(a);
  archive_write_free(a);
  if (closed != ARCHIVE_OK) throw sdk::Error(fmt::format("cannot finish '{}': {}", path_.string(), message));
}

}  // namespace kforge::data
