#pragma once
// What one child process of the notebook bench measures, each in a fresh
// process (so that CPU time and memory are its own): it opens the main
// window on a workspace and waits until the runs are listed, the table has
// painted and the charts have drawn, then
//   open:   nothing more (the open's figures);
//   filter: types a query key by key and changes the grouping, timing each;
//   idle / train: input latency for a while, idle or while a run trains;
//   export: the longest time the window did not answer during an export.
// Prints one line "BENCH_RESULT {json}" on stdout.
#include <QString>

namespace plab::bench {

struct ChildOptions {
  QString kind;        // open, filter, idle, train, export
  QString workspace;
  int seconds = 20;    // idle / train: how long the probe runs
  QString filterText = "mode:bf16-sr lr<1e-3 model:llama";
  QString exportDir;   // export: where the report goes (made by the parent)
};

// Runs in main() after QApplication exists; returns the exit status.
int runChild(const ChildOptions& options);

}  // namespace plab::bench
