// SPDX-License-Identifier: Apache-2.0
#pragma once
// Every measured candidate of the job, newest last, capped (oldest dropped first) so an
// unbounded tuning run keeps constant memory.

#include <QAbstractTableModel>
#include <QList>

#include "app/session/snapshots.h"

namespace tb::models {

class MeasurementModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { TrialColumn, TaskColumn, LatencyColumn, GflopsColumn, ErrorColumn, TimeColumn, ColumnCount };
    static constexpr int kDefaultCapacity = 100000;

    explicit MeasurementModel(QObject* parent = nullptr, int capacity = kDefaultCapacity);
    int rowCount(const QModelIndex& parent = {}) const final;
    int columnCount(const QModelIndex& parent = {}) const final;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const final;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const final;
    /// After a language change: headers (and translated cells) are fetched again.
    void retranslate();

    /// Appends a batch (one insert), first removing the oldest rows beyond the capacity.
    void append(const QList<session::MeasureRow>& rows);
    /// Inserts rows measured before the first one (an earlier run, read back from its log) in one
    /// insert; beyond the capacity the oldest of them are dropped.
    void prepend(const QList<session::MeasureRow>& rows);
    void clear();
    /// The worker (and the log, in whole seconds) stamps every trial of a round with one time, the
    /// round's end. Runs are sequential, so a trial ended about the build + run times of the later
    /// trials before that: spreads each run of rows sharing one elapsedS back from that time, never
    /// before `notBefore` (the previous round's end; for later runs, the run before), squeezed into
    /// that interval when the parallel builds make the sum longer. Rows alone in their time stay.
    static void spreadRoundTimes(QList<session::MeasureRow>& rows, double notBefore);
    const QList<session::MeasureRow>& rows() const { return m_rows; }
    /// TVM's name of an error number ("NO_ERROR", "RUNTIME_DEVICE", ...).
    static QString errorName(int errorNo);

private:
    QList<session::MeasureRow> m_rows;
    int m_capacity;
};

}  // namespace tb::models
