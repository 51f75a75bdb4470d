// Issue 35.5, desktop manners: the mouse wheel scrolls the setup panels
// unless a field has the focus (util/wheel_guard.h), and the menus' actions
// follow their buttons' enabled state and text (util/action_binding.h).
#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QVBoxLayout>
#include <QtTest/QtTest>
#include <QtTest/qtestspontaneevent.h>

#include "advisor/advisor_dialog.h"
#include "main_window.h"
#include "panels/advanced_panel.h"
#include "panels/dataset_panel.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "support/test_registry.h"
#include "ui/window_helpers.h"
#include "util/action_binding.h"
#include "util/wheel_guard.h"

namespace test_desktop_manners {

using namespace plab;
using namespace plab::ui;

namespace {

// One notch of the wheel (down) over the centre of `field`, delivered as the
// window system delivers it: spontaneous, to the widget under the pointer
// (a spin box's line edit), which may give focus by the wheel and propagates
// to the parents while nobody accepts it.
void wheelOver(QWidget* field) {
  const QPoint local = field->rect().center();
  QWidget* target = field->childAt(local);
  if (!target) target = field;
  const QPoint at = target->mapFrom(field, local);
  QWheelEvent wheel(at, target->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QSpontaneKeyEvent::setSpontaneous(&wheel);
  qApp->notify(target, &wheel);
}

QString valueOf(QWidget* field) {
  if (auto* s = qobject_cast<QSpinBox*>(field)) return QString::number(s->value());
  if (auto* d = qobject_cast<QDoubleSpinBox*>(field)) return QString::number(d->value());
  if (auto* c = qobject_cast<QComboBox*>(field)) return QString::number(c->currentIndex());
  if (auto* a = qobject_cast<QAbstractSlider*>(field)) return QString::number(a->value());
  return {};
}

QList<QWidget*> valueFields(QWidget* root) {
  QList<QWidget*> out;
  for (QWidget* w : root->findChildren<QWidget*>())
    if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractSlider*>(w)) out << w;
  return out;
}

QScrollArea* scrollAreaAround(QWidget* w) {
  for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QScrollArea*>(p)) return area;
  return nullptr;
}

}  // namespace

