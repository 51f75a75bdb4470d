#pragma once
// The notebook bench's parent process: makes the template runs (the CLI) and
// the synthetic workspaces once, then runs every case in a fresh child
// process, the cases of one round back to back and the rounds repeated
// (interleaved: A B C, A B C ...), and prints each figure beside its target.
#include <QString>
#include <QStringList>
#include <vector>

namespace plab::bench {

struct DriverOptions {
  QString self;          // this executable (its children)
  QString work;          // templates, workspaces, stamps
  QString templates;     // default work/templates
  QString cli;           // precision-lab-cli, to make the templates
  int templateSteps = 0; // 0: the default experiment's 200 steps
  int rounds = 3;
  std::vector<int> sizes = {1, 100, 1000};
  QStringList cases = {"open", "unticked", "cold", "unindexed", "filter", "latency", "export"};
  int seconds = 20;      // latency: the probe's duration
  int filterRuns = 1000;
  int latencyRuns = 50;
  int exportRuns = 50;
  bool smoke = false;    // ctest: 20 runs, one open, checks only
};

int runDriver(const DriverOptions& options);

}  // namespace plab::bench
