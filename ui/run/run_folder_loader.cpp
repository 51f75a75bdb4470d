#include "run/run_folder_loader.h"

#include <QDir>
#include <QElapsedTimer>
#include <QPointer>
#include <QSet>

#include "report/run_index.h"

namespace plab::ui {
namespace {

constexpr size_t kBatchRuns = 100;
constexpr qint64 kBatchMilliseconds = 100;

LoadedRunFolder readOne(const Workspace& workspace, const QString& folder, bool linked) {
  LoadedRunFolder out;
  out.folder = folder;
  out.linked = linked || !workspace.owns(folder);
  try {
    // Index only what the workspace owns: nothing is written into an opened folder.
    plab::report::ListedRun listed = plab::report::readRunForListing(folder.toStdString(), !out.linked);
    out.run = std::move(listed.run);
    out.read = true;
  } catch (const std::exception& e) {
    QString reason = QString::fromUtf8(e.what());
    if (reason.startsWith(folder + "/")) reason.remove(0, folder.size() + 1);
    out.problem = reason;
  }
  return out;
}

void readAll(const Workspace& workspace, const QStringList& folders, bool linked, const QSet<QString>& known,
             const std::atomic<bool>& cancelled, const std::function<void(RunFolderLoader::Batch&&)>& post) {
  RunFolderLoader::Batch batch;
  QElapsedTimer sinceBatch;
  sinceBatch.start();
  for (const QString& folder : folders) {
    if (cancelled) return;
    if (known.contains(folder)) continue;
    batch.push_back(readOne(workspace, folder, linked));
    if (batch.size() >= kBatchRuns || sinceBatch.elapsed() >= kBatchMilliseconds) {
      post(std::move(batch));
      batch.clear();
      sinceBatch.restart();
    }
  }
  if (!batch.empty()) post(std::move(batch));
}

}  // namespace

RunFolderLoader::RunFolderLoader(QObject* parent) : QObject(parent) {}

RunFolderLoader::~RunFolderLoader() { cancel(); }

void RunFolderLoader::cancel() {
  waiting_.clear();
  if (cancelled_) *cancelled_ = true;
  if (thread_) {
    thread_->wait();
    delete thread_;
    thread_ = nullptr;
  }
}

bool RunFolderLoader::busy() const { return thread_ || !waiting_.empty(); }

void RunFolderLoader::start(Work work, std::function<void(Batch)> onBatch, std::function<void(int, QString)> onDone) {
  waiting_.push_back({std::move(work), std::move(onBatch), std::move(onDone)});
  if (!thread_) startNext();
}

void RunFolderLoader::startNext() {
  if (waiting_.empty()) return;
  Job job = std::move(waiting_.front());
  waiting_.erase(waiting_.begin());
  auto work = std::move(job.work);
  auto onBatch = std::move(job.onBatch);
  std::function<void(int, QString)> finished = [this, onDone = std::move(job.onDone)](int total, QString problem) {
    if (thread_) {
      thread_->wait();
      delete thread_;
      thread_ = nullptr;
    }
    onDone(total, problem);
    startNext();
  };
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  cancelled_ = cancelled;
  QPointer<RunFolderLoader> self(this);
  thread_ = QThread::create([self, cancelled, work = std::move(work), onBatch = std::move(onBatch),
                             onDone = std::move(finished)] {
    int total = 0;
    QString problem;
    // Each batch is handed over on the owner's thread; a cancelled load's
    // batches are dropped there.
    const auto post = [&](Batch&& batch) {
      total += static_cast<int>(batch.size());
      auto shared = std::make_shared<Batch>(std::move(batch));
      QMetaObject::invokeMethod(
          self.data(), [onBatch, shared, cancelled] {
            if (!*cancelled) onBatch(std::move(*shared));
          },
          Qt::QueuedConnection);
    };
    work(post, *cancelled, &problem);
    QMetaObject::invokeMethod(
        self.data(), [onDone, cancelled, total, problem] {
          if (!*cancelled) onDone(total, problem);
        },
        Qt::QueuedConnection);
  });
  thread_->setObjectName("run folder loader");
  thread_->start(QThread::LowPriority);
}

void RunFolderLoader::loadWorkspace(const Workspace& workspace, const QStringList& known,
                                    std::function<void(Batch)> onBatch, std::function<void(int, QString)> onDone) {
  const QSet<QString> knownSet(known.begin(), known.end());
  start(
      [workspace, knownSet](const std::function<void(Batch&&)>& post, const std::atomic<bool>& cancelled,
                            QString* problem) {
        const QStringList folders = workspace.runFolders(problem);
        readAll(workspace, folders, false, knownSet, cancelled, post);
      },
      std::move(onBatch), std::move(onDone));
}

void RunFolderLoader::loadFolders(const Workspace& workspace, const QStringList& folders, bool linked,
                                  std::function<void(Batch)> onBatch, std::function<void(int, QString)> onDone) {
  start(
      [workspace, folders, linked](const std::function<void(Batch&&)>& post, const std::atomic<bool>& cancelled,
                                   QString*) { readAll(workspace, folders, linked, {}, cancelled, post); },
      std::move(onBatch), std::move(onDone));
}

}  // namespace plab::ui
