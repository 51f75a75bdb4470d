// Start is disabled, with the CLI's own message shown, while the setup could
// not run: an emptied learning rate or epsilon, a JSONL file without the
// text field, a model folder without weights. Each is reported as soon as it
// is edited or picked, and clears when fixed.
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "main_window.h"
#include "window_waits.h"
#include "panels/dataset_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "support/test_registry.h"
#include "train/torch_runtime.h"
#include "util/resources.h"

namespace test_setup_validation {

using namespace plab::ui;

namespace {

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

bool startBlockedWith(MainWindow& w, const QString& message) {
  return !w.startButton()->isEnabled() && !w.compareButton()->isEnabled() && !w.queueButton()->isEnabled() &&
         !w.startBlockedLabel()->isHidden() && w.startBlockedLabel()->text().contains(message);
}

bool startAllowed(MainWindow& w) { return w.startButton()->isEnabled() && w.startBlockedLabel()->isHidden(); }

}  // namespace

class TestSetupValidation : public QObject {
  Q_OBJECT
 private slots:
  void emptiedLearningRateBlocksStartWithTheCliMessage() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QVERIFY(startAllowed(w));
    auto* lr = w.optimizerPanel()->findChild<QLineEdit*>("learningRate");
    QVERIFY(lr);
    lr->clear();  // used to become lr = 0 and train flat
    // Exactly what `precision-lab-cli run` prints for lr 0.
    QVERIFY2(startBlockedWith(w, "run config: 'adamw.lr' must be > 0"), qPrintable(w.startBlockedLabel()->text()));
    QCOMPARE(w.startProblem(), runConfigProblemForLr(0.0));
    w.startRun();  // a programmatic start refuses too
    QCOMPARE(w.store()->size(), 0);
    lr->setText("1e-4");
    QVERIFY(startAllowed(w));

    auto* eps = w.optimizerPanel()->findChild<QLineEdit*>("epsilon");
    QVERIFY(eps);
    eps->clear();
    QVERIFY2(startBlockedWith(w, "eps"), qPrintable(w.startBlockedLabel()->text()));
    eps->setText("1e-8");
    QVERIFY(startAllowed(w));
  }

  // A device this process cannot use blocks Start up front (it was accepted
  // and the run failed after Start).
  void unusableDeviceBlocksStart() {
    if (plab::deviceProblem("cuda").empty()) QSKIP("this machine has CUDA");
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QVERIFY(startAllowed(w));
    auto* device = w.optimizerPanel()->findChild<QComboBox*>("device");
    QVERIFY(device);
    device->setCurrentText("cuda");
    QVERIFY2(startBlockedWith(w, "CUDA is not available"), qPrintable(w.startBlockedLabel()->text()));
    w.startRun();
    QCOMPARE(w.store()->size(), 0);
    device->setCurrentText("auto");
    QVERIFY(startAllowed(w));
  }

  void jsonlWithoutTheTextFieldIsReportedWhenPicked() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QTemporaryDir dir;
    const QString file = dir.filePath("data.jsonl");
    writeFile(file, "{\"body\": \"one document\"}\n{\"body\": \"another\"}\n");
    w.datasetPanel()->setPath(file);
    QVERIFY2(startBlockedWith(w, "data.jsonl:1: no string field 'text'"), qPrintable(w.startBlockedLabel()->text()));
    QCOMPARE(w.datasetPanel()->problem().isEmpty(), false);

    auto* field = w.datasetPanel()->findChild<QLineEdit*>("textField");
    QVERIFY(field);
    field->setText("body");
    emit field->editingFinished();
    QVERIFY(w.datasetPanel()->problem().isEmpty());
    QVERIFY(startAllowed(w));

    w.datasetPanel()->setPath(dir.filePath("missing.txt"));
    QVERIFY2(startBlockedWith(w, "cannot read data file"), qPrintable(w.startBlockedLabel()->text()));
  }

  void modelFolderWithoutWeightsIsReportedWhenPicked() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QTemporaryDir dir;
    const std::string_view config = plab::embeddedResource("models/tiny-gpt2/config.json");
    writeFile(dir.filePath("config.json"), QByteArray(config.data(), static_cast<qsizetype>(config.size())));

    plab::ModelSpec spec;
    spec.source = "folder";
    spec.path = dir.path().toStdString();
    w.modelPicker()->setModelSpec(spec);
    QTRY_VERIFY_WITH_TIMEOUT(!w.modelPicker()->isInspecting(), 60000);
    QVERIFY2(startBlockedWith(w, "has no weights"), qPrintable(w.startBlockedLabel()->text()));

    w.modelPicker()->combo()->setCurrentIndex(0);  // the embedded model again
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QVERIFY(startAllowed(w));
  }

 private:
  static QString runConfigProblemForLr(double lr) {
    plab::RunConfig c;
    c.adamw.lr = lr;
    try {
      (void)plab::RunConfig::fromJson(c.toJson());
    } catch (const std::exception& e) {
      return QString::fromUtf8(e.what());
    }
    return {};
  }
};

PLAB_TEST_MAIN(TestSetupValidation)
}  // namespace test_setup_validation
#include "test_setup_validation.moc"
