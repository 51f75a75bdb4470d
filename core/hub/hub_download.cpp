#include "hub/hub_download.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "hub/hf_cache.h"
#include "hub/hub_names.h"
#include "util/file_names.h"
#include "util/json_file.h"
#include "util/json_limits.h"
#include "util/env.h"
#include "hub/http_client.h"
#include "hub/sha256.h"
#include "util/errors.h"

namespace plab {

namespace fs = std::filesystem;

namespace {

// "W/\"abc\"" -> "abc"
std::string normalizeEtag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag = etag.substr(2);
  etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
  return etag;
}

bool isSha256Hex(const std::string& s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
}

// An ETag becomes a file name: keep it only if it is harmless as one.
bool safeBlobName(const std::string& s) {
  return !s.empty() && s.size() < 200 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; }) &&
         s != "." && s != "..";
}

// No model file comes near this; 10^23 once ended in "error: stoull".
constexpr uint64_t kMaxPlausibleBytes = uint64_t(1) << 50;  // 1 PiB

// An announced size: 0 when absent or not a number; HubError when absurd.
uint64_t parseSize(const std::string& s, const std::string& url) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) return 0;
  if (s.size() > 16 || std::stoull(s) > kMaxPlausibleBytes)
    throw HubError(url + ": the server announces " + textExcerpt(s, 30) + " bytes, which is not a plausible size");
  return std::stoull(s);
}

// Server errors and dropped connections are often transient.
bool worthRetrying(const http::Response& r) { return r.connectionLost || (r.curlCode == 0 && r.status >= 500); }

class Downloader {
 public:
  Downloader(std::string repoId, const DownloadOptions& options)
      : repoId_(std::move(repoId)), options_(options), endpoint_(hubEndpoint(options)),
        token_(options.token.empty() ? envOrEmpty("HF_TOKEN") : options.token), repoDir_(repoCacheDir(repoId_)) {
    // Both become paths (models--org--name, refs/<revision>): checked first.
    validateRepoId(repoId_);
    validateRevision(options_.revision);
  }

  fs::path run() {
    std::vector<std::string> plan = {"config.json", "tokenizer.json", "tokenizer_config.json",
                                     "generation_config.json", "model.safetensors"};
    fileCount_ = static_cast<int>(plan.size());
    fetch("config.json", true);
    fetch("tokenizer.json", false);
    fetch("tokenizer_config.json", false);
    fetch("generation_config.json", false);
    if (!fetch("model.safetensors", false)) {
      // Sharded checkpoint: the index names the shard files.
      fileCount_ += 1;
      fetch("model.safetensors.index.json", true);
      const auto shards = shardsOf(snapshotDir() / "model.safetensors.index.json");
      fileCount_ += static_cast<int>(shards.size());
      for (const auto& shard : shards) fetch(shard, true);
    }
    writeRef();
    return snapshotDir();
  }

 private:
  std::string urlFor(const std::string& file) const {
    return endpoint_ + "/" + repoId_ + "/resolve/" + options_.revision + "/" + file;
  }
  fs::path snapshotDir() const { return repoDir_ / "snapshots" / commit_; }

  [[noreturn]] void failHttp(long status, const std::string& url) const {
    if (status == 401 || status == 403)
      throw HubError(std::to_string(status) + ": access denied for " + url +
                     " - set HF_TOKEN for gated models (and accept the model's licence on the Hub);"
                     " the Hub also answers 401 for repositories that do not exist");
    if (status == 404) throw HubError("404: not found: " + url);
    throw HubError(std::to_string(status) + ": HTTP error for " + url);
  }

  [[noreturn]] void failTransport(const http::Response& r, const std::string& url) const {
    if (r.couldNotConnect) throw HubError("cannot connect to " + endpoint_ + " (" + r.curlError + ")");
    throw HubError("download of " + url + " failed: " + r.curlError +
                   " (the partial file is kept; run again to resume)");
  }

