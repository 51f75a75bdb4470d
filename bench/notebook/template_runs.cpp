#include "notebook/template_runs.h"

#include <QFileInfo>
#include <QProcess>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "report/run_folder_reader.h"
#include "util/atomic_file.h"
#include "util/json_file.h"

namespace plab::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// docs/images/make-notebook-screenshots.sh's tiny Llama (2 layers, byte tokenizer).
const char* kLlamaConfig = R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 172,
 "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 260,
 "max_position_embeddings": 128, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false})";

QByteArray runCli(const TemplateOptions& o, const QStringList& args) {
  std::fprintf(stderr, "making template runs: %s %s\n", o.cli.toUtf8().constData(), args.join(' ').toUtf8().constData());
  QProcess cli;
  // One thread: two spinning OpenMP threads on a loaded 2-core machine train 40x slower.
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (!env.contains("OMP_NUM_THREADS")) env.insert("OMP_NUM_THREADS", "1");
  cli.setProcessEnvironment(env);
  cli.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  cli.start(o.cli, args);
  if (!cli.waitForFinished(-1) || cli.exitStatus() != QProcess::NormalExit || cli.exitCode() != 0)
    throw std::runtime_error("precision-lab-cli " + args.join(' ').toStdString() + " failed");
  return cli.readAllStandardOutput();
}

bool holdsRuns(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && !findRunFolders(dir).empty();
}

}  // namespace

void ensureTemplates(const TemplateOptions& o) {
  const fs::path root = o.templates.toStdString();
  const fs::path gpt2 = root / "default", llama = root / "llama";
  if (holdsRuns(gpt2) && holdsRuns(llama)) return;
  if (o.cli.isEmpty() || !QFileInfo(o.cli).isExecutable())
    throw std::runtime_error("no template runs in " + root.string() +
                             " and no precision-lab-cli to make them (build it: ninja precision-lab-cli, or --cli PATH)");
  fs::create_directories(root);
  QStringList steps;
  if (o.steps > 0) steps << "--steps" << QString::number(o.steps);
  if (!holdsRuns(gpt2)) {
    fs::remove_all(gpt2);
    runCli(o, QStringList{"run", "--default", "--out", QString::fromStdString(gpt2.string()), "--no-pdf"} + steps);
  }
  if (!holdsRuns(llama)) {
    fs::remove_all(llama);
    const fs::path model = o.llamaDir.toStdString();
    fs::create_directories(model);
    writeFileAtomically(model / "config.json", std::string(kLlamaConfig) + "\n");
    json base = json::parse(runCli(o, {"default-config"}).toStdString());
    base["name"] = "tiny-llama";
    base["model"] = {{"source", "config"}, {"path", fs::absolute(model).string()}, {"revision", "main"}, {"tokenizer", "bytes"}};
    base["adamw"]["lr"] = 1e-3;  // from random weights: the fine-tune's 5e-5 would barely move
    const json sweep = {{"base", base}, {"sweep", {{"mode", {"fp32", "bf16", "bf16-nearest", "bf16-kahan", "bf16-sr", "mixed"}}}}};
    const fs::path file = root / "llama-sweep.json";
    writeJsonFileAtomically(file, sweep);
    runCli(o, QStringList{"run", QString::fromStdString(file.string()), "--out", QString::fromStdString(llama.string()), "--no-pdf"} + steps);
  }
}

}  // namespace plab::bench
