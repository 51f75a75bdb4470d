// `default-config`, `inspect`, `cache` and `download`.
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "cli_support.h"
#include "model_argument.h"
#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "train/model_inspect.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab::cli {
namespace fs = std::filesystem;

const char* const kDefaultConfigHelp =
    "usage: precision-lab-cli default-config\n"
    "\n"
    "Prints the built-in default run config as JSON: a starting point for your\n"
    "own CONFIG.json (every field is listed).\n";

const char* const kInspectHelp =
    "usage: precision-lab-cli inspect MODEL\n"
    "\n"
    "Prints the layer tree of a model with parameter counts. MODEL is one of:\n"
    "  a model spec as JSON    '{\"source\":\"hub\",\"path\":\"org/name\",\"revision\":\"main\"}'\n"
    "                          (source: embedded, config, folder, hub)\n"
    "  embedded                the built-in tiny GPT-2\n"
    "  a folder                with config.json (+ model.safetensors: pretrained)\n"
    "  a config.json file      a Hugging Face config (random init) or a run config\n"
    "  org/name                a model in the local Hugging Face cache (never downloads)\n";

const char* const kCacheHelp =
    "usage: precision-lab-cli cache\n"
    "\n"
    "Lists the models in the local Hugging Face cache ($HF_HUB_CACHE, or\n"
    "$HF_HOME/hub, default ~/.cache/huggingface/hub).\n";

const char* const kDownloadHelp =
    "usage: precision-lab-cli download REPO [--revision R]\n"
    "\n"
    "Downloads config.json, tokenizer.json and the safetensors weights of a\n"
    "causal LM from the Hugging Face Hub into the local cache (resumable).\n"
    "Uses HF_ENDPOINT and HF_TOKEN when set.\n";

int defaultConfigCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kDefaultConfigHelp;
    return kOk;
  }
  args.positionals(0);
  std::cout << defaultRunConfig().toJson().dump(2) << '\n';
  return kOk;
}

namespace {

void printTree(const ModuleNode& n, int depth) {
  const std::string label = std::string(2 * depth, ' ') + (n.name.empty() ? n.type : n.name);
  std::cout << std::left << std::setw(48) << label << std::setw(20) << n.type << std::right << std::setw(14)
            << n.totalParameters << '\n';
  for (const ModuleNode& c : n.children) printTree(c, depth + 1);
}

std::string sizeText(uint64_t bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << bytes / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

}  // namespace

int inspectCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kInspectHelp;
    return kOk;
  }
  const auto pos = args.positionals(1);
  if (pos.empty()) throw UsageError("missing MODEL");
  const ModelOverview o = inspectModel(modelSpecFromArgument(pos[0]));
  std::cout << "model:      " << o.sourceDescription << '\n'
            << "type:       " << o.config.model_type << '\n'
            << "parameters: " << o.parameterCount << '\n'
            << "tokenizer:  " << o.tokenizerKind << "\n\n";
  std::cout << std::left << std::setw(48) << "module" << std::setw(20) << "type" << std::right << std::setw(14)
            << "parameters" << '\n';
  printTree(o.modules, 0);
  return kOk;
}

int cacheCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kCacheHelp;
    return kOk;
  }
  args.positionals(0);
  const auto models = listCachedModels();
  std::cout << "cache: " << hfHubCache().string() << '\n';
  if (models.empty()) {
    std::cout << "(no models)\n";
    return kOk;
  }
  std::cout << std::left << std::setw(40) << "repo" << std::setw(14) << "revision" << std::setw(10) << "type"
            << std::setw(9) << "weights" << std::right << std::setw(12) << "size" << '\n';
  for (const CachedModel& m : models)
    std::cout << std::left << std::setw(40) << m.repoId << std::setw(14) << m.revision.substr(0, 12) << std::setw(10)
              << (m.modelType.empty() ? "?" : m.modelType) << std::setw(9) << (m.hasWeights ? "yes" : "no")
              << std::right << std::setw(12) << sizeText(m.sizeBytes) << '\n';
  return kOk;
}

int downloadCommand(Args& args) {
  if (args.wantsHelp()) {
    std::cout << kDownloadHelp;
    return kOk;
  }
  DownloadOptions options;
  if (const auto r = args.value("--revision")) options.revision = *r;
  const auto pos = args.positionals(1);
  if (pos.empty()) throw UsageError("missing REPO (e.g. openai-community/gpt2)");
  const bool terminal = stderrIsTerminal();
  std::string lastFile;
  options.progress = [&](const DownloadProgress& p) {
    std::ostringstream line;
    line << "[" << p.fileIndex + 1 << "/" << p.fileCount << "] " << p.file << "  " << sizeText(p.fileBytesDone);
    if (p.fileBytesTotal > 0)
      line << " / " << sizeText(p.fileBytesTotal) << " (" << (100 * p.fileBytesDone / p.fileBytesTotal) << "%)";
    if (terminal) {
      std::fprintf(stderr, "\r\033[K%s", line.str().c_str());
    } else if (p.file != lastFile) {
      std::fprintf(stderr, "%s\n", line.str().c_str());
    }
    lastFile = p.file;
    return true;
  };
  const fs::path snapshot = downloadModel(pos[0], options);
  if (terminal) std::fprintf(stderr, "\n");
  std::cout << "downloaded " << pos[0] << "@" << options.revision << " to " << snapshot.string() << '\n';
  return kOk;
}

}  // namespace plab::cli
