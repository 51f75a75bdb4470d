#pragma once
// The folder every GUI run is written into (one sub-folder per run), plus
// the run and sweep folders the user opened from elsewhere (a CLI sweep,
// a copy from another machine), remembered in linked-runs.json so that they
// are listed again after a restart. Nothing here rewrites a run's files.
#include <QString>
#include <QStringList>

namespace plab::ui {

class Workspace {
 public:
  explicit Workspace(const QString& path = QString());

  // <user data location>/workspace, e.g. ~/.local/share/Precision Lab/workspace.
  static QString defaultPath();

  QString path() const { return path_; }
  bool isValid() const { return !path_.isEmpty(); }
  // Creates the folder; false (with the reason in error) when it cannot.
  bool ensureExists(QString* error = nullptr) const;

  // The run folders to list: those inside the workspace, then the linked
  // ones that still exist; each at most once.
  QStringList runFolders() const;
  bool owns(const QString& runFolder) const;  // inside the workspace folder
  QStringList linkedFolders() const;
  void link(const QString& folder);    // throws plab::IoError when the list cannot be written
  void unlink(const QString& folder);  // likewise

 private:
  void writeLinks(const QStringList& folders) const;
  QString path_;
};

}  // namespace plab::ui
