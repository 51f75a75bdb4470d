#pragma once
// The real runs the notebook bench copies: the default experiment (the
// embedded tiny GPT-2 under the six default modes, `precision-lab-cli run
// --default`) and the same six modes on a tiny Llama built from a config
// (a sweep file over mode), each in its own sweep folder under the
// templates folder, made once with the CLI on one thread. Two models, so
// that the workspaces hold runs the filter (`model:llama`) and the
// grouping (mode, model) tell apart as they would in a real one.
#include <QString>

namespace plab::bench {

struct TemplateOptions {
  QString templates;   // the folder of the sweep folders (made when absent)
  QString cli;         // precision-lab-cli
  QString llamaDir;    // where the tiny Llama's config.json goes (outside `templates`)
  int steps = 0;       // 0: the default experiment's 200
};

// Makes every missing sweep folder of the templates; throws
// std::runtime_error when the CLI is missing or fails.
void ensureTemplates(const TemplateOptions& options);

}  // namespace plab::bench