  // Returns false when an optional file is absent (404).
  bool fetch(const std::string& file, bool required) {
    const std::string url = urlFor(file);
    http::Request head;
    head.url = url;
    head.bearerToken = token_;
    head.headOnly = true;
    head.lowSpeedBytesPerSecond = options_.lowSpeedBytesPerSecond;
    head.lowSpeedSeconds = options_.lowSpeedSeconds;
    http::Response meta;
    for (int attempt = 1;; ++attempt) {
      meta = http::perform(head);
      if (!worthRetrying(meta) || attempt >= options_.maxAttempts) break;
      waitBeforeRetry(attempt);
    }
    if (meta.curlCode != 0) failTransport(meta, url);
    if (meta.status == 404 && !required) return false;
    if (meta.status < 200 || meta.status >= 300) failHttp(meta.status, url);

    if (commit_.empty()) {
      const std::string commit = meta.first("x-repo-commit");
      commit_ = safeBlobName(commit) ? commit : options_.revision;
    }
    std::string etag = normalizeEtag(meta.first("x-linked-etag"));
    if (etag.empty()) etag = normalizeEtag(meta.first("etag"));
    if (!safeBlobName(etag)) etag = "url-" + sha256Hex(url);
    uint64_t expected = parseSize(meta.first("x-linked-size"), url);
    if (expected == 0) expected = parseSize(meta.last("content-length"), url);

    const fs::path blobs = repoDir_ / "blobs";
    fs::create_directories(blobs);
    const fs::path blob = blobs / etag;
    std::error_code ec;
    const bool haveBlob = fs::is_regular_file(blob, ec) && (expected == 0 || fs::file_size(blob, ec) == expected);
    if (!haveBlob) download(file, url, blob, etag, expected);
    link(file, blob);
    ++fileIndex_;
    return true;
  }

  void download(const std::string& file, const std::string& url, const fs::path& blob, const std::string& etag,
                uint64_t expected) {
    const fs::path partial = blob.string() + ".incomplete";
    std::error_code ec;
    for (int attempt = 1;; ++attempt) {
      const Transfer r = transfer(file, url, partial, expected);
      if (worthRetrying(r) && attempt < options_.maxAttempts) {
        waitBeforeRetry(attempt);  // then resume from what the partial file holds
        continue;
      }
      if (r.aborted && !r.abortReason.empty()) {
        fs::remove(partial, ec);
        throw HubError(r.abortReason);
      }
      if (r.aborted) throw HubError("download cancelled (" + file + "; the partial file is kept for resume)");
      if (r.tooSlow)
        throw HubError("download of " + url + " is too slow (under " + std::to_string(options_.lowSpeedBytesPerSecond) +
                       " bytes/s for " + std::to_string(options_.lowSpeedSeconds) +
                       " s); the partial file is kept: run again to resume");
      if (r.curlCode != 0) failTransport(r, url);
      if (r.status != 0 && !r.alreadyComplete && (r.status < 200 || r.status >= 300)) failHttp(r.status, url);
      break;
    }
    finish(url, partial, blob, etag, expected);
  }

  struct Transfer : http::Response {
    bool alreadyComplete = false;  // 416: nothing left past our partial file
    std::string abortReason;       // set when we stopped a body that was too long
  };

  void waitBeforeRetry(int attempt) const {
    std::this_thread::sleep_for(std::chrono::milliseconds(int64_t(options_.retryDelayMs) << (attempt - 1)));
  }

