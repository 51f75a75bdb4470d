#include "panels/model_folder_check.h"

#include <QDir>
#include <QFileInfo>

namespace plab::ui {

QString modelFolderProblem(const QString& dir) {
  const QDir folder(dir);
  if (!folder.exists()) return "model folder not found: " + dir;
  if (!QFileInfo(folder.filePath("config.json")).isFile()) return "model folder " + dir + " has no config.json";
  if (!QFileInfo(folder.filePath("model.safetensors")).isFile() &&
      !QFileInfo(folder.filePath("model.safetensors.index.json")).isFile())
    return "model folder " + dir + " has no weights: neither model.safetensors nor model.safetensors.index.json found";
  return {};
}

bool modelFolderHasTokenizer(const QString& dir) { return QFileInfo(QDir(dir).filePath("tokenizer.json")).isFile(); }

}  // namespace plab::ui
