#include "run/run_details.h"

#include "report/run_folder_reader.h"
#include "run/run_store.h"

namespace plab::ui {

RunDetails::RunDetails(RunStore* store, QObject* parent) : QObject(parent), store_(store) {}

RunDetails::~RunDetails() { tasks_.waitAll(); }

bool RunDetails::request(int run) {
  if (run < 0 || run >= store_->size()) return false;
  if (store_->isDetailed(run)) return true;
  const QString folder = store_->folder(run);
  if (folder.isEmpty() || pending_.contains(folder)) return false;
  pending_.insert(folder);
  tasks_.run<plab::RunRecord>(
      [folder] { return plab::readRunFolder(folder.toStdString()).record; },
      [this, folder](const plab::RunRecord& record) {
        pending_.remove(folder);
        const int at = store_->findFolder(folder);  // the list may have changed meanwhile
        if (at >= 0) store_->setDetail(at, record);
      },
      [this, folder](const QString& message) {
        pending_.remove(folder);
        emit failed(folder, message);
      });
  return false;
}

}  // namespace plab::ui
