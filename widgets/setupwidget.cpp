// SPDX-License-Identifier: Apache-2.0
#include "widgets/setupwidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QVBoxLayout>

namespace tb::widgets {

namespace {
void setRowLabel(QFormLayout* form, QWidget* field, const QString& text) {
    if (auto* l = qobject_cast<QLabel*>(form->labelForField(field))) l->setText(text);
}
}  // namespace

SetupWidget::SetupWidget(const QStringList& networks, std::function<QString(const QString&)> targetValidator,
                         QWidget* parent)
    : QWidget(parent), m_validateTarget(std::move(targetValidator)) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);

    m_netBox = new QGroupBox(this);
    m_netForm = new QFormLayout(m_netBox);
    m_network = new QComboBox(m_netBox);
    m_network->addItems(networks);
    m_netForm->addRow(QStringLiteral("-"), m_network);
    m_onnxRow = new QWidget(m_netBox);
    auto* onnxLayout = new QHBoxLayout(m_onnxRow);
    onnxLayout->setContentsMargins(0, 0, 0, 0);
    m_onnx = new QLineEdit(m_onnxRow);
    m_onnx->setClearButtonEnabled(true);
    m_browse = new QPushButton(m_onnxRow);
    onnxLayout->addWidget(m_onnx, 1);
    onnxLayout->addWidget(m_browse);
    m_netForm->addRow(QStringLiteral("-"), m_onnxRow);
    m_batch = new QSpinBox(m_netBox);
    m_batch->setRange(1, 256);
    m_netForm->addRow(QStringLiteral("-"), m_batch);
    m_layout = new QComboBox(m_netBox);
    m_layout->addItems({QStringLiteral("NHWC"), QStringLiteral("NCHW")});
    m_netForm->addRow(QStringLiteral("-"), m_layout);
    m_shapes = new QLineEdit(m_netBox);
    m_shapes->setPlaceholderText(QStringLiteral("x=1,3,640,640"));
    m_shapes->setEnabled(false);
    m_netForm->addRow(QStringLiteral("-"), m_shapes);
    m_winograd = new QCheckBox(m_netBox);
    m_winograd->setChecked(true);
    m_netForm->addRow(QString(), m_winograd);
    outer->addWidget(m_netBox);

    m_tgtBox = new QGroupBox(this);
    m_tgtForm = new QFormLayout(m_tgtBox);
    m_target = new QComboBox(m_tgtBox);
    m_target->setEditable(true);
    m_target->setInsertPolicy(QComboBox::NoInsert);
    m_target->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_target->setMinimumContentsLength(16);
    m_target->addItem(QStringLiteral("-"), QString());  // "Host CPU", set by retranslate()
    m_target->addItem(QStringLiteral("llvm -mcpu=znver4"), QStringLiteral("llvm -mcpu=znver4"));
    m_target->addItem(QStringLiteral("llvm -mcpu=core-avx2"), QStringLiteral("llvm -mcpu=core-avx2"));
    m_target->addItem(QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"),
                      QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));
    m_tgtForm->addRow(QStringLiteral("-"), m_target);
    m_targetError = new QLabel(m_tgtBox);
    m_targetError->setObjectName(QStringLiteral("TargetError"));
    m_targetError->setStyleSheet(QStringLiteral("color: #c0392b"));
    m_targetError->setWordWrap(true);
    m_targetError->hide();
    m_tgtForm->addRow(QString(), m_targetError);
    outer->addWidget(m_tgtBox);

    m_searchBox = new QGroupBox(this);
    m_searchForm = new QFormLayout(m_searchBox);
    m_trials = new QSpinBox(m_searchBox);
    m_trials->setRange(0, 10000000);
    m_searchForm->addRow(QStringLiteral("-"), m_trials);
    m_perRound = new QSpinBox(m_searchBox);
    m_perRound->setRange(1, 4096);
    m_perRound->setValue(64);
    m_searchForm->addRow(QStringLiteral("-"), m_perRound);
    m_earlyStopping = new QSpinBox(m_searchBox);
    m_earlyStopping->setRange(-1, 10000000);
    m_earlyStopping->setValue(-1);
    m_searchForm->addRow(QStringLiteral("-"), m_earlyStopping);
    m_strategy = new QComboBox(m_searchBox);
    m_strategy->addItem(QStringLiteral("-"), QStringLiteral("gradient"));
    m_strategy->addItem(QStringLiteral("-"), QStringLiteral("round-robin"));
    m_searchForm->addRow(QStringLiteral("-"), m_strategy);
    m_costModel = new QComboBox(m_searchBox);
    m_costModel->addItem(QStringLiteral("-"), QStringLiteral("xgb"));
    m_costModel->addItem(QStringLiteral("-"), QStringLiteral("random"));
    m_searchForm->addRow(QStringLiteral("-"), m_costModel);
    m_seed = new QSpinBox(m_searchBox);
    m_seed->setRange(0, 1 << 30);
    m_searchForm->addRow(QStringLiteral("-"), m_seed);
    m_taskIds = new QLineEdit(m_searchBox);
    m_taskIds->setValidator(new QRegularExpressionValidator(QRegularExpression(QStringLiteral("[0-9, ]*")), m_taskIds));
    m_searchForm->addRow(QStringLiteral("-"), m_taskIds);
    m_defaultSeed = new QCheckBox(m_searchBox);
    m_defaultSeed->setChecked(true);
    m_searchForm->addRow(QString(), m_defaultSeed);
    outer->addWidget(m_searchBox);

    m_runBox = new QGroupBox(this);
    m_runForm = new QFormLayout(m_runBox);
    m_runner = new QComboBox(m_runBox);
    m_runner->addItem(QStringLiteral("-"), QStringLiteral("local"));
    m_runner->addItem(QStringLiteral("-"), QStringLiteral("rpc"));
    m_runForm->addRow(QStringLiteral("-"), m_runner);
    m_tracker = new QLineEdit(QStringLiteral("127.0.0.1:9190"), m_runBox);
    m_runForm->addRow(QStringLiteral("-"), m_tracker);
    m_key = new QLineEdit(m_runBox);
    m_key->setPlaceholderText(QStringLiteral("rasp4b-64"));
    m_runForm->addRow(QStringLiteral("-"), m_key);
    m_number = new QSpinBox(m_runBox);
    m_number->setRange(1, 1000000);
    m_number->setValue(3);
    m_runForm->addRow(QStringLiteral("-"), m_number);
    m_repeat = new QSpinBox(m_runBox);
    m_repeat->setRange(1, 10000);
    m_runForm->addRow(QStringLiteral("-"), m_repeat);
    m_minRepeatMs = new QSpinBox(m_runBox);
    m_minRepeatMs->setRange(0, 1000000);
    m_minRepeatMs->setValue(100);
    m_runForm->addRow(QStringLiteral("-"), m_minRepeatMs);
    m_timeout = new QDoubleSpinBox(m_runBox);
    m_timeout->setRange(0.1, 86400);
    m_timeout->setDecimals(1);
    m_timeout->setValue(10);
    m_runForm->addRow(QStringLiteral("-"), m_timeout);
    m_cacheFlush = new QCheckBox(m_runBox);
    m_runForm->addRow(QString(), m_cacheFlush);
    outer->addWidget(m_runBox);

    m_logBox = new QGroupBox(this);
    m_logForm = new QFormLayout(m_logBox);
    m_log = new QLineEdit(QStringLiteral("tunebench.json"), m_logBox);
    m_logForm->addRow(QStringLiteral("-"), m_log);
    m_resume = new QCheckBox(m_logBox);
    m_logForm->addRow(QString(), m_resume);
    m_latencyLog = new QLineEdit(m_logBox);
    m_latencyLog->setClearButtonEnabled(true);
    m_logForm->addRow(QStringLiteral("-"), m_latencyLog);
    outer->addWidget(m_logBox);
    outer->addStretch(1);

    connect(m_browse, &QPushButton::clicked, this, [this] {
        QString f = QFileDialog::getOpenFileName(this, tr("Open ONNX model"), QString(), tr("ONNX models (*.onnx)"));
        if (!f.isEmpty()) m_onnx->setText(f);
    });
    connect(m_onnx, &QLineEdit::textChanged, this, [this](const QString& t) {
        // Input shapes bind ONNX inputs; zoo networks have fixed ones.
        m_network->setEnabled(t.trimmed().isEmpty());
        m_shapes->setEnabled(!t.trimmed().isEmpty());
    });
    connect(m_target, &QComboBox::currentTextChanged, this, [this] { revalidate(); });
    connect(m_runner, &QComboBox::currentIndexChanged, this, [this] {
        bool rpc = m_runner->currentData().toString() == QLatin1String("rpc");
        m_tracker->setEnabled(rpc);
        m_key->setEnabled(rpc);
        revalidate();
    });
    connect(m_key, &QLineEdit::textChanged, this, [this] { revalidate(); });
    connect(m_tracker, &QLineEdit::textChanged, this, [this] { revalidate(); });
    connect(m_log, &QLineEdit::textChanged, this, [this] { updateResumeOffer(); });
    m_tracker->setEnabled(false);
    m_key->setEnabled(false);
    retranslate();
    updateResumeOffer();
    revalidate();
}

