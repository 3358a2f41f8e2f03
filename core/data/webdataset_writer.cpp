// Writing WebDataset shards with libarchive (ustar, each member a regular file with zeroed time and owner), a
// shard at a time under a temporary name renamed when complete.
#include "data/webdataset_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

std::string tar_writer_error(archive* a) {
  const char* message = archive_error_string(a);
  return message ? message : "libarchive gave no reason";
}

// The member extension of an image path, or empty when it is not one the image-text reader decodes.
std::string image_member_extension(const std::string& image) {
  std::string extension = std::filesystem::path(image).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* known : {".jpg", ".jpeg", ".png", ".webp"}) {
    if (extension == known) return extension.substr(1);
  }
  return "";
}

std::string read_image_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf())) throw sdk::Error(fmt::format("cannot read the image '{}'", path.string()));
  return std::move(bytes).str();
}

}  // namespace

TarShardWriter::TarShardWriter(std::filesystem::path path)
    : path_(std::move(path)), temporary_(path_.string() + ".tmp"), archive_(archive_write_new(), archive_write_free) {
  archive* a = archive_.get();
  if (!a || archive_write_set_format_ustar(a) != ARCHIVE_OK ||
      archive_write_open_filename(a, temporary_.c_str()) != ARCHIVE_OK) {
    throw sdk::Error(fmt::format("cannot create the shard '{}': {}", temporary_.string(), tar_writer_error(a)));
  }
}

void TarShardWriter::add(const std::string& name, std::string_view bytes) {
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(entry.get(), name.c_str());
  archive_entry_set_filetype(entry.get(), AE_IFREG);
  archive_entry_set_perm(entry.get(), 0644);
  archive_entry_set_size(entry.get(), static_cast<la_int64_t>(bytes.size()));
  archive* a = archive_.get();
  if (archive_write_header(a, entry.get()) != ARCHIVE_OK ||
      (!bytes.empty() && archive_write_data(a, bytes.data(), bytes.size()) != static_cast<la_ssize_t>(bytes.size()))) {
    throw sdk::Error(fmt::format("cannot write '{}' into '{}': {}", name, temporary_.string(), tar_writer_error(a)));
  }
}

void TarShardWriter::close() {
  archive* a = archive_.get();
  if (archive_write_close(a) != ARCHIVE_OK) {
    throw sdk::Error(fmt::format("cannot finish the shard '{}': {}", temporary_.string(), tar_writer_error(a)));
  }
  std::filesystem::rename(temporary_, path_);
}

WebDatasetWriteResult write_webdataset(const WebDatasetWriteOptions& options) {
  if (options.samples_per_shard <= 0) {
    throw sdk::ConfigError(fmt::format("--samples-per-shard {} must be positive", options.samples_per_shard));
  }
  std::ifstream manifest(options.manifest);
  if (!manifest) throw sdk::Error(fmt::format("cannot open the manifest '{}'", options.manifest.string()));
  std::filesystem::create_directories(options.output);
  if (!options.overwrite) {
    for (const auto& entry : std::filesystem::directory_iterator(options.output)) {
      if (entry.path().extension() == ".tar") {
        throw sdk::Error(fmt::format("'{}' already holds shards ({}); give --overwrite to replace them",
                                     options.output.string(), entry.path().filename().string()));
      }
    }
  }
  WebDatasetWriteResult result;
  std::unique_ptr<TarShardWriter> shard;
  nlohmann::json shard_list = nlohmann::json::array();
  const auto close_shard = [&] {
    if (!shard) return;
    shard->close();
    shard.reset();
    shard_list.push_back(
        {{"file", result.shards.back().filename().string()},
         {"samples", result.samples - (static_cast<int64_t>(result.shards.size()) - 1) * options.samples_per_shard}});
  };
  std::string text;
  for (int64_t line = 1; std::getline(manifest, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string image_bytes;
    std::string extension;
    nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
    try {
      if (!object.is_object()) throw sdk::Error("not a JSON object");
      for (const char* field : {"image", "text"}) {
        if (!object.contains(field) || !object[field].is_string()) {
          throw sdk::Error(fmt::format("\"{}\" must be a string", field));
        }
      }
      const std::string image = object["image"].get<std::string>();
      extension = image_member_extension(image);
      if (extension.empty()) {
        throw sdk::Error(fmt::format("the image '{}' is not a .jpg, .jpeg, .png or .webp file", image));
      }
      image_bytes = read_image_file(options.manifest.parent_path() / image);
    } catch (const sdk::Error& e) {
      const std::string message = fmt::format("{}:{}: {}", options.manifest.string(), line, e.what());
      if (!options.skip_bad_lines) throw sdk::Error(message + " (--skip-bad-lines skips such lines)");
      result.skipped.push_back(message);
      continue;
    }
    if (result.samples % options.samples_per_shard == 0) {
      close_shard();
      result.shards.push_back(options.output / fmt::format("shard-{:06d}.tar", result.shards.size()));
      shard = std::make_unique<TarShardWriter>(result.shards.back());
    }
    const std::string key = fmt::format("{:09d}", result.samples);
    shard->add(key + "." + extension, image_bytes);
    shard->add(key + ".txt", object["text"].get<std::string>());
    shard->add(key + ".json", object.dump());
    ++result.samples;
    result.image_bytes += static_cast<int64_t>(image_bytes.size());
  }
  close_shard();
  if (result.samples == 0) throw sdk::Error(fmt::format("the manifest '{}' gave no sample", options.manifest.string()));
  result.metadata = options.output / "webdataset.json";
  const nlohmann::json metadata = {{"format", "webdataset"},
                                   {"manifest", options.manifest.string()},
                                   {"samples", result.samples},
                                   {"samples_per_shard", options.samples_per_shard},
                                   {"image_bytes", result.image_bytes},
                                   {"skipped_lines", result.skipped.size()},
                                   {"shards", shard_list}};
  std::ofstream(result.metadata) << metadata.dump(2) << "\n";
  return result;
}

}  // namespace kforge::data
