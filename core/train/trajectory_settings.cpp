#include "train/trajectory_settings.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include "hub/sha256.h"
#include "tokenizer/tokenizer.h"
#include "train/lr_schedule.h"
#include "train/model_loading.h"
#include "util/errors.h"
#include "util/file_digest.h"
#include "util/json_difference.h"
#include "util/json_limits.h"
#include "util/resources.h"

namespace plab {
namespace fs = std::filesystem;
using nlohmann::json;

const char* const kResumableFields[] = {"name",          "output_dir",       "resume_from",  "steps",
                                        "eval_every",    "eval_batches",     "layer_stats_every",
                                        "update_window", "checkpoint_every", "shadow_recipes",
                                        "shadow_gemm_formats", "device",     "threads",      "reproducible",
                                        nullptr};

namespace {

// Files the tokenizer of a model folder reads (tokenizer_for_model.cpp):
// the vocabulary and merges, and where the document separator comes from.
const char* const kTokenizerFiles[] = {"tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json",
                                       "generation_config.json"};

// A data corpus may be gigabytes: its digest is computed once per file
// version (size and modification time) in a process.
json fileIdentity(const fs::path& file, const std::string& what) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::uint64_t, std::int64_t, std::int64_t>, json> known;
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) {
    const auto key = std::make_tuple(file.string(), static_cast<std::uint64_t>(st.st_size),
                                     static_cast<std::int64_t>(st.st_mtim.tv_sec), static_cast<std::int64_t>(st.st_mtim.tv_nsec));
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (const auto it = known.find(key); it != known.end()) return it->second;
    }
    std::string problem;
    const auto digest = digestRegularFile(file, problem);
    if (!digest) throw ConfigError(what + " " + file.string() + " " + problem);
    const json identity = toJson(*digest);
    std::lock_guard<std::mutex> lock(mutex);
    known[key] = identity;
    return identity;
  }
  std::string problem;
  if (!digestRegularFile(file, problem)) throw ConfigError(what + " " + file.string() + " " + problem);
  throw ConfigError(what + " " + file.string() + " cannot be read");
}

json dataIdentity(const DataConfig& data) {
  if (data.path.empty()) {
    static const json embedded = [] {
      const std::string_view corpus = embeddedResource("data/corpus.txt");
      return json{{"embedded", "data/corpus.txt"},
                  {"bytes", corpus.size()},
                  {"sha256", sha256Hex(std::string(corpus))}};
    }();
    return embedded;
  }
  return fileIdentity(data.path, "the run's data file");
}

json tokenizerIdentity(const ModelSpec& spec) {
  json files = json::object();
  if (spec.tokenizer == "bytes") return files;
  const ResolvedModelSource source = resolveModelSource(spec);
  // The same choice as tokenizerForSource: the byte tokenizer reads no file.
  if (source.folder.empty() || (!source.pretrained && !hasTokenizerFiles(source.folder))) return files;
  for (const char* name : kTokenizerFiles) {
    std::error_code ec;
    if (fs::exists(source.folder / name, ec)) files[name] = fileIdentity(source.folder / name, "the model's tokenizer file");
  }
  return files;
}

// "'data.file'" reads as the file's content to a user: named by the field they wrote.
std::string fieldName(const std::string& path) {
  if (path == "data.file") return "'data.path' (the data file's content)";
  if (path == "tokenizer_files") return "the tokenizer's files (model.path)";
  return "'" + path + "'";
}

