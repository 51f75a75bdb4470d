#include "run/workspace.h"

#include <QDir>
#include <QFileInfo>
#include <QSet>
#include <QStandardPaths>
#include <nlohmann/json.hpp>

#include "report/run_folder_reader.h"
#include "util/atomic_file.h"
#include "util/errors.h"
#include "util/json_file.h"
#include "util/run_folder.h"

namespace plab::ui {
namespace {

constexpr const char* kLinksFile = "linked-runs.json";

QString clean(const QString& folder) { return QDir::cleanPath(QFileInfo(folder).absoluteFilePath()); }

// Qt's freedesktop trash needs the data home (~/.local/share) to exist:
// without it QFile::moveToTrash "succeeds" into ./files and ./info of the
// current folder. Creates it (0700, as the XDG spec asks); throws when that
// is impossible, before anything moves.
void ensureTrashHome() {
  const QString home = QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation);
  if (home.isEmpty() || !QFileInfo(home).isAbsolute())
    throw plab::IoError("not deleted: there is no trash (no data folder such as ~/.local/share)");
  if (QFileInfo(home).isDir()) return;
  if (!QDir().mkpath(home))
    throw plab::IoError("not deleted: the trash needs " + home.toStdString() + ", which cannot be created");
  QFile::setPermissions(home, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
}

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

QStringList Workspace::runFolders(QString* problem) const {
  QStringList out = toQStrings(plab::findRunFolders(path_.toStdString()));
  QSet<QString> listed(out.begin(), out.end());
  for (const QString& linked : linkedFolders(problem))
    for (const QString& run : toQStrings(plab::findRunFolders(linked.toStdString())))
      if (!listed.contains(run)) {
        listed.insert(run);
        out << run;
      }
  return out;
}

bool Workspace::owns(const QString& runFolder) const {
  const QString folder = clean(runFolder);
  if (path_.isEmpty() || !folder.startsWith(path_ + "/")) return false;
  // No link between the workspace and the run: lstat each step.
  for (QString p = folder; p.size() > path_.size(); p = QFileInfo(p).path())
    if (QFileInfo(p).isSymLink()) return false;
  const QString resolvedWorkspace = QFileInfo(path_).canonicalFilePath();
  const QString resolved = QFileInfo(folder).canonicalFilePath();
  return !resolvedWorkspace.isEmpty() && resolved.startsWith(resolvedWorkspace + "/");
}

bool Workspace::holdsLink(const QString& folder) const {
  const QString link = clean(folder);
  if (path_.isEmpty() || !link.startsWith(path_ + "/") || !QFileInfo(link).isSymLink()) return false;
  const QString parent = QFileInfo(link).path();  // the link's own folder must be the workspace's
  return parent == path_ || owns(parent);
}

QString Workspace::removeRun(const QString& runFolder, bool useTrash) const {
  const QString folder = clean(runFolder);
  if (holdsLink(folder)) {
    const QString target = QFileInfo(folder).symLinkTarget();
    if (!QFile::remove(folder))  // unlink(2): the link, never what it points to
      throw plab::IoError("cannot remove the link " + folder.toStdString());
    return QString("removed the link %1; its target %2 is left in place").arg(folder, target);
  }
  if (!owns(folder))
    throw plab::ConfigError("not deleted: " + folder.toStdString() +
                            " is not inside the workspace once links are resolved (" +
                            QFileInfo(folder).canonicalFilePath().toStdString() + ")");
  const std::filesystem::path dir = folder.toStdString();
  if (const std::string problem = plab::runFolderOriginProblem(dir); !problem.empty())
    throw plab::ConfigError("not deleted: " + folder.toStdString() + " " + problem);
  if (useTrash) {
    ensureTrashHome();
    QString trashed;
    // Said as an absolute path, wherever Qt put it.
    if (QFile::moveToTrash(folder, &trashed)) return "moved to the trash: " + QFileInfo(trashed).absoluteFilePath();
  }
  const std::vector<std::filesystem::path> kept = plab::deleteRunFolder(dir);
  if (kept.empty()) return "deleted " + folder + " (no trash available)";
  QStringList names;
  for (size_t i = 0; i < kept.size() && i < 5; ++i) names << QString::fromStdString(kept[i].string());
  if (kept.size() > 5) names << QString("and %1 more").arg(kept.size() - 5);
  return QString("deleted the files Precision Lab wrote in %1 (no trash available); kept %2 files it did not "
                 "write: %3")
      .arg(folder)
      .arg(kept.size())
      .arg(names.join(", "));
}

QStringList Workspace::linkedFolders(QString* problem) const {
  QStringList out;
  const std::filesystem::path file = std::filesystem::path(path_.toStdString()) / kLinksFile;
  const plab::JsonFile read = plab::readJsonFile(file);  // regular, size- and nesting-capped, UTF-8
  if (!read.ok()) {
    if (problem && read.status != plab::JsonFileStatus::Missing)
      *problem = QString::fromStdString(file.string() + " " + read.problem);
    return out;
  }
  const nlohmann::json& j = read.value;
  if (!j.is_object() || !j.contains("folders") || !j.at("folders").is_array()) return out;
  for (const auto& f : j.at("folders"))
    if (f.is_string() && QFileInfo(QString::fromStdString(f.get<std::string>())).isDir())
      out << QString::fromStdString(f.get<std::string>());
  return out;
}

// The list as it is, or a throw when it is there but cannot be read: it is
// the user's, and is never rewritten over (its links would be lost).
QStringList Workspace::linksToRewrite() const {
  QString problem;
  QStringList links = linkedFolders(&problem);
  if (!problem.isEmpty())
    throw plab::IoError(problem.toStdString() + "; it is left as it is (move it away to link folders again)");
  return links;
}

void Workspace::link(const QString& folder) {
  QStringList links = linksToRewrite();
  if (links.contains(clean(folder))) return;
  links << clean(folder);
  writeLinks(links);
}

void Workspace::unlink(const QString& folder) {
  QStringList links = linksToRewrite();
  links.removeAll(clean(folder));
  writeLinks(links);
}

void Workspace::writeLinks(const QStringList& folders) const {
  nlohmann::json list = nlohmann::json::array();
  for (const QString& f : folders) list.push_back(f.toStdString());
  plab::writeJsonFileAtomically(std::filesystem::path(path_.toStdString()) / kLinksFile, {{"folders", list}});
}

}  // namespace plab::ui
