#include "run/metatypes.h"

namespace plab::ui {

void registerMetaTypes() {
  static const bool once = [] {
    qRegisterMetaType<plab::RunConfig>("plab::RunConfig");
    qRegisterMetaType<plab::RunInfo>("plab::RunInfo");
    qRegisterMetaType<plab::StepMetrics>("plab::StepMetrics");
    qRegisterMetaType<plab::RunResult>("plab::RunResult");
    qRegisterMetaType<plab::ModelOverview>("plab::ModelOverview");
    return true;
  }();
  (void)once;
}

}  // namespace plab::ui
