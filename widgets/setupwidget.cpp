// SPDX-License-Identifier: Apache-2.0
#include "widgets/setupwidget.h"

#include <QAbstractItemView>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

#include <algorithm>

#include "app/session/tuningsession.h"

namespace tb::widgets {

namespace {
constexpr int kHostRole = Qt::UserRole + 1;  // a target preset's host target

void setRowLabel(QFormLayout* form, QWidget* field, const QString& text) {
    if (auto* l = qobject_cast<QLabel*>(form->labelForField(field))) l->setText(text);
}

// A hidden, word-wrapped label for a field's inline message.
QLabel* messageLabel(QWidget* parent, const QString& objectName, const QString& color = QString()) {
    auto* l = new QLabel(parent);
    l->setObjectName(objectName);
    if (!color.isEmpty()) l->setStyleSheet(QStringLiteral("color: %1").arg(color));
    l->setWordWrap(true);
    l->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    l->hide();
    return l;
}

// A line edit with a button after it, as one form row.
QWidget* withButton(QWidget* parent, QLineEdit* edit, QPushButton* button) {
    auto* row = new QWidget(parent);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    edit->setParent(row);
    button->setParent(row);
    layout->addWidget(edit, 1);
    layout->addWidget(button);
    return row;
}

// Record lines of a tuning log (neither blank nor '#' comments); 0 when it does not exist.
int countRecords(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return 0;
    int n = 0;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        if (!line.isEmpty() && !line.startsWith('#')) ++n;
    }
    return n;
}
}  // namespace

