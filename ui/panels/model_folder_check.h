#pragma once
// What a pretrained model folder must hold, checked when it is picked:
// inspecting a model reads only config.json, so missing weights would
// otherwise surface only after Start.
#include <QString>

namespace plab::ui {

// Empty when dir has config.json and safetensors weights (model.safetensors
// or model.safetensors.index.json); otherwise what is missing.
QString modelFolderProblem(const QString& dir);
// Without tokenizer.json the byte tokenizer is used (works, but does not
// match a pretrained model's vocabulary).
bool modelFolderHasTokenizer(const QString& dir);

}  // namespace plab::ui
