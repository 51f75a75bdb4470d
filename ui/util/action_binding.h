#pragma once
// A menu action that does what a button does follows the button: enabled
// exactly when it is (the window sets only its buttons, so the Run menu
// never offers Start while the Start button is greyed out), and, where
// asked, its text too ("&Pause" / "&Resume": the menu's mnemonic on the
// first letter unless the button's text has one).
class QAction;
class QAbstractButton;

namespace plab::ui {

enum class FollowText { No, Yes };

// Sets the action from the button now and whenever the button's enabled
// state (QEvent::EnabledChange, which also follows a disabled parent) or,
// with FollowText::Yes, its text changes. The binding ends with either.
void bindActionToButton(QAction* action, QAbstractButton* button, FollowText text = FollowText::No);

}  // namespace plab::ui
