#include "run/workspace.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <nlohmann/json.hpp>

#include "report/run_folder_reader.h"
#include "util/atomic_file.h"

namespace plab::ui {
namespace {

constexpr const char* kLinksFile = "linked-runs.json";

QString clean(const QString& folder) { return QDir::cleanPath(QFileInfo(folder).absoluteFilePath()); }

QStringList toQStrings(const std::vector<std::filesystem::path>& paths) {
  QStringList out;
  for (const auto& p : paths) out << clean(QString::fromStdString(p.string()));
  return out;
}

}  // namespace

Workspace::Workspace(const QString& path) : path_(path.isEmpty() ? QString() : clean(path)) {}

// The CLI's default too (util/workspace_folder.h): $PLAB_WORKSPACE when
// set, else the app's data location.
QString Workspace::defaultPath() {
  if (const QString explicitFolder = qEnvironmentVariable("PLAB_WORKSPACE"); !explicitFolder.isEmpty())
    return explicitFolder;
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/workspace";
}

bool Workspace::ensureExists(QString* error) const {
  if (QDir().mkpath(path_)) return true;
  if (error) *error = "cannot create the workspace folder " + path_;
  return false;
}

QStringList Workspace::runFolders() const {
  QStringList out = toQStrings(plab::findRunFolders(path_.toStdString()));
  for (const QString& linked : linkedFolders())
    for (const QString& run : toQStrings(plab::findRunFolders(linked.toStdString())))
      if (!out.contains(run)) out << run;
  return out;
}

bool Workspace::owns(const QString& runFolder) const {
  return clean(runFolder).startsWith(path_ + "/");
}

QStringList Workspace::linkedFolders() const {
  QStringList out;
  QFile file(QDir(path_).filePath(kLinksFile));
  if (!file.open(QIODevice::ReadOnly)) return out;
  const auto j = nlohmann::json::parse(file.readAll().toStdString(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("folders") || !j.at("folders").is_array()) return out;
  for (const auto& f : j.at("folders"))
    if (f.is_string() && QFileInfo(QString::fromStdString(f.get<std::string>())).isDir())
      out << QString::fromStdString(f.get<std::string>());
  return out;
}

void Workspace::link(const QString& folder) {
  QStringList links = linkedFolders();
  if (links.contains(clean(folder))) return;
  links << clean(folder);
  writeLinks(links);
}

void Workspace::unlink(const QString& folder) {
  QStringList links = linkedFolders();
  links.removeAll(clean(folder));
  writeLinks(links);
}

void Workspace::writeLinks(const QStringList& folders) const {
  nlohmann::json list = nlohmann::json::array();
  for (const QString& f : folders) list.push_back(f.toStdString());
  plab::writeJsonFileAtomically(std::filesystem::path(path_.toStdString()) / kLinksFile, {{"folders", list}});
}

}  // namespace plab::ui