void SetupWidget::retranslate() {
    m_netBox->setTitle(tr("Network"));
    setRowLabel(m_netForm, m_network, tr("Zoo network"));
    setRowLabel(m_netForm, m_onnxRow, tr("ONNX file"));
    setRowLabel(m_netForm, m_batch, tr("Batch"));
    setRowLabel(m_netForm, m_layout, tr("Layout"));
    setRowLabel(m_netForm, m_shapes, tr("Input shapes"));
    m_shapes->setToolTip(tr("Shapes of the ONNX model's dynamic inputs, NAME=DIMS separated by semicolons"));
    m_winograd->setText(tr("Rewrite 3×3 convolutions to winograd (as TVM)"));
    m_winograd->setToolTip(tr("Off keeps NHWC 3×3 convolutions direct: the tasks then differ from TVM's"));
    m_onnx->setPlaceholderText(tr("(none: use the zoo network)"));
    m_browse->setText(tr("Open ONNX…"));
    m_tgtBox->setTitle(tr("Target"));
    setRowLabel(m_tgtForm, m_target, tr("Target"));
    // Item 0 is the host: keep it selected across a language change when it was.
    const bool host = isHostTarget();
    m_target->setItemText(0, tr("Host CPU"));
    if (host) m_target->setEditText(m_target->itemText(0));
    m_target->setToolTip(tr("A TVM target string, e.g. llvm -mcpu=znver4 or llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));
    m_searchBox->setTitle(tr("Search"));
    setRowLabel(m_searchForm, m_trials, tr("Trials"));
    m_trials->setSpecialValueText(tr("64 × tasks"));
    setRowLabel(m_searchForm, m_perRound, tr("Measures per round"));
    setRowLabel(m_searchForm, m_earlyStopping, tr("Early stopping"));
    m_earlyStopping->setSpecialValueText(tr("off"));
    setRowLabel(m_searchForm, m_strategy, tr("Strategy"));
    m_strategy->setItemText(0, tr("gradient"));
    m_strategy->setItemText(1, tr("round-robin"));
    setRowLabel(m_searchForm, m_costModel, tr("Cost model"));
    m_costModel->setItemText(0, tr("XGBoost"));
    m_costModel->setItemText(1, tr("random"));
    setRowLabel(m_searchForm, m_seed, tr("Seed"));
    setRowLabel(m_searchForm, m_taskIds, tr("Tasks"));
    m_taskIds->setPlaceholderText(tr("all"));
    m_taskIds->setToolTip(tr("Tune only these task IDs of the extraction order, e.g. 2,5"));
    m_defaultSeed->setText(tr("Measure each task's default schedule first"));
    m_defaultSeed->setToolTip(tr("Off is pure Ansor: the search starts from random schedules only"));
    m_runBox->setTitle(tr("Runner"));
    setRowLabel(m_runForm, m_runner, tr("Runner"));
    m_runner->setItemText(0, tr("local (sandboxed)"));
    m_runner->setItemText(1, tr("RPC through a tracker"));
    setRowLabel(m_runForm, m_tracker, tr("Tracker"));
    setRowLabel(m_runForm, m_key, tr("Device key"));
    setRowLabel(m_runForm, m_number, tr("Number"));
    m_number->setToolTip(tr("Runs per measurement (TVM number), raised until one measurement lasts min_repeat_ms"));
    setRowLabel(m_runForm, m_repeat, tr("Repeat"));
    m_repeat->setToolTip(tr("Measurements per candidate (TVM repeat)"));
    setRowLabel(m_runForm, m_minRepeatMs, tr("Min. repeat time"));
    m_minRepeatMs->setSuffix(tr(" ms"));
    setRowLabel(m_runForm, m_timeout, tr("Timeout"));
    m_timeout->setSuffix(tr(" s"));
    m_timeout->setToolTip(tr("Per candidate: loading, checking and timing it"));
    m_cacheFlush->setText(tr("Flush CPU caches before each repeat"));
    m_cacheFlush->setToolTip(tr("TVM enable_cpu_cache_flush: time kernels with cold caches, as in a whole network"));
    m_logBox->setTitle(tr("Log"));
    setRowLabel(m_logForm, m_log, tr("Log file"));
    m_resume->setText(tr("Resume from the existing log"));
    setRowLabel(m_logForm, m_latencyLog, tr("Latency log (TSV)"));
    m_latencyLog->setPlaceholderText(tr("(none)"));
    m_latencyLog->setToolTip(tr("Estimated total latency after each round, as TVM's total_latency.tsv"));
    revalidate();
}

void SetupWidget::changeEvent(QEvent* e) {
    if (e->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(e);
}

bool SetupWidget::isHostTarget() const {
    const QString t = m_target->currentText().trimmed();
    return t.isEmpty() || t == m_target->itemText(0);
}

session::TuningJob SetupWidget::job() const {
    session::TuningJob j = m_hidden;  // keeps what this panel does not show
    j.network = m_network->currentText();
    j.onnxPath = m_onnx->text().trimmed();
    j.shapes.clear();
    for (const QString& s : m_shapes->text().split(QLatin1Char(';'), Qt::SkipEmptyParts))
        if (!s.trimmed().isEmpty()) j.shapes.append(s.trimmed());
    j.batch = m_batch->value();
    j.layout = m_layout->currentText();
    j.winograd = m_winograd->isChecked();
    j.target = isHostTarget() ? QString() : m_target->currentText().trimmed();
    j.trials = m_trials->value();
    j.perRound = m_perRound->value();
    j.earlyStopping = m_earlyStopping->value();
    j.strategy = m_strategy->currentData().toString();
    j.costModel = m_costModel->currentData().toString();
    j.seed = quint64(m_seed->value());
    j.taskIds.clear();
    for (const QString& id : m_taskIds->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!id.trimmed().isEmpty()) j.taskIds.append(id.trimmed().toInt());
    j.seedDefaultSchedule = m_defaultSeed->isChecked();
    j.runner = m_runner->currentData().toString();
    const QStringList hp = m_tracker->text().trimmed().split(QLatin1Char(':'));
    j.trackerHost = hp.value(0);
    j.trackerPort = hp.value(1).toInt();
    j.deviceKey = m_key->text().trimmed();
    j.number = m_number->value();
    j.repeat = m_repeat->value();
    j.minRepeatMs = m_minRepeatMs->value();
    j.timeoutS = m_timeout->value();
    j.cacheFlush = m_cacheFlush->isChecked();
    j.logPath = m_log->text().trimmed();
    j.resume = m_resume->isEnabled() && m_resume->isChecked();
    j.latencyLogPath = m_latencyLog->text().trimmed();
    return j;
}

void SetupWidget::setJob(const session::TuningJob& j) {
    m_hidden = j;
    int i = m_network->findText(j.network);
    if (i >= 0) m_network->setCurrentIndex(i);
    m_onnx->setText(j.onnxPath);
    m_shapes->setText(j.shapes.join(QStringLiteral("; ")));
    m_batch->setValue(j.batch);
    m_layout->setCurrentText(j.layout);
    m_winograd->setChecked(j.winograd);
    if (j.target.isEmpty())
        m_target->setCurrentIndex(0);
    else
        m_target->setEditText(j.target);
    m_trials->setValue(j.trials);
    m_perRound->setValue(j.perRound);
    m_earlyStopping->setValue(j.earlyStopping);
    m_strategy->setCurrentIndex(j.strategy == QLatin1String("round-robin") ? 1 : 0);
    m_costModel->setCurrentIndex(j.costModel == QLatin1String("random") ? 1 : 0);
    m_seed->setValue(int(j.seed));
    QStringList ids;
    for (int id : j.taskIds) ids.append(QString::number(id));
    m_taskIds->setText(ids.join(QLatin1Char(',')));
    m_defaultSeed->setChecked(j.seedDefaultSchedule);
    m_runner->setCurrentIndex(j.runner == QLatin1String("rpc") ? 1 : 0);
    m_tracker->setText(QStringLiteral("%1:%2").arg(j.trackerHost).arg(j.trackerPort));
    m_key->setText(j.deviceKey);
    m_number->setValue(j.number);
    m_repeat->setValue(j.repeat);
    m_minRepeatMs->setValue(j.minRepeatMs);
    m_timeout->setValue(j.timeoutS);
    m_cacheFlush->setChecked(j.cacheFlush);
    m_log->setText(j.logPath);
    m_resume->setChecked(j.resume && m_resume->isEnabled());
    m_latencyLog->setText(j.latencyLogPath);
    revalidate();
}

void SetupWidget::setTargetText(const QString& text) { m_target->setEditText(text); }

bool SetupWidget::isValid() const { return m_valid; }
QString SetupWidget::targetError() const { return m_targetError->text(); }

void SetupWidget::revalidate() {
    QString err;
    if (!isHostTarget() && m_validateTarget) err = m_validateTarget(m_target->currentText().trimmed());
    m_targetError->setText(err);
    m_targetError->setVisible(!err.isEmpty());
    bool ok = err.isEmpty() && !m_log->text().trimmed().isEmpty();
    if (m_runner->currentData().toString() == QLatin1String("rpc")) {
        const QStringList hp = m_tracker->text().trimmed().split(QLatin1Char(':'));
        ok = ok && hp.size() == 2 && hp[1].toInt() > 0 && !m_key->text().trimmed().isEmpty();
    }
    if (ok != m_valid) {
        m_valid = ok;
        Q_EMIT validityChanged(ok);
    }
}

void SetupWidget::updateResumeOffer() {
    const bool exists = QFileInfo::exists(m_log->text().trimmed());
    m_resume->setEnabled(exists);
    m_resume->setChecked(exists);
    revalidate();
}

}  // namespace tb::widgets
