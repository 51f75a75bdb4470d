#include "panels/dataset_check.h"

#include <QFileInfo>
#include <exception>

#include "data/document_reader.h"

namespace plab::ui {
namespace {
// Reading is synchronous; above this a pick would freeze the window.
constexpr qint64 kLargestCheckedFile = 64LL << 20;
}  // namespace

QString datasetProblem(const plab::DataConfig& config) {
  if (config.path.empty()) return {};  // the embedded corpus
  const QFileInfo file(QString::fromStdString(config.path));
  if (file.isFile() && file.size() > kLargestCheckedFile) return {};
  try {
    if (plab::readDocuments(config).empty()) return "no documents in " + file.filePath();
  } catch (const std::exception& e) {
    return QString::fromUtf8(e.what());
  }
  return {};
}

}  // namespace plab::ui
