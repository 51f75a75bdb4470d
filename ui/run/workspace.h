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
  // ones that still exist; each at most once. problem: as linkedFolders.
  QStringList runFolders(QString* problem = nullptr) const;
  // Inside the workspace folder once links are resolved, with no link on the
  // way: a run reached through a link is not the workspace's to delete.
  bool owns(const QString& runFolder) const;
  // A symbolic link inside the workspace (to a run elsewhere).
  bool holdsLink(const QString& folder) const;
  // Deletes a run of the workspace and returns a sentence for the log. A
  // link in the workspace: only the link goes, never its target. A folder
  // the tool wrote (plab::runFolderOriginProblem): to the trash when
  // useTrash (whole, so it can be restored; the data home the trash lives
  // in is created when missing, and nothing is deleted when it cannot be), else only the
  // files the tool writes are removed, never through a link, and the folder
  // goes when nothing else is left. Throws plab::Error with the reason, and
  // deletes nothing, for any other folder.
  QString removeRun(const QString& runFolder, bool useTrash) const;
  // The linked folders that still exist; none, with problem set to why,
  // when linked-runs.json is there but refused (not a regular file, too
  // big, nested too deep, not UTF-8) or not JSON.
  QStringList linkedFolders(QString* problem = nullptr) const;
  // Throw plab::IoError when the list cannot be written, or when it is
  // there but cannot be read (it is never rewritten over).
  void link(const QString& folder);
  void unlink(const QString& folder);

 private:
  QStringList linksToRewrite() const;
  void writeLinks(const QStringList& folders) const;
  QString path_;
};

}  // namespace plab::ui
