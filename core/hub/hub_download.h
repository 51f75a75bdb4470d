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
};

std::string hubEndpoint(const DownloadOptions& options);

// Fetches config.json, tokenizer.json (optional), generation_config.json
// (optional) and model.safetensors or model.safetensors.index.json + shards.
// Partial files resume with HTTP Range; sizes are checked against
// Content-Length and sha256 against the X-Linked-Etag / ETag when it is a
// sha256. Returns the snapshot folder. Throws HubError with the URL and
// HTTP status on failure.
std::filesystem::path downloadModel(const std::string& repoId, const DownloadOptions& options);

}  // namespace plab
