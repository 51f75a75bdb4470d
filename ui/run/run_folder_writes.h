#pragma once
// Background writes into run folders (a finished run's index.json, the
// display.json of a group ticked) and Delete agree: a write is scheduled on
// the GUI thread as a ticket for its folder, and Delete cancels the
// folder's tickets before it moves or removes the folder. A cancelled
// ticket writes nothing, and a write already under way is waited for (one
// file, written atomically), so no file lands in a folder being removed
// (rmdir's "Directory not empty"), none is written into the trash after the
// folder went there, and no error is logged for a write that was given up.
#include <QString>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace plab::ui {

class RunFolderWrites {
 public:
  class Ticket {
   public:
    explicit Ticket(QString folder) : folder_(std::move(folder)) {}
    const QString& folder() const { return folder_; }
    // Any thread: runs write() unless the ticket was cancelled, holding the
    // ticket while it runs; returns whether it ran.
    bool write(const std::function<void()>& write);
    bool cancelled() const;

   private:
    friend class RunFolderWrites;
    QString folder_;
    mutable std::mutex mutex_;
    bool cancelled_ = false;
    std::function<void(const QString&)> beforeWrite_;
  };

  // GUI thread: a ticket for one write into folder.
  std::shared_ptr<Ticket> schedule(const QString& folder);
  // GUI thread, before removing folder: its tickets write nothing from now
  // on; returns once a write under way has finished.
  void cancel(const QString& folder);

  // Tests: called on the writing thread before a ticket's write takes the
  // ticket (to hold a write at the point where Delete could overtake it).
  void setBeforeWriteForTests(std::function<void(const QString&)> hook) { beforeWrite_ = std::move(hook); }

 private:
  std::vector<std::weak_ptr<Ticket>> tickets_;
  std::function<void(const QString&)> beforeWrite_;
};

}  // namespace plab::ui
