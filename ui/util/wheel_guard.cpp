#include "util/wheel_guard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QPointer>
#include <QWidget>

namespace plab::ui {
namespace {

constexpr const char* kGuardedProperty = "plabWheelGuarded";

bool isValueField(const QWidget* w) {
  return qobject_cast<const QAbstractSpinBox*>(w) || qobject_cast<const QComboBox*>(w) ||
         qobject_cast<const QAbstractSlider*>(w);
}

// One filter for the whole application (it holds no state: the widgets
// carry a property saying whether they are guarded), owned by it.
class WheelGuard : public QObject {
 public:
  using QObject::QObject;
  static WheelGuard* instance() {
    static QPointer<WheelGuard> guard;
    if (!guard) guard = new WheelGuard(qApp);
    return guard;
  }

  void watch(QWidget* root) {
    // Containers: to hear of children polished later (ChildPolished comes
    // once a child is fully built, unlike ChildAdded). Fields: their wheel.
    if (!root->property(kGuardedProperty).isValid()) {
      root->setProperty(kGuardedProperty, isValueField(root));
      root->installEventFilter(this);
      if (isValueField(root)) root->setFocusPolicy(Qt::StrongFocus);
    }
    for (QWidget* child : root->findChildren<QWidget*>(Qt::FindDirectChildrenOnly)) watch(child);
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::ChildPolished) {
      if (auto* child = qobject_cast<QWidget*>(static_cast<QChildEvent*>(event)->child())) watch(child);
    } else if (event->type() == QEvent::Wheel) {
      auto* field = qobject_cast<QWidget*>(watched);
      if (field && field->property(kGuardedProperty).toBool() && !field->hasFocus()) {
        // Ignored and filtered: QApplication hands it on to the parent
        // (the scroll area's viewport), the field never sees it.
        event->ignore();
        return true;
      }
    }
    return QObject::eventFilter(watched, event);
  }
};

}  // namespace

void guardWheel(QWidget* root) {
  if (root) WheelGuard::instance()->watch(root);
}

bool wheelGuarded(const QWidget* field) { return field && field->property(kGuardedProperty).toBool(); }

}  // namespace plab::ui