SetupWidget::SetupWidget(const QStringList& networks, TargetValidator targetValidator, QWidget* parent)
    : QWidget(parent), m_validateTarget(std::move(targetValidator)) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);

    m_netBox = new QGroupBox(this);
    m_netForm = new QFormLayout(m_netBox);
    m_network = new QComboBox(m_netBox);
    m_network->setObjectName(QStringLiteral("Network"));
    m_network->addItems(networks);
    m_netForm->addRow(QStringLiteral("-"), m_network);
    m_onnx = new QLineEdit(m_netBox);
    m_onnx->setObjectName(QStringLiteral("OnnxPath"));
    m_onnx->setClearButtonEnabled(true);
    m_browse = new QPushButton(m_netBox);
    m_browse->setObjectName(QStringLiteral("OnnxBrowse"));
    m_onnxRow = withButton(m_netBox, m_onnx, m_browse);
    m_netForm->addRow(QStringLiteral("-"), m_onnxRow);
    m_batch = new QSpinBox(m_netBox);
    m_batch->setRange(1, 256);
    m_netForm->addRow(QStringLiteral("-"), m_batch);
    m_layout = new QComboBox(m_netBox);
    m_layout->addItems({QStringLiteral("NHWC"), QStringLiteral("NCHW")});
    m_netForm->addRow(QStringLiteral("-"), m_layout);
    m_shapes = new QLineEdit(m_netBox);
    m_shapes->setObjectName(QStringLiteral("InputShapes"));
    m_shapes->setPlaceholderText(QStringLiteral("x=1,3,640,640"));
    m_shapes->setEnabled(false);
    m_netForm->addRow(QStringLiteral("-"), m_shapes);
    m_shapesHint = messageLabel(m_netBox, QStringLiteral("ShapesHint"));
    m_shapesHint->setWordWrap(false);
    m_shapesHint->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_netForm->addRow(QString(), m_shapesHint);
    m_shapesError = messageLabel(m_netBox, QStringLiteral("ShapesError"), QStringLiteral("#c0392b"));
    m_netForm->addRow(QString(), m_shapesError);
    m_winograd = new QCheckBox(m_netBox);
    m_winograd->setChecked(true);
    m_netForm->addRow(QString(), m_winograd);
    m_winogradOrDirect = new QCheckBox(m_netBox);
    m_winogradOrDirect->setObjectName(QStringLiteral("WinogradOrDirect"));
    m_netForm->addRow(QString(), m_winogradOrDirect);
    connect(m_winograd, &QCheckBox::toggled, m_winogradOrDirect, &QWidget::setEnabled);
    outer->addWidget(m_netBox);

    m_tgtBox = new QGroupBox(this);
    m_tgtForm = new QFormLayout(m_tgtBox);
    m_target = new QComboBox(m_tgtBox);
    m_target->setObjectName(QStringLiteral("Target"));
    m_target->setEditable(true);
    m_target->setInsertPolicy(QComboBox::NoInsert);
    m_target->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_target->setMinimumContentsLength(16);
    // The popup is as wide as the longest preset (updateTargetPopupWidth), whatever the field's width.
    m_target->view()->setTextElideMode(Qt::ElideMiddle);
    m_target->addItem(QStringLiteral("-"), QString());  // "Host CPU", set by retranslate()
    m_target->addItem(QStringLiteral("llvm -mcpu=znver4"), QStringLiteral("llvm -mcpu=znver4"));
    m_target->addItem(QStringLiteral("llvm -mcpu=core-avx2"), QStringLiteral("llvm -mcpu=core-avx2"));
    m_target->addItem(QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"),
                      QStringLiteral("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));
    // GPU presets (TVM's names); item data kHostRole: the host target the preset comes with.
    m_target->addItem(QStringLiteral("opencl -device=mali"), QStringLiteral("opencl -device=mali"));
    m_target->setItemData(m_target->count() - 1, QStringLiteral("llvm -mtriple=aarch64-linux-gnu"), kHostRole);
    for (const char* gpu : {"cuda -arch=sm_90", "cuda -arch=sm_80", "opencl"})
        m_target->addItem(QString::fromLatin1(gpu), QString::fromLatin1(gpu));
    // VTA presets (TVM's tvm.target.vta() strings): AutoTVM mode on the quantized network, simulated.
    for (const QString& v : session::TuningSession::vtaTargetPresets()) m_target->addItem(v, v);
    m_tgtForm->addRow(QStringLiteral("-"), m_target);
    for (int i = 1; i < m_target->count(); ++i) m_target->setItemData(i, m_target->itemText(i), Qt::ToolTipRole);
    m_targetHost = new QLineEdit(m_tgtBox);
    m_targetHost->setObjectName(QStringLiteral("TargetHost"));
    m_targetHost->setClearButtonEnabled(true);
    m_tgtForm->addRow(QStringLiteral("-"), m_targetHost);
    m_targetError = messageLabel(m_tgtBox, QStringLiteral("TargetError"), QStringLiteral("#c0392b"));
    m_tgtForm->addRow(QString(), m_targetError);
    outer->addWidget(m_tgtBox);

    m_searchBox = new QGroupBox(this);
    m_searchForm = new QFormLayout(m_searchBox);
    m_mode = new QComboBox(m_searchBox);
    m_mode->setObjectName(QStringLiteral("SearchMode"));
    m_mode->addItem(QStringLiteral("-"), false);  // "Auto-scheduler", set by retranslate()
    m_mode->addItem(QStringLiteral("-"), true);   // "AutoTVM"
    m_searchForm->addRow(QStringLiteral("-"), m_mode);
    m_tuner = new QComboBox(m_searchBox);
    m_tuner->setObjectName(QStringLiteral("AutotvmTuner"));
    m_tuner->addItems(session::TuningSession::autotvmTunerNames());
    m_searchForm->addRow(QStringLiteral("-"), m_tuner);
    m_nTrial = new QSpinBox(m_searchBox);
    m_nTrial->setRange(1, 10000000);
    m_nTrial->setValue(100);
    m_searchForm->addRow(QStringLiteral("-"), m_nTrial);
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
    m_costModel->addItem(QStringLiteral("-"), QStringLiteral("xgb-rank"));
    m_costModel->addItem(QStringLiteral("-"), QStringLiteral("xgb-tvm"));
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
    m_runner->setObjectName(QStringLiteral("Runner"));
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
    m_cacheFlush = new QComboBox(m_runBox);
    m_cacheFlush->addItem(QStringLiteral("-"), QStringLiteral("auto"));
    m_cacheFlush->addItem(QStringLiteral("-"), QStringLiteral("on"));
    m_cacheFlush->addItem(QStringLiteral("-"), QStringLiteral("off"));
    m_runForm->addRow(QStringLiteral("-"), m_cacheFlush);
    outer->addWidget(m_runBox);

    m_logBox = new QGroupBox(this);
    m_logForm = new QFormLayout(m_logBox);
    m_log = new QLineEdit(QStringLiteral("tunebench.json"), m_logBox);
    m_log->setObjectName(QStringLiteral("LogPath"));
    m_logBrowse = new QPushButton(m_logBox);
    m_logBrowse->setObjectName(QStringLiteral("LogBrowse"));
    m_logRow = withButton(m_logBox, m_log, m_logBrowse);
    m_logForm->addRow(QStringLiteral("-"), m_logRow);
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
    connect(m_onnx, &QLineEdit::textChanged, this, [this] { onOnnxChanged(); });
    connect(m_network, &QComboBox::currentTextChanged, this, [this] { followNetworkInLogName(); });
    connect(m_shapes, &QLineEdit::textChanged, this, [this] { revalidate(); });
    connect(m_logBrowse, &QPushButton::clicked, this, [this] { browseLog(); });
    connect(m_log, &QLineEdit::textEdited, this, [this](const QString& t) { m_logFollowsNetwork = t.trimmed() == defaultLogPath(job()); });
    connect(m_target, &QComboBox::currentTextChanged, this, [this] { updateTargetHost(); });
    // Picking a preset brings its host (the Mali boards' AArch64 CPU); a typed target keeps the field.
    connect(m_target, &QComboBox::activated, this, [this](int i) {
        if (i > 0) m_targetHost->setText(m_target->itemData(i, kHostRole).toString());
    });
    connect(m_targetHost, &QLineEdit::textChanged, this, [this] { revalidate(); });
    connect(m_runner, &QComboBox::currentIndexChanged, this, [this] {
        bool rpc = m_runner->currentData().toString() == QLatin1String("rpc");
        m_tracker->setEnabled(rpc);
        m_key->setEnabled(rpc);
        revalidate();
    });
    connect(m_key, &QLineEdit::textChanged, this, [this] { revalidate(); });
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] {
        applyMode();
        revalidate();
        followNetworkInLogName();
        Q_EMIT autotvmModeChanged(m_mode->currentData().toBool());
    });
    connect(m_tracker, &QLineEdit::textChanged, this, [this] { revalidate(); });
    connect(m_log, &QLineEdit::textChanged, this, [this] { updateResumeOffer(); });
    m_tracker->setEnabled(false);
    m_key->setEnabled(false);
    m_targetHost->setEnabled(false);
    retranslate();
    applyMode();
    updateResumeOffer();
    revalidate();
}

