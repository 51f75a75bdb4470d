#include "run/run_folder_writes.h"

#include <algorithm>

namespace plab::ui {

bool RunFolderWrites::Ticket::write(const std::function<void()>& write) {
  if (beforeWrite_) beforeWrite_(folder_);
  const std::lock_guard<std::mutex> lock(mutex_);
  if (cancelled_) return false;
  write();
  return true;
}

bool RunFolderWrites::Ticket::cancelled() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

std::shared_ptr<RunFolderWrites::Ticket> RunFolderWrites::schedule(const QString& folder) {
  tickets_.erase(std::remove_if(tickets_.begin(), tickets_.end(), [](const auto& t) { return t.expired(); }),
                 tickets_.end());
  auto ticket = std::make_shared<Ticket>(folder);
  ticket->beforeWrite_ = beforeWrite_;
  tickets_.push_back(ticket);
  return ticket;
}

void RunFolderWrites::cancel(const QString& folder) {
  for (const std::weak_ptr<Ticket>& weak : tickets_)
    if (const std::shared_ptr<Ticket> ticket = weak.lock(); ticket && ticket->folder_ == folder) {
      const std::lock_guard<std::mutex> lock(ticket->mutex_);  // waits for a write under way
      ticket->cancelled_ = true;
    }
}

}  // namespace plab::ui
