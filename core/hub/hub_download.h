#pragma once
// Downloads a causal LM from the Hugging Face Hub into the local cache
// (same layout as huggingface_hub), with resume, progress and cancel.
// Endpoint: HF_ENDPOINT or https://huggingface.co; token: HF_TOKEN.
// URLs: {endpoint}/{repo}/resolve/{revision}/{file}.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace plab {

struct DownloadProgress {
  std::string file;
  int fileIndex = 0;        // 0-based
  int fileCount = 0;
  uint64_t fileBytesDone = 0;
  uint64_t fileBytesTotal = 0;  // 0 when unknown
};

struct DownloadOptions {
  std::string endpoint;     // empty: HF_ENDPOINT or https://huggingface.co
  std::string token;        // empty: HF_TOKEN (if set)
  std::string revision = "main";
  // Return false to cancel; the download then throws HubError("cancelled").
  std::function<bool(const DownloadProgress&)> progress;
  // 5xx answers and dropped connections are retried (resuming partial
  // files) up to maxAttempts in all, waiting retryDelayMs, then twice that, ...
  int maxAttempts = 4;
  int retryDelayMs = 1000;
  // Slower than this for lowSpeedSeconds: the transfer fails.
  long lowSpeedBytesPerSecond = 1024;
  long lowSpeedSeconds = 30;
  // A body with no announced size (no X-Linked-Size / Content-Length) is
  // refused past this many bytes; one with a size, past that size.
  uint64_t maxBytesWithoutSize = uint64_t(64) << 20;
};

std::string hubEndpoint(const DownloadOptions& options);

// Fetches config.json, tokenizer.json (optional), generation_config.json
// (optional) and model.safetensors or model.safetensors.index.json + shards.
// Partial files resume with HTTP Range; sizes are checked against
// X-Linked-Size / Content-Length (during the transfer too) and sha256
// against the X-Linked-Etag / ETag when it is a sha256. Returns the snapshot folder. Throws HubError with the URL and
// HTTP status on failure.
std::filesystem::path downloadModel(const std::string& repoId, const DownloadOptions& options);

}  // namespace plab
