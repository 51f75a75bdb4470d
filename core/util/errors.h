#pragma once
// Error types thrown by plab_core. Every message names the file, tensor or
// field at fault so that the UI and CLI can show it to the user as-is.
#include <stdexcept>
#include <string>

namespace plab {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ConfigError : Error { using Error::Error; };      // bad config.json / run config
struct ModelError : Error { using Error::Error; };       // bad weights, unknown architecture
struct SafetensorsError : ModelError { using ModelError::ModelError; };
struct TokenizerError : Error { using Error::Error; };
struct DataError : Error { using Error::Error; };        // unreadable / too small dataset
struct HubError : Error { using Error::Error; };         // download failures
struct IoError : Error { using Error::Error; };          // cannot write outputs (disk full, ...)
struct TrainingError : Error { using Error::Error; };    // NaN loss, divergence

}  // namespace plab