void SetupWidget::applyMode() {
    // AutoTVM mode tunes a zoo network's NCHW tasks on this machine (autotvm tune --network): the
    // auto-scheduler's budget, rounds, strategy, cost model and RPC fields do not apply.
    const bool autotvm = m_mode->currentData().toBool();
    for (QWidget* w : std::initializer_list<QWidget*>{m_tuner, m_nTrial}) m_searchForm->setRowVisible(w, autotvm);
    for (QWidget* w : std::initializer_list<QWidget*>{m_trials, m_perRound, m_strategy, m_costModel, m_taskIds, m_defaultSeed})
        m_searchForm->setRowVisible(w, !autotvm);
    for (QWidget* w : std::initializer_list<QWidget*>{m_onnxRow, m_layout, m_shapes, m_winograd, m_winogradOrDirect})
        m_netForm->setRowVisible(w, !autotvm);
    // A VTA target measures on the simulator in process (local) or on a VTA device of a tracker (rpc).
    for (QWidget* w : std::initializer_list<QWidget*>{m_runner, m_tracker, m_key})
        m_runForm->setRowVisible(w, !autotvm || m_vtaTarget);
}

void SetupWidget::retranslate() {
    m_netBox->setTitle(tr("Network"));
    setRowLabel(m_netForm, m_network, tr("Zoo network"));
    setRowLabel(m_netForm, m_onnxRow, tr("ONNX file"));
    setRowLabel(m_netForm, m_batch, tr("Batch"));
    setRowLabel(m_netForm, m_layout, tr("Layout"));
    setRowLabel(m_netForm, m_shapes, tr("Input shapes"));
    m_shapes->setToolTip(tr("Shapes of the ONNX model's dynamic inputs, NAME=DIMS separated by semicolons"));
    updateShapesHint();
    m_winograd->setText(tr("Rewrite 3×3 convolutions to winograd (as TVM)"));
    m_winograd->setToolTip(tr("Off keeps NHWC 3×3 convolutions direct: the tasks then differ from TVM's"));
    m_winogradOrDirect->setText(tr("Also tune them direct, run the faster"));
    m_winogradOrDirect->setToolTip(tr("Adds, after TVM's tasks, the direct conv2d task of each winograd task "
                                      "(--winograd-or-direct); the compiled network runs whichever has the "
                                      "faster record, per convolution"));
    m_onnx->setPlaceholderText(tr("(none: use the zoo network)"));
    m_browse->setText(tr("Open ONNX…"));
    m_tgtBox->setTitle(tr("Target"));
    setRowLabel(m_tgtForm, m_target, tr("Target"));
    // Item 0 is the host: keep it selected across a language change when it was.
    // Renaming the current item replaces the edit text, which may be a typed target: keep it.
    const bool host = isHostTarget();
    const QString typed = m_target->currentText();
    m_target->setItemText(0, tr("Host CPU"));
    m_target->setEditText(host ? m_target->itemText(0) : typed);
    updateTargetPopupWidth();
    m_target->setToolTip(tr("A TVM target string, e.g. llvm -mcpu=znver4, llvm -mtriple=aarch64-linux-gnu -mattr=+neon, "
                            "opencl -device=mali or cuda -arch=sm_90"));
    setRowLabel(m_tgtForm, m_targetHost, tr("Target host"));
    m_targetHost->setPlaceholderText(tr("(none; GPU targets only)"));
    m_targetHost->setToolTip(tr("The CPU that launches a GPU target's kernels (TVM's host=), e.g. "
                                "llvm -mtriple=aarch64-linux-gnu on a Mali board"));
    m_searchBox->setTitle(tr("Search"));
    setRowLabel(m_searchForm, m_mode, tr("Mode"));
    m_mode->setItemText(0, tr("Auto-scheduler"));
    m_mode->setItemText(1, tr("AutoTVM"));
    m_mode->setToolTip(tr("Auto-scheduler: Ansor's sketch search over all tasks; AutoTVM: each task's template "
                          "config space, tuned task by task"));
    setRowLabel(m_searchForm, m_tuner, tr("Tuner"));
    m_tuner->setToolTip(tr("The AutoTVM tuner, as TVM names it (xgb: XGBoost cost model + simulated annealing)"));
    setRowLabel(m_searchForm, m_nTrial, tr("Trials per task"));
    m_nTrial->setToolTip(tr("n_trial: configs measured per task, at most its config space"));
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
    m_costModel->setItemText(2, tr("XGBoost, pairwise rank"));
    m_costModel->setItemText(3, tr("XGBoost as TVM (164 features, random warm-up)"));
    m_costModel->setToolTip(tr("XGBoost: TVM's features plus 12 of the register block; until it has trained it ranks "
                               "candidates by their estimated cycles instead of at random. XGBoost as TVM: TVM's model "
                               "exactly (--cost-model xgb-tvm)."));
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
    setRowLabel(m_runForm, m_cacheFlush, tr("Cache flush"));
    m_cacheFlush->setItemText(0, tr("per task (auto)"));
    m_cacheFlush->setItemText(1, tr("every task"));
    m_cacheFlush->setItemText(2, tr("never (warm caches)"));
    m_cacheFlush->setToolTip(tr("TVM enable_cpu_cache_flush: time kernels with cold caches, as in a whole network. Per task: "
                                "flush where the task's inputs and weights, or the network's weights, exceed the last-level "
                                "cache"));
    m_logBox->setTitle(tr("Log"));
    setRowLabel(m_logForm, m_logRow, tr("Log file"));
    m_logBrowse->setText(tr("Browse…"));
    m_logBrowse->setToolTip(tr("Choose the record log (an existing one can be resumed)"));
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
    j.shapes = shapeBindings();
    j.batch = m_batch->value();
    j.layout = m_layout->currentText();
    j.winograd = m_winograd->isChecked();
    j.winogradOrDirect = j.winograd && m_winogradOrDirect->isChecked();
    j.target = isHostTarget() ? QString() : m_target->currentText().trimmed();
    j.targetHost = m_gpuTarget ? m_targetHost->text().trimmed() : QString();
    j.autotvm = m_mode->currentData().toBool();
    j.tuner = m_tuner->currentText();
    j.nTrial = m_nTrial->value();
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
    j.cacheFlush = m_cacheFlush->currentData().toString();
    j.logPath = m_log->text().trimmed();
    j.resume = m_resume->isEnabled() && m_resume->isChecked();
    j.latencyLogPath = m_latencyLog->text().trimmed();
    if (j.autotvm) {  // what AutoTVM mode tunes (the fields applyMode hides)
        j.onnxPath.clear();
        j.shapes.clear();
        j.layout = QStringLiteral("NCHW");
        if (!m_vtaTarget) j.runner = QStringLiteral("local");
    }
    return j;
}

