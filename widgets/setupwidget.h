// SPDX-License-Identifier: Apache-2.0
#pragma once
// Session setup: network (zoo name, batch, layout, or an ONNX file with input shapes; winograd),
// target (CPU and GPU presets or a free TVM target string, with a target host for GPU targets:
// TVM's host=, prefilled for the Mali preset; both validated inline by the engine's parser), search options (budget,
// strategy, cost model, seed, task selection, default-schedule seeding), runner (local or RPC
// through a tracker; number, repeat, min_repeat_ms, timeout, cache flush) and the logs (resume
// offered when the record log exists). Every `tunebench-cli tune` option has a field here.
// Choosing an ONNX model reads its inputs (session::readOnnxInputs) and prefills the input shapes
// with a binding of its dynamic dims; the log name follows the network unless edited by hand.
// The search mode picks the auto-scheduler or AutoTVM (`tunebench-cli autotvm tune --network`: a
// tuner and n_trial per task; the fields AutoTVM mode does not use are hidden).

#include <QWidget>

#include <functional>

#include "app/session/onnxinputs.h"
#include "app/session/snapshots.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace tb::widgets {

class SetupWidget : public QWidget {
    Q_OBJECT
public:
    /// `networks`: zoo names; `targetValidator(target, host)` returns an empty string for a valid
    /// target string with that target host (empty: none), or the error message to show inline.
    using TargetValidator = std::function<QString(const QString& target, const QString& host)>;
    SetupWidget(const QStringList& networks, TargetValidator targetValidator, QWidget* parent = nullptr);

    session::TuningJob job() const;
    void setJob(const session::TuningJob& job);
    /// True when every field is valid (the Start button is enabled only then).
    bool isValid() const;
    /// The inline message under the target field (empty when the target is valid).
    QString targetError() const;
    void setTargetText(const QString& text);
    /// Selects the target preset whose target string is `target` (as a user picking it would: the
    /// Mali preset fills in its host); false when there is no such preset.
    bool selectTargetPreset(const QString& target);
    /// The target host field: enabled only for GPU targets.
    QLineEdit* targetHostField() const { return m_targetHost; }
    /// Offers (and ticks) "resume" when the log file exists, e.g. after a job wrote it.
    void refreshResumeOffer() { updateResumeOffer(); }

    /// What a start without Resume on a log that already holds records does. TVM's record writer
    /// appends to the log either way; Resume also continues the search from the records.
    enum class LogChoice { Append, Resume, Cancel };
    /// Answers confirmStart()'s question for `logPath` holding `records` records. The default
    /// asks with a QMessageBox; tests install their own.
    using LogChoiceAsker = std::function<LogChoice(const QString& logPath, int records)>;
    void setLogChoiceAsker(LogChoiceAsker asker) { m_askLogChoice = std::move(asker); }
    /// Called before a start: when Resume is off and the log already holds records, asks (append,
    /// resume, cancel); "resume" ticks Resume. Returns false when the start is cancelled.
    bool confirmStart();
    /// The log a job is given unless the user names one: tunebench_<zoo name or the ONNX file's
    /// base name>.json, in the working directory (as `tunebench --log`'s default).
    static QString defaultLogPath(const session::TuningJob& job);

Q_SIGNALS:
    void validityChanged(bool valid);
    /// The search mode changed: AutoTVM (true) or the auto-scheduler.
    void autotvmModeChanged(bool autotvm);

protected:
    void changeEvent(QEvent* e) override;

private:
    void retranslate();
    void revalidate();
    void updateResumeOffer();
    void applyMode();
    bool isHostTarget() const;
    void onOnnxChanged();
    void followNetworkInLogName();
    void updateShapesHint();
    void updateTargetPopupWidth();
    void browseLog();
    bool isGeneratedLogName(const QString& path, const session::TuningJob& job) const;
    QStringList shapeBindings() const;

    void updateTargetHost();

    TargetValidator m_validateTarget;
    QGroupBox* m_netBox;
    QGroupBox* m_tgtBox;
    QGroupBox* m_searchBox;
    QGroupBox* m_runBox;
    QGroupBox* m_logBox;
    QFormLayout* m_netForm;
    QFormLayout* m_tgtForm;
    QFormLayout* m_searchForm;
    QFormLayout* m_runForm;
    QFormLayout* m_logForm;
    QComboBox* m_network;
    QLineEdit* m_onnx;
    QPushButton* m_browse;
    QWidget* m_onnxRow;
    QSpinBox* m_batch;
    QComboBox* m_layout;
    QLineEdit* m_shapes;
    QLabel* m_shapesHint;
    QLabel* m_shapesError;
    QCheckBox* m_winograd;
    QCheckBox* m_winogradOrDirect;  ///< --winograd-or-direct
    QComboBox* m_target;
    QLineEdit* m_targetHost;
    bool m_vtaTarget = false;  // a VTA target: AutoTVM mode only, measured by the simulator (local) or a VTA device (rpc)
    bool m_gpuTarget = false;  // the target is a GPU target: the host field applies (even while the panel is disabled)
    QLabel* m_targetError;
    QComboBox* m_mode;
    QComboBox* m_tuner;
    QSpinBox* m_nTrial;
    QSpinBox* m_trials;
    QSpinBox* m_perRound;
    QSpinBox* m_earlyStopping;
    QComboBox* m_strategy;
    QComboBox* m_costModel;
    QSpinBox* m_seed;
    QLineEdit* m_taskIds;
    QCheckBox* m_defaultSeed;
    QComboBox* m_runner;
    QLineEdit* m_tracker;
    QLineEdit* m_key;
    QSpinBox* m_number;
    QSpinBox* m_repeat;
    QSpinBox* m_minRepeatMs;
    QDoubleSpinBox* m_timeout;
    QComboBox* m_cacheFlush;  ///< auto / on / off (TuningJob::cacheFlush)
    QWidget* m_logRow;
    QLineEdit* m_log;
    QPushButton* m_logBrowse;
    QCheckBox* m_resume;
    QLineEdit* m_latencyLog;
    session::TuningJob m_hidden;  // the fields this panel does not show (the tracker retry time)
    bool m_valid = true;
    session::OnnxInputs m_model;  // the inputs of the ONNX file in m_onnx (error set when unreadable)
    bool m_logFollowsNetwork = true;  // false once the user names the log
    LogChoiceAsker m_askLogChoice;
};

}  // namespace tb::widgets