class TestDesktopManners : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // A page taller than its scroll area with one field of each kind at the
  // top: the wheel over an unfocused field scrolls the area and leaves the
  // value; once the field has the focus, the wheel changes the value.
  void wheelScrollsUnlessTheFieldHasFocus() {
    QScrollArea area;
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    auto* spin = new QSpinBox;
    spin->setRange(0, 1000);
    spin->setValue(64);
    auto* dspin = new QDoubleSpinBox;
    dspin->setRange(0, 10);
    dspin->setValue(1.0);
    auto* combo = new QComboBox;
    combo->addItems({"a", "b", "c"});
    combo->setCurrentIndex(1);
    auto* slider = new QSlider(Qt::Horizontal);
    slider->setRange(0, 100);
    slider->setValue(50);
    const QList<QWidget*> fields = {spin, dspin, combo, slider};
    for (QWidget* f : fields) layout->addWidget(f);
    layout->addSpacing(3000);
    area.setWidget(page);
    area.setWidgetResizable(true);
    area.resize(300, 200);
    guardWheel(page);
    area.show();
    QVERIFY(QTest::qWaitForWindowExposed(&area));
    area.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&area));
    QScrollBar* bar = area.verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    for (QWidget* field : fields) {
      const QByteArray name = field->metaObject()->className();
      QVERIFY2(wheelGuarded(field), name);
      QCOMPARE(field->focusPolicy(), Qt::StrongFocus);
      // Unfocused: the panel scrolls, the value stays.
      bar->setValue(0);
      area.setFocus();
      QVERIFY(!field->hasFocus());
      const QString before = valueOf(field);
      wheelOver(field);
      QVERIFY2(bar->value() > 0, name);
      QCOMPARE(valueOf(field), before);
      QVERIFY2(!field->hasFocus(), name);  // the wheel does not focus it either
      // Focused: the field takes the wheel, the panel stays put.
      bar->setValue(0);
      field->setFocus(Qt::TabFocusReason);
      QTRY_VERIFY2(field->hasFocus(), name);
      wheelOver(field);
      QVERIFY2(valueOf(field) != before, name);
      QCOMPARE(bar->value(), 0);
    }
    // A field built after the guard (a panel that adds rows) is guarded once shown.
    auto* late = new QSpinBox;
    layout->insertWidget(0, late);
    QTRY_VERIFY(wheelGuarded(late));
    QCOMPARE(late->focusPolicy(), Qt::StrongFocus);
  }

  // Every value field of the setup panels and of the advisor dialog is
  // guarded; the case: the wheel over Sequence length (64) and
  // Weight decay (0) scrolls the Optimizer tab instead of changing them.
  void setupPanelsAndAdvisorAreGuarded() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    w.resize(1280, 720);
    QVERIFY(plab::test::shownWithModel(w));
    w.optimizerPanel()->advancedPanel()->setExpanded(true);
    QList<QWidget*> roots = {w.modelPicker(), w.datasetPanel(), w.layerPanel(), w.optimizerPanel()};
    AdvisorDialog dialog(defaultRunConfig());
    roots << &dialog;
    int fields = 0;
    for (QWidget* root : roots)
      for (QWidget* field : valueFields(root)) {
        ++fields;
        QVERIFY2(wheelGuarded(field), qPrintable(root->objectName() + " " + field->objectName()));
        QCOMPARE(field->focusPolicy(), Qt::StrongFocus);
      }
    QVERIFY(fields >= 25);

    w.findChild<QTabWidget*>("setupTabs")->setCurrentIndex(2);  // Optimizer && training
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QScrollArea* area = scrollAreaAround(w.optimizerPanel());
    QVERIFY(area && area->verticalScrollBar()->maximum() > 0);
    for (const char* name : {"seqLen", "weightDecay"}) {
      auto* field = w.optimizerPanel()->findChild<QAbstractSpinBox*>(name);
      QVERIFY(field);
      area->ensureWidgetVisible(field);
      const int scrolled = area->verticalScrollBar()->value();
      QVERIFY(scrolled < area->verticalScrollBar()->maximum());
      w.startButton()->setFocus();
      const QString before = valueOf(field);
      wheelOver(field);
      QCOMPARE(valueOf(field), before);
      QVERIFY2(area->verticalScrollBar()->value() > scrolled, name);
    }
  }

  // Texts that do not fit the setup panel are elided with a tooltip: the
  // model's name in its combo box (24 characters wide).
  void modelComboNamesTheCurrentModel() {
    ModelPicker picker;
    picker.resize(300, 200);
    picker.show();
    QVERIFY(QTest::qWaitForWindowExposed(&picker));
    auto* combo = picker.findChild<QComboBox*>("modelCombo");
    QVERIFY(combo);
    QCOMPARE(combo->toolTip(), combo->currentText());
    ModelSpec spec;
    spec.source = "config";
    spec.path = "/models/a-model-name-far-longer-than-the-panel-is-wide/config.json";
    const QString label = "New from " + QString::fromStdString(spec.path) + " (random init)";
    picker.setModelSpec(spec, label);
    QCOMPARE(combo->currentText(), label);
    QVERIFY(combo->fontMetrics().horizontalAdvance(label) > combo->width());  // elided on screen
    QCOMPARE(combo->toolTip(), label);
    QTRY_VERIFY_WITH_TIMEOUT(!picker.isInspecting(), 30000);  // the missing file is refused, off the thread
  }

  void actionFollowsItsButton() {
    QWidget panel;
    auto* button = new QPushButton("Pause", &panel);
    QAction pause("&Pause / resume");
    QAction other("&Other");
    bindActionToButton(&pause, button, FollowText::Yes);
    bindActionToButton(&other, button);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(pause.isEnabled() && other.isEnabled());
    QTRY_COMPARE(pause.text(), QString("&Pause"));  // followed from the start, with a mnemonic
    QCOMPARE(other.text(), QString("&Other"));
    button->setEnabled(false);
    QVERIFY(!pause.isEnabled() && !other.isEnabled());
    button->setEnabled(true);
    QVERIFY(pause.isEnabled());
    panel.setEnabled(false);  // a greyed-out parent greys the button
    QVERIFY(!pause.isEnabled());
    panel.setEnabled(true);
    QVERIFY(pause.isEnabled());
    button->setText("Resume");
    QTRY_COMPARE(pause.text(), QString("&Resume"));
    QCOMPARE(other.text(), QString("&Other"));
    delete button;  // the binding goes with the button
    panel.setEnabled(false);
    QVERIFY(pause.isEnabled());
  }

  // The Run menu (and File > Export) offers exactly what the buttons offer:
  // idle, blocked by a setup problem, and while a run trains.
  void runMenuFollowsTheButtons() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::shownWithModel(w));
    const QList<QPair<const char*, QPushButton*>> pairs = {
        {"startAction", w.startButton()},     {"compareAction", w.compareButton()},
        {"compareFormatsAction", w.compareFormatsButton()}, {"suggestPlanAction", w.layerPanel()->suggestButton()},
        {"queueAction", w.queueButton()},     {"pauseAction", w.pauseButton()},
        {"stopAction", w.stopButton()},       {"exportAction", w.exportButton()}};
    const auto same = [&](const char* when) {
      for (const auto& [name, button] : pairs) {
        auto* action = w.findChild<QAction*>(name);
        if (!action) return QByteArray("no ") + name;
        if (action->isEnabled() != button->isEnabled())
          return QByteArray(when) + ": " + name + (action->isEnabled() ? " enabled" : " disabled") + ", its button not";
      }
      return QByteArray();
    };
    QCOMPARE(same("idle"), QByteArray());
    QVERIFY(w.findChild<QAction*>("startAction")->isEnabled());
    QVERIFY(!w.findChild<QAction*>("stopAction")->isEnabled());
    QVERIFY(!w.findChild<QAction*>("exportAction")->isEnabled());  // nothing to export yet

    w.datasetPanel()->setPath(QDir(workspace.path()).filePath("missing.txt"));
    QTRY_VERIFY(!w.startButton()->isEnabled());
    QCOMPARE(same("blocked"), QByteArray());
    QVERIFY(!w.findChild<QAction*>("startAction")->isEnabled());
    QVERIFY(!w.findChild<QAction*>("queueAction")->isEnabled());
    w.datasetPanel()->setPath(QString());
    QTRY_VERIFY(w.startButton()->isEnabled());
    QCOMPARE(same("unblocked"), QByteArray());

    // While a (long, small) run trains: Stop and Pause, not Start.
    RunConfig c = w.currentConfig();
    c.steps = 100000;
    c.batch_size = 2;
    c.seq_len = 16;
    c.eval_every = 0;
    c.eval_batches = 1;
    c.device = "cpu";
    w.optimizerPanel()->setFrom(c);
    w.findChild<QAction*>("startAction")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(w.stopButton()->isEnabled(), 30000);
    QCOMPARE(same("training"), QByteArray());
    QVERIFY(w.findChild<QAction*>("stopAction")->isEnabled());
    QVERIFY(!w.findChild<QAction*>("startAction")->isEnabled());
    QTRY_COMPARE(w.findChild<QAction*>("pauseAction")->text(), "&" + w.pauseButton()->text());
    w.findChild<QAction*>("stopAction")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->isBusy(), 60000);
    QTRY_VERIFY(w.startButton()->isEnabled());
    QCOMPARE(same("stopped"), QByteArray());
    QVERIFY(w.findChild<QAction*>("exportAction")->isEnabled());  // the stopped run can be exported
  }
};

PLAB_TEST_MAIN(TestDesktopManners)
}  // namespace test_desktop_manners
#include "test_desktop_manners.moc"
