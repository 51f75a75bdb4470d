#include "distributed/rank_agreement.h"

#include <mutex>

#include "hub/sha256.h"
#include "train/torch_runtime.h"
#include "util/json_difference.h"
#include "util/json_limits.h"

namespace plab {
namespace {

// Two ranks on one machine run the same file; on two machines, the same
// build has the same bytes. Hashed once (tens of MB: a fraction of a second).
std::string executableDigest() {
  static std::once_flag once;
  static std::string digest;
  std::call_once(once, [] {
    try {
      digest = sha256File("/proc/self/exe");
    } catch (const std::exception&) {
      digest = "unreadable";
    }
  });
  return digest;
}

}  // namespace

nlohmann::json rankAgreementDocument(const RunConfig& config) {
  nlohmann::json settings = config.toJson();
  settings.erase("name");        // rank 0 names the run folder
  settings.erase("output_dir");  // only rank 0 writes
  return {{"config", settings},
          {"build",
           {{"version", PLAB_VERSION},
            {"executable_sha256", executableDigest()},
            {"libtorch", describeTorchRuntime().libtorchVersion}}}};
}

nlohmann::json peerAgreementDocument(const std::string& text) {
  constexpr size_t kMaxDocumentBytes = 1 << 20;
  if (text.size() <= kMaxDocumentBytes && jsonNestingProblem(text).empty()) {
    nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) return parsed;
  }
  return "(not a settings document: " + std::to_string(text.size()) + " bytes)";
}

std::string rankDisagreement(const std::vector<nlohmann::json>& documents) {
  for (size_t r = 1; r < documents.size(); ++r) {
    const auto d = firstJsonDifference(documents[0], documents[r]);
    if (!d) continue;
    // "config.adamw.lr" -> "the run config's 'adamw.lr'".
    const auto dot = d->path.find('.');
    const std::string section = d->path.substr(0, dot);
    const std::string field = dot == std::string::npos ? d->path : d->path.substr(dot + 1);
    const std::string noun = section == "config"       ? "the run config's"
                             : section == "build"      ? "the build's"
                             : section == "parameters" ? "the model's parameters'"
                                                       : "the settings'";
    return "the ranks disagree on " + noun + " '" + (field.empty() ? section : field) + "' (rank 0 has " +
           differenceValueText(*d, true) + ", rank " + std::to_string(r) + " has " + differenceValueText(*d, false) +
           "): every rank must run the same build on the same settings";
  }
  return "";
}

}  // namespace plab