void SetupWidget::setJob(const session::TuningJob& j) {
    m_hidden = j;
    int i = m_network->findText(j.network);
    if (i >= 0) m_network->setCurrentIndex(i);
    m_onnx->setText(j.onnxPath);
    m_shapes->setText(j.shapes.join(QStringLiteral("; ")));
    if (j.shapes.isEmpty()) m_shapes->setText(m_model.exampleBindings());  // a dynamic model needs them
    m_batch->setValue(j.batch);
    m_layout->setCurrentText(j.layout);
    m_winograd->setChecked(j.winograd);
    m_winogradOrDirect->setChecked(j.winogradOrDirect);
    m_winogradOrDirect->setEnabled(j.winograd);
    if (j.target.isEmpty())
        m_target->setCurrentIndex(0);
    else
        m_target->setEditText(j.target);
    m_targetHost->setText(j.targetHost);
    m_mode->setCurrentIndex(j.autotvm ? 1 : 0);
    if (m_tuner->findText(j.tuner) >= 0) m_tuner->setCurrentText(j.tuner);
    m_nTrial->setValue(j.nTrial);
    m_trials->setValue(j.trials);
    m_perRound->setValue(j.perRound);
    m_earlyStopping->setValue(j.earlyStopping);
    m_strategy->setCurrentIndex(j.strategy == QLatin1String("round-robin") ? 1 : 0);
    m_costModel->setCurrentIndex(std::max(0, m_costModel->findData(j.costModel)));
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
    m_cacheFlush->setCurrentIndex(std::max(0, m_cacheFlush->findData(j.cacheFlush)));
    // A generated name follows this job's network (`tunebench --onnx m.onnx` comes with the zoo default's).
    m_logFollowsNetwork = isGeneratedLogName(j.logPath, j);
    m_log->setText(m_logFollowsNetwork ? defaultLogPath(j) : j.logPath);
    m_resume->setChecked(j.resume && m_resume->isEnabled());
    m_latencyLog->setText(j.latencyLogPath);
    revalidate();
}

