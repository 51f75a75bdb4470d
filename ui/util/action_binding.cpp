#include "util/action_binding.h"

#include <QAbstractButton>
#include <QAction>
#include <QEvent>
#include <QPointer>

namespace plab::ui {
namespace {

// Lives as the button's child: it goes with the button; a deleted action
// leaves it idle.
class ButtonFollower : public QObject {
 public:
  ButtonFollower(QAction* action, QAbstractButton* button, FollowText text)
      : QObject(button), action_(action), button_(button), text_(text) {
    button->installEventFilter(this);
    sync();
  }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    // setText sends the button no event of its own, but repaints it: the
    // text is compared when it is painted or shown (a hidden window's menu
    // cannot be opened).
    const QEvent::Type type = event->type();
    if (watched == button_ &&
        (type == QEvent::EnabledChange || (text_ == FollowText::Yes && (type == QEvent::Paint || type == QEvent::Show))))
      sync();
    return QObject::eventFilter(watched, event);
  }

 private:
  void sync() {
    if (!action_ || !button_) return;
    // isEnabled(): the button's own state and its parents' (a greyed-out
    // panel greys its buttons).
    action_->setEnabled(button_->isEnabled());
    if (text_ != FollowText::Yes) return;
    QString text = button_->text();
    if (!text.contains('&')) text.prepend('&');  // a menu mnemonic: "&Pause", "&Resume"
    if (action_->text() != text) action_->setText(text);
  }

  QPointer<QAction> action_;
  QPointer<QAbstractButton> button_;
  FollowText text_;
};

}  // namespace

void bindActionToButton(QAction* action, QAbstractButton* button, FollowText text) {
  if (action && button) new ButtonFollower(action, button, text);
}

}  // namespace plab::ui
