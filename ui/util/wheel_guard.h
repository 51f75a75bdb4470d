#pragma once
// Desktop manners for value fields in scrolling panels: the mouse wheel over
// a spin box, combo box or slider that does not have the keyboard focus
// scrolls the panel around it instead of changing the value (a user
// scrolling the setup panel turned Sequence length 64 into 49). A field
// with the focus (clicked or tabbed into) still takes the wheel.
class QWidget;

namespace plab::ui {

// Guards every such field under root, now and those added later (the
// guard follows root's widget tree as children are polished): gives them
// Qt::StrongFocus, so that the wheel never focuses them, and hands their
// wheel events to the parent widget while they are not focused.
void guardWheel(QWidget* root);

// Whether the field is guarded (tests).
bool wheelGuarded(const QWidget* field);

}  // namespace plab::ui