void SetupWidget::setTargetText(const QString& text) { m_target->setEditText(text); }

bool SetupWidget::selectTargetPreset(const QString& target) {
    const int i = m_target->findData(target);
    if (i <= 0) return false;
    m_target->setCurrentIndex(i);
    Q_EMIT m_target->activated(i);
    return true;
}

void SetupWidget::updateTargetHost() {
    // Only a GPU target has a host: for a CPU target the field is off and the job carries none.
    m_gpuTarget = !isHostTarget() && session::TuningSession::isGpuTarget(m_target->currentText().trimmed());
    m_targetHost->setEnabled(m_gpuTarget);
    const bool vta = !isHostTarget() && session::TuningSession::isVtaTarget(m_target->currentText());
    if (vta != m_vtaTarget) {
        m_vtaTarget = vta;
        // A VTA is tuned as seed 004 does: AutoTVM on the quantized resnet (the zoo's other networks
        // do not pack); its measurements come from the simulator here or a VTA device of a tracker.
        if (vta) {
            m_mode->setCurrentIndex(m_mode->findData(true));
            if (!m_network->currentText().startsWith(QLatin1String("resnet")))
                m_network->setCurrentIndex(std::max(0, m_network->findText(QStringLiteral("resnet-18"))));
        }
        applyMode();
    }
    revalidate();
}