  // One GET of what the partial file lacks. status 0: nothing to fetch.
  Transfer transfer(const std::string& file, const std::string& url, const fs::path& partial, uint64_t expected) {
    Transfer result;
    std::error_code ec;
    uint64_t offset = fs::is_regular_file(partial, ec) ? fs::file_size(partial, ec) : 0;
    if (expected > 0 && offset > expected) {  // stale leftovers: start over
      fs::remove(partial, ec);
      offset = 0;
    }

    DownloadProgress progress;
    progress.file = file;
    progress.fileIndex = fileIndex_;
    progress.fileCount = fileCount_;
    progress.fileBytesTotal = expected;
    progress.fileBytesDone = offset;

    if (expected == 0 || offset < expected) {
      std::ofstream out;
      bool opened = false;
      bool writeFailed = false;
      http::Request get;
      get.url = url;
      get.bearerToken = token_;
      get.rangeStart = offset;
      get.lowSpeedBytesPerSecond = options_.lowSpeedBytesPerSecond;
      get.lowSpeedSeconds = options_.lowSpeedSeconds;
      const uint64_t limit = expected > 0 ? expected : options_.maxBytesWithoutSize;
      get.onBody = [&](const char* data, std::size_t size, long status) {
        if (status < 200 || status >= 300) return true;  // error pages are not data
        if (!opened) {
          // 206: the server honoured the Range; 200: it sends everything again.
          const bool append = status == 206 && offset > 0;
          if (!append) progress.fileBytesDone = 0;
          out.open(partial, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
          opened = true;
        }
        if (progress.fileBytesDone + size > limit) {
          result.abortReason =
              expected > 0 ? url + ": the server sends more than the " + std::to_string(expected) + " bytes it announced"
                           : url + ": no size announced and more than " + std::to_string(limit) +
                                 " bytes sent; refusing it";
          return false;
        }
        if (!out.write(data, static_cast<std::streamsize>(size))) {
          writeFailed = true;
          return false;
        }
        progress.fileBytesDone += size;
        return !options_.progress || options_.progress(progress);
      };
      static_cast<http::Response&>(result) = http::perform(get);
      if (opened) out.close();
      if (writeFailed) throw IoError("cannot write " + partial.string());
      result.alreadyComplete = result.status == 416 && offset > 0;
      const bool failed = result.aborted || result.curlCode != 0 || worthRetrying(result) ||
                          (!result.alreadyComplete && (result.status < 200 || result.status >= 300));
      if (!opened && !failed) std::ofstream(partial, std::ios::binary | std::ios::trunc).close();  // empty file
    }
    return result;
  }

  void finish(const std::string& url, const fs::path& partial, const fs::path& blob, const std::string& etag,
              uint64_t expected) {
    std::error_code ec;
    const uint64_t got = fs::file_size(partial, ec);
    if (expected > 0 && got != expected) {
      fs::remove(partial, ec);
      throw HubError("size mismatch for " + url + ": expected " + std::to_string(expected) + " bytes, got " +
                     std::to_string(got));
    }
    if (isSha256Hex(etag)) {
      const std::string actual = sha256File(partial);
      if (actual != etag) {
        fs::remove(partial, ec);
        throw HubError("sha256 mismatch for " + url + ": expected " + etag + ", got " + actual);
      }
    }
    fs::rename(partial, blob);
  }

  void link(const std::string& file, const fs::path& blob) {
    const fs::path target = snapshotDir() / file;
    fs::create_directories(target.parent_path());
    std::error_code ec;
    fs::remove(target, ec);
    // Relative link, like huggingface_hub: snapshots/<commit>/<file> -> ../../blobs/<etag>
    std::string up = "../../";
    for (auto c = fs::path(file).parent_path(); !c.empty(); c = c.parent_path()) up += "../";
    fs::create_symlink(fs::path(up) / "blobs" / blob.filename(), target, ec);
    if (ec) fs::copy_file(blob, target, fs::copy_options::overwrite_existing);
  }

  void writeRef() const {
    if (commit_ == options_.revision) return;
    fs::create_directories(repoDir_ / "refs");
    std::ofstream out(repoDir_ / "refs" / options_.revision, std::ios::binary | std::ios::trunc);
    out << commit_;
    if (!out) throw IoError("cannot write " + (repoDir_ / "refs" / options_.revision).string());
  }

  std::vector<std::string> shardsOf(const fs::path& index) const {
    // The reader of every file the tool reads back: size-capped, regular files only.
    JsonFile read = readJsonFile(index);
    if (!read.ok()) throw HubError(index.string() + " " + read.problem);
    const nlohmann::json& j = read.value;
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      throw HubError(index.string() + ": no weight_map object");
    std::set<std::string> shards;
    for (const auto& [tensor, shard] : j["weight_map"].items()) {
      if (!shard.is_string()) throw HubError(index.string() + ": weight_map entry for " + tensor + " is not a file name");
      const std::string name = shard.get<std::string>();
      if (!isPlainFileName(name))
        throw HubError(index.string() + ": unsafe shard name '" + name + "'");
      shards.insert(name);
    }
    return {shards.begin(), shards.end()};
  }

  std::string repoId_;
  const DownloadOptions& options_;
  std::string endpoint_;
  std::string token_;
  fs::path repoDir_;
  std::string commit_;
  int fileIndex_ = 0;
  int fileCount_ = 0;
};

}  // namespace

std::string hubEndpoint(const DownloadOptions& options) {
  std::string endpoint = options.endpoint;
  if (endpoint.empty()) endpoint = envOrEmpty("HF_ENDPOINT");
  if (endpoint.empty()) endpoint = "https://huggingface.co";
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint;
}

fs::path downloadModel(const std::string& repoId, const DownloadOptions& options) {
  try {
    return Downloader(repoId, options).run();
  } catch (const fs::filesystem_error& e) {
    throw IoError(std::string("hub cache: ") + e.what());
  }
}

}  // namespace plab