// The first step in [1, min(savedSteps, live.steps)] whose learning rate
// differs between the two step counts, or 0: the steps the checkpoint holds
// must read as trained under the resumed run's config (its config.json is the
// record of the whole run), and the steps both would train must follow the
// same schedule. Every step when there are few; otherwise the steps where
// the schedule's pieces meet, the checkpoint's and the last.
int64_t firstStepWithOtherLr(const RunConfig& live, int64_t savedSteps, int64_t step) {
  RunConfig saved = live;
  saved.steps = savedSteps;
  const int64_t last = std::min(savedSteps, live.steps);
  std::vector<int64_t> candidates;
  if (last <= 100000) {
    for (int64_t s = 1; s <= last; ++s) candidates.push_back(s);
  } else {
    for (int64_t w : {std::min(live.warmup_steps, live.steps), std::min(live.warmup_steps, savedSteps)})
      for (int64_t d : {-1, 0, 1, 2}) candidates.push_back(w + d);
    for (int64_t s : {int64_t(1), int64_t(2), step, step + 1, last}) candidates.push_back(s);
  }
  for (int64_t s : candidates)
    if (s >= 1 && s <= last && scheduledLr(saved, s) != scheduledLr(live, s)) return s;
  return 0;
}

}  // namespace

json trajectorySettings(const RunConfig& config) {
  json settings = config.toJson();
  for (const char* const* f = kResumableFields; *f; ++f)
    if (std::string(*f) != "steps") settings.erase(*f);
  settings["model"] = {{"tokenizer", config.model.tokenizer}};
  settings["data"].erase("path");
  settings["data"]["file"] = dataIdentity(config.data);
  settings["tokenizer_files"] = tokenizerIdentity(config.model);
  return settings;
}

std::string trajectoryChange(const json& saved, const RunConfig& live, int64_t step) {
  if (!saved.is_object()) return "'trajectory' must be a JSON object, not " + jsonExcerpt(saved);
  const json current = trajectorySettings(live);
  json savedRest = saved, currentRest = current;
  savedRest.erase("steps");
  currentRest.erase("steps");
  if (auto d = firstJsonDifference(savedRest, currentRest)) {
    // A file's identity is shown whole: its size and digest together.
    for (const char* whole : {"data.file", "tokenizer_files"}) {
      if (d->path.rfind(whole, 0) != 0) continue;
      const json::json_pointer at(std::string(whole) == "data.file" ? "/data/file" : "/tokenizer_files");
      d->path = whole;
      d->inA = savedRest.contains(at);
      d->inB = currentRest.contains(at);
      d->a = d->inA ? savedRest.at(at) : json();
      d->b = d->inB ? currentRest.at(at) : json();
    }
    const std::string field = fieldName(d->path);
    if (!d->inA) return field + " is new in this run (" + differenceValueText(*d, false) + "): the checkpoint's run had none";
    if (!d->inB) return field + " is gone from this run: the checkpoint's run trained with " + differenceValueText(*d, true);
    return field + " is " + differenceValueText(*d, false) + " in this run, the checkpoint's run trained with " +
           differenceValueText(*d, true);
  }
  if (!saved.contains("steps") || !saved.at("steps").is_number_unsigned() || saved.at("steps").get<uint64_t>() < 1 ||
      saved.at("steps").get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    return "'steps' must be the checkpoint's run's step count, not " +
           (saved.contains("steps") ? jsonExcerpt(saved.at("steps")) : std::string("missing"));
  const int64_t savedSteps = static_cast<int64_t>(saved.at("steps").get<uint64_t>());
  if (savedSteps == live.steps) return "";
  if (const int64_t s = firstStepWithOtherLr(live, savedSteps, step)) {
    RunConfig before = live;
    before.steps = savedSteps;
    return "'steps' is " + std::to_string(live.steps) + " in this run, the checkpoint's run had " +
           std::to_string(savedSteps) + ": with lr_schedule \"" + live.lr_schedule + "\" and warmup_steps " +
           std::to_string(live.warmup_steps) + " the learning rate of step " + std::to_string(s) + " is " +
           jsonExcerpt(scheduledLr(live, s)) + " under this run's steps, " + jsonExcerpt(scheduledLr(before, s)) +
           " under the checkpoint's run's (resume with the same steps, or start a new run)";
  }
  return "";
}

}  // namespace plab