bool SetupWidget::isValid() const { return m_valid; }
QString SetupWidget::targetError() const { return m_targetError->text(); }

void SetupWidget::revalidate() {
    QString err;
    if (!isHostTarget() && m_validateTarget)
        err = m_validateTarget(m_target->currentText().trimmed(), m_gpuTarget ? m_targetHost->text().trimmed() : QString());
    if (err.isEmpty() && m_vtaTarget && !m_mode->currentData().toBool())
        err = tr("A VTA target is tuned in AutoTVM mode (seed 004: the quantized network's VTA tasks)");
    m_targetError->setText(err);
    m_targetError->setVisible(!err.isEmpty());
    const QString shapesErr = m_onnx->text().trimmed().isEmpty() ? QString() : session::checkShapeBindings(m_model, shapeBindings());
    m_shapesError->setText(shapesErr);
    m_shapesError->setVisible(!shapesErr.isEmpty());
    bool ok = err.isEmpty() && shapesErr.isEmpty() && !m_log->text().trimmed().isEmpty();
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

QStringList SetupWidget::shapeBindings() const {
    QStringList out;
    for (const QString& s : m_shapes->text().split(QLatin1Char(';'), Qt::SkipEmptyParts))
        if (!s.trimmed().isEmpty()) out.append(s.trimmed());
    return out;
}

QString SetupWidget::defaultLogPath(const session::TuningJob& job) {
    const QString stem = job.onnxPath.trimmed().isEmpty() ? job.network : QFileInfo(job.onnxPath.trimmed()).completeBaseName();
    return job.autotvm ? QStringLiteral("tunebench_%1_autotvm.log").arg(stem) : QStringLiteral("tunebench_%1.json").arg(stem);
}

bool SetupWidget::isGeneratedLogName(const QString& path, const session::TuningJob& job) const {
    // TuningJob's default, this job's default, or the default of a zoo network.
    if (path == QLatin1String("tunebench.json") || path == defaultLogPath(job)) return true;
    static const QRegularExpression zooLog(QStringLiteral("^tunebench_(.+?)(_autotvm\\.log|\\.json)$"));
    const QRegularExpressionMatch m = zooLog.match(path);
    return m.hasMatch() && m_network->findText(m.captured(1)) >= 0;
}

void SetupWidget::onOnnxChanged() {
    const QString path = m_onnx->text().trimmed();
    // Input shapes bind ONNX inputs; zoo networks have fixed ones.
    m_network->setEnabled(path.isEmpty());
    m_shapes->setEnabled(!path.isEmpty());
    if (path != m_model.path) {
        if (path.isEmpty())
            m_model = {};
        else
            m_model = QFileInfo(path).isFile() ? session::readOnnxInputs(path) : session::OnnxInputs{path, tr("no such file"), {}};
        // Prefilled with a binding of this model's dynamic dims (empty when it has none).
        m_shapes->setText(m_model.exampleBindings());
    }
    updateShapesHint();
    followNetworkInLogName();
    revalidate();
}

void SetupWidget::updateShapesHint() {
    const bool onnx = !m_onnx->text().trimmed().isEmpty();
    QString hint;
    m_shapesHint->setToolTip(QString());
    if (onnx && !m_model.error.isEmpty()) {
        hint = tr("Cannot read the model's inputs: %1").arg(m_model.error);
    } else if (onnx) {
        QStringList inputs, dynamicNames;
        for (const session::OnnxInput& in : m_model.inputs) {
            inputs.append(QStringLiteral("%1 %2 %3").arg(in.name, in.type, in.dimsText()));
            for (const QString& p : in.dimParams)
                if (!p.isEmpty()) dynamicNames.append(p);
        }
        // Short lines, not word wrap: a wrapped label in the scrolled form gets rows of blank space.
        hint = m_model.hasDynamic() ? tr("Model inputs: %1\n? marks a dynamic dimension: bind it above\n(the sizes there are "
                                         "suggestions).")
                                          .arg(inputs.join(QStringLiteral("; ")))
                                    : tr("Model inputs: %1 (all static)").arg(inputs.join(QStringLiteral("; ")));
        if (!dynamicNames.isEmpty()) m_shapesHint->setToolTip(tr("Dynamic dimensions: %1").arg(dynamicNames.join(QStringLiteral(", "))));
    }
    m_shapesHint->setText(hint);
    m_shapesHint->setVisible(!hint.isEmpty());
    const QString example = m_model.exampleBindings();
    m_shapes->setPlaceholderText(example.isEmpty() ? QStringLiteral("x=1,3,640,640") : example);
}

void SetupWidget::followNetworkInLogName() {
    if (m_logFollowsNetwork) m_log->setText(defaultLogPath(job()));
}

void SetupWidget::updateTargetPopupWidth() {
    // The widest item as the popup's delegate draws it, its frame, and a vertical scroll bar should one appear.
    QAbstractItemView* view = m_target->view();
    view->setMinimumWidth(view->sizeHintForColumn(0) + 2 * view->frameWidth() +
                          view->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
}

void SetupWidget::browseLog() {
    const QString f = QFileDialog::getSaveFileName(this, tr("Record log"), m_log->text().trimmed(),
                                                   tr("Tuning logs (*.json *.log);;All files (*)"), nullptr,
                                                   QFileDialog::DontConfirmOverwrite);
    if (f.isEmpty()) return;
    m_logFollowsNetwork = false;
    m_log->setText(f);
}

bool SetupWidget::confirmStart() {
    const session::TuningJob j = job();
    if (j.resume || j.logPath.isEmpty()) return true;
    const int records = countRecords(j.logPath);
    if (records == 0) return true;
    LogChoice choice = LogChoice::Cancel;
    if (m_askLogChoice) {
        choice = m_askLogChoice(j.logPath, records);
    } else {
        QMessageBox box(QMessageBox::Question, tr("The log already holds records"),
                        tr("%1 already holds %2 records.").arg(QDir::toNativeSeparators(j.logPath)).arg(records),
                        QMessageBox::NoButton, this);
        box.setInformativeText(tr("Append starts a new search and adds its records after them, as TVM does with a log "
                                  "that is not resumed. Resume continues the search from them."));
        QPushButton* append = box.addButton(tr("Append"), QMessageBox::AcceptRole);
        QPushButton* resume = box.addButton(tr("Resume"), QMessageBox::AcceptRole);
        box.addButton(QMessageBox::Cancel);
        box.setDefaultButton(append);
        box.exec();
        choice = box.clickedButton() == append ? LogChoice::Append : box.clickedButton() == resume ? LogChoice::Resume : LogChoice::Cancel;
    }
    if (choice == LogChoice::Resume) m_resume->setChecked(true);
    return choice != LogChoice::Cancel;
}

}  // namespace tb::widgets
