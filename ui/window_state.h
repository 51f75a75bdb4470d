#pragma once
// Remembers the window between sessions (issue 11): size and position, the
// splitters, the setup tab, the last model picked and the workspace folder
// (which the app passes to the next MainWindow). Only the app calls
// these (tests construct windows without touching the user's settings).
class QSettings;

namespace plab::ui {

class MainWindow;

void saveWindowState(const MainWindow& window, QSettings& settings);
// Missing or unreadable keys leave the defaults; a remembered model that no
// longer loads shows its error in the picker, like any other pick.
void restoreWindowState(MainWindow& window, const QSettings& settings);

}  // namespace plab::ui
