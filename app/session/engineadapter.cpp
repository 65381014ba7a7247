// SPDX-License-Identifier: Apache-2.0
#include "app/session/engineadapter.h"

#include <QStringList>

#include <algorithm>

#include "engine/codegen/codegen_llvm.h"
#include "engine/lower/lower_state.h"

namespace tb::session::adapter {

QList<TaskRow> taskRows(const tuning::NetworkTuner& tuner, int tuningTask) {
    const tuning::TaskScheduler& ts = tuner.scheduler();
    const int next = tuningTask >= 0 ? tuningTask : ts.nextTask();
    // Share of the estimated total latency; during the warm-up, of the tasks measured so far.
    double total = 0;
    for (size_t i = 0; i < ts.tasks().size(); ++i)
        if (ts.bestCosts()[i] < 1e9) total += ts.tasks()[i].weight * ts.bestCosts()[i];
    QList<TaskRow> rows;
    rows.reserve(qsizetype(ts.tasks().size()));
    for (size_t i = 0; i < ts.tasks().size(); ++i) {
        const tuning::SchedulerTask& t = ts.tasks()[i];
        TaskRow r;
        r.id = int(i);
        r.workloadKey = qstr(t.workloadKey);
        r.description = qstr(t.desc);
        r.weight = t.weight;
        r.flop = t.flop;
        const double best = ts.bestCosts()[i];
        if (best < 1e9) {
            r.bestMs = best * 1e3;
            r.gflops = best > 0 ? t.flop / best / 1e9 : 0;
            r.share = total > 0 ? t.weight * best / total : 0;
        }
        // TVM's table counts rounds x per-round (PrintTableInfo), so do we.
        r.trials = ts.taskRounds()[i] * ts.numMeasuresPerRound();
        if (ts.isDead(int(i)))
            r.state = QStringLiteral("dead");
        else if (int(i) == tuningTask)
            r.state = QStringLiteral("tuning");
        else if (ts.taskRounds()[i] > 0)
            r.state = QStringLiteral("tuned");
        else
            r.state = QStringLiteral("pending");
        r.next = int(i) == next && !ts.finished();
        rows.append(r);
    }
    return rows;
}

MeasureRow measureRow(const tuning::MeasuredTrial& trial, double flop, double elapsedS) {
    MeasureRow r;
    r.taskId = trial.taskId;
    r.trial = trial.trial;
    r.errorNo = trial.outcome.errorNo;
    if (r.errorNo == 0) {
        const double c = trial.outcome.meanCost();
        r.costMs = c * 1e3;
        r.gflops = c > 0 ? flop / c / 1e9 : 0;
    } else {
        // Messages can be whole compiler logs: keep the table's tooltips readable.
        r.errorMessage = qstr(trial.outcome.errorMsg.substr(0, 2000));
    }
    r.elapsedS = elapsedS;
    r.predicted = trial.predicted;
    r.allCostS = trial.outcome.allCost;
    return r;
}

LatencyPoint latencyPoint(const tuning::TaskScheduler& scheduler) {
    LatencyPoint p;
    p.trials = scheduler.totalTrials();
    p.elapsedS = scheduler.elapsedSeconds();
    p.estimatedMs = scheduler.allTasksHaveCost() ? scheduler.currentScore() * 1e3 : -1;
    // During the warm-up (one round per task) TVM's estimate is "-" for a long time; the partial
    // sum lets the chart show progress before every task has a cost.
    double partial = 0;
    p.tasks = int(scheduler.tasks().size());
    for (size_t i = 0; i < scheduler.tasks().size(); ++i) {
        const double best = scheduler.bestCosts()[i];
        if (best >= 1e9) continue;
        partial += scheduler.tasks()[i].weight * best;
        ++p.tasksWithCost;
    }
    p.partialMs = p.tasksWithCost > 0 ? partial * 1e3 : -1;
    return p;
}

DagSnapshot dagSnapshot(const te::ComputeDAG& dag, const State& best, double bestCost, const codegen::Target& target) {
    DagSnapshot s;
    s.workloadKey = qstr(dag.workloadKey());
    s.dagText = qstr(dag.print(false));
    const QStringList lines = s.dagText.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    const auto& ops = dag.ops();
    for (size_t i = 0; i < ops.size(); ++i) {
        const QString name = qstr(ops[i]->name);
        s.stages.append(name);
        s.isPlaceholder.append(ops[i]->isPlaceholder());
        // One line per stage in stage order; look it up by name if a body ever spans lines.
        QString detail = lines.value(qsizetype(i));
        if (!detail.startsWith(name)) {
            detail.clear();
            for (const QString& l : lines)
                if (l.startsWith(name + QLatin1Char('(')) || l.startsWith(name + QLatin1String(" = "))) {
                    detail = l;
                    break;
                }
        }
        s.stageDetails.append(detail);
        for (const te::Tensor& in : ops[i]->inputTensors()) {
            const int src = dag.opIndex(in.op().get());
            if (src >= 0) s.edges.append({src, int(i)});
        }
    }
    if (!best.defined()) return s;
    s.bestMs = bestCost < 1e9 ? bestCost * 1e3 : -1;
    try {
        s.stateText = qstr(best.toStr());
        const lower::LoweredFunc f = lower::lowerState(dag, best);
        s.loopNest = qstr(f.print());
        const codegen::CompiledKernel k = codegen::compile(f, target, codegen::CompileOptions{true, true});
        s.llvmIr = qstr(k.llvmIr);
        s.assembly = qstr(k.assembly);
    } catch (const std::exception& e) {
        s.error = QString::fromUtf8(e.what());
    }
    return s;
}

}  // namespace tb::session::adapter
