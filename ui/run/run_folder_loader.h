#pragma once
// Reads run folders for the runs table in the background: a workspace of a
// thousand runs is listed while the window is already usable. Each folder
// is read from its index when current (report/run_index.h: scalar steps,
// no per-layer records), else in full and indexed for next time when the
// workspace owns it; the runs arrive in batches on the owner's thread.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "report/run_folder_reader.h"
#include "run/workspace.h"

namespace plab::ui {

struct LoadedRunFolder {
  QString folder;
  bool linked = false;           // outside the workspace
  bool read = false;             // else problem says why it is unreadable
  QString problem;
  plab::StoredRun run;           // scalar steps
};

class RunFolderLoader : public QObject {
  Q_OBJECT
 public:
  explicit RunFolderLoader(QObject* parent = nullptr);
  ~RunFolderLoader() override;  // stops the reading and waits for it

  // Lists the workspace's runs (and its linked folders), or the folders
  // given, and reads each one not in `known`; loads run one after another
  // in the order asked. onBatch gets the runs read so far in groups of up to
  // ~100 or every ~100 ms; onDone the number read and the links' problem.
  using Batch = std::vector<LoadedRunFolder>;
  void loadWorkspace(const Workspace& workspace, const QStringList& known,
                     std::function<void(Batch)> onBatch, std::function<void(int, QString)> onDone);
  void loadFolders(const Workspace& workspace, const QStringList& folders, bool linked,
                   std::function<void(Batch)> onBatch, std::function<void(int, QString)> onDone);
  void cancel();  // drops the loads asked for and stops the one running
  bool busy() const;

 private:
  // work(post, cancelled, problem) runs on the loader's thread.
  using Work = std::function<void(const std::function<void(Batch&&)>&, const std::atomic<bool>&, QString*)>;
  void start(Work work, std::function<void(Batch)> onBatch, std::function<void(int, QString)> onDone);
  struct Job {
    Work work;
    std::function<void(Batch)> onBatch;
    std::function<void(int, QString)> onDone;
  };
  void startNext();
  QThread* thread_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  std::vector<Job> waiting_;
};

}  // namespace plab::ui
