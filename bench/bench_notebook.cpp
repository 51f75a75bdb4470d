// The lab notebook at the scale of real experiments (issue 35): opening
// synthetic workspaces of 1, 100 and 1,000 runs (copies of real run
// folders), filtering and grouping 1,000 runs key by key, the window's input
// latency while a run trains (nice +10 against none) and its longest stall
// during an export of 50 runs — each case in a fresh process, the rounds
// interleaved, each figure beside its target. bench/README.md says more.
//
//   QT_QPA_PLATFORM=offscreen build/bench/bench_notebook [options]
//     --rounds N          rounds of every case (default 3)
//     --sizes 1,100,1000  workspaces opened
//     --cases LIST        open,unticked,cold,unindexed,filter,latency,export (default all)
//     --seconds S         the latency probe's duration (default 20)
//     --work DIR          templates and workspaces (default build/bench/notebook-work)
//     --templates DIR     the template runs (default WORK/templates, made with the CLI: two models)
//     --template-steps N  steps of the template runs when the bench makes them (default 200)
//     --cli PATH          precision-lab-cli (default the one built beside it)
//     --smoke             20 runs, one open, checks only (ctest)
#include <QApplication>
#include <QCoreApplication>
#include <cstdio>
#include <cstring>
#include <string>

#include "notebook/child_cases.h"
#include "notebook/driver.h"

namespace {

std::vector<int> parseSizes(const QString& text) {
  std::vector<int> out;
  for (const QString& part : text.split(',', Qt::SkipEmptyParts)) out.push_back(part.trimmed().toInt());
  return out;
}

int usage() {
  std::fprintf(stderr, "usage: bench_notebook [--rounds N] [--sizes 1,100,1000] [--cases open,unticked,cold,unindexed,filter,latency,export]\n"
                       "                      [--seconds S] [--work DIR] [--templates DIR] [--template-steps N] [--cli PATH] [--smoke]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--child") == 0) {
    qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    plab::bench::ChildOptions options;
    options.kind = QString::fromUtf8(argv[2]);
    for (int i = 3; i + 1 < argc; i += 2) {
      const std::string key = argv[i];
      const QString value = QString::fromUtf8(argv[i + 1]);
      if (key == "--workspace") options.workspace = value;
      else if (key == "--seconds") options.seconds = value.toInt();
      else if (key == "--export-dir") options.exportDir = value;
      else if (key == "--filter") options.filterText = value;
    }
    return plab::bench::runChild(options);
  }
  QCoreApplication app(argc, argv);
  plab::bench::DriverOptions o;
  o.self = QCoreApplication::applicationFilePath();
  o.work = QCoreApplication::applicationDirPath() + "/notebook-work";
  o.cli = qEnvironmentVariable("PLAB_CLI", PLAB_BENCH_CLI);
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (key == "--smoke") {
      o.smoke = true;
      continue;
    }
    if (i + 1 >= argc) return usage();
    const QString value = QString::fromUtf8(argv[++i]);
    if (key == "--rounds") o.rounds = value.toInt();
    else if (key == "--sizes") o.sizes = parseSizes(value);
    else if (key == "--cases") o.cases = value.split(',', Qt::SkipEmptyParts);
    else if (key == "--seconds") o.seconds = value.toInt();
    else if (key == "--work") o.work = value;
    else if (key == "--templates") o.templates = value;
    else if (key == "--template-steps") o.templateSteps = value.toInt();
    else if (key == "--cli") o.cli = value;
    else return usage();
  }
  if (o.rounds < 1 || o.sizes.empty() || o.seconds < 1) return usage();
  if (o.smoke && o.templateSteps == 0) o.templateSteps = 10;  // cheap templates: the smoke test checks, never times
  if (o.templates.isEmpty()) o.templates = o.work + (o.smoke ? "/smoke-templates" : "/templates");
  return plab::bench::runDriver(o);
}
