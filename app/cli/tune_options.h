// SPDX-License-Identifier: Apache-2.0
#pragma once
// `tunebench-cli tune`'s options and the tuning job they describe (engine/tuning/tuning_job.h), in
// both directions: job() reads a parsed command line, arguments() writes the command line of a job.
// The window's session panel sets the same job fields (app/session); tests/session/tst_tuning_job
// checks that every option survives both round trips.

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QStringList>

#include "app/cli/network_loader.h"
#include "engine/tuning/tuning_job.h"

namespace tb::cli {

struct TuneCommandLine {
    NetworkOptions net;
    QCommandLineOption target{QStringLiteral("target"), QStringLiteral("TVM target string (default: this CPU)."),
                              QStringLiteral("TARGET")};
    QCommandLineOption targetHost{QStringLiteral("target-host"),
                                  QStringLiteral("Host target of a GPU target, e.g. \"llvm -mtriple=aarch64-linux-gnu\" "
                                                 "(TVM's host=; default: none)."),
                                  QStringLiteral("HOST")};
    QCommandLineOption trials{QStringLiteral("trials"), QStringLiteral("Total measured trials (default 64 x tasks)."),
                              QStringLiteral("N"), QStringLiteral("0")};
    QCommandLineOption log{QStringLiteral("log"), QStringLiteral("Measure-record log to append to (TVM v0.6 lines)."),
                           QStringLiteral("FILE")};
    QCommandLineOption resume{QStringLiteral("resume"), QStringLiteral("Continue from the records already in --log.")};
    QCommandLineOption strategy{QStringLiteral("strategy"), QStringLiteral("gradient or round-robin (default gradient)."),
                                QStringLiteral("S"), QStringLiteral("gradient")};
    QCommandLineOption perRound{QStringLiteral("per-round"), QStringLiteral("Measures per round (default 64)."),
                                QStringLiteral("N"), QStringLiteral("64")};
    QCommandLineOption seed{QStringLiteral("seed"), QStringLiteral("Random seed (default 0)."), QStringLiteral("S"),
                            QStringLiteral("0")};
    QCommandLineOption costModel{QStringLiteral("cost-model"), QStringLiteral("xgb (TVM's objective, our features, analytic warm-up), xgb-rank (pairwise ranking objective), xgb-tvm (TVM's model: its features, random warm-up) or random (default xgb)."),
                                 QStringLiteral("M"), QStringLiteral("xgb")};
    QCommandLineOption early{QStringLiteral("early-stopping"),
                             QStringLiteral("Stop after this many trials without improvement (default off)."),
                             QStringLiteral("N"), QStringLiteral("-1")};
    QCommandLineOption runner{QStringLiteral("runner"), QStringLiteral("local or rpc (default local)."),
                              QStringLiteral("R"), QStringLiteral("local")};
    QCommandLineOption tracker{QStringLiteral("tracker"), QStringLiteral("Tracker HOST:PORT for --runner rpc."),
                               QStringLiteral("HOST:PORT"), QStringLiteral("127.0.0.1:9190")};
    QCommandLineOption key{QStringLiteral("key"), QStringLiteral("Device key for --runner rpc."), QStringLiteral("KEY")};
    QCommandLineOption tsv{QStringLiteral("tsv"),
                           QStringLiteral("Estimated-latency log (default total_latency.tsv; empty: none)."),
                           QStringLiteral("FILE"), QStringLiteral("total_latency.tsv")};
    QCommandLineOption number{QStringLiteral("number"), QStringLiteral("Runner number: runs per measurement (default 3)."),
                              QStringLiteral("N"), QStringLiteral("3")};
    QCommandLineOption repeat{QStringLiteral("repeat"), QStringLiteral("Runner repeat (default 1)."), QStringLiteral("N"),
                              QStringLiteral("1")};
    QCommandLineOption minRepeat{QStringLiteral("min-repeat-ms"), QStringLiteral("Runner min_repeat_ms (default 100)."),
                                 QStringLiteral("MS"), QStringLiteral("100")};
    QCommandLineOption timeout{QStringLiteral("timeout"),
                               QStringLiteral("Runner timeout per candidate in seconds (default 10)."),
                               QStringLiteral("S"), QStringLiteral("10")};
    QCommandLineOption flush{QStringLiteral("cache-flush"),
                             QStringLiteral("Flush CPU caches before each repeat (TVM enable_cpu_cache_flush): on, off, or auto "
                                            "(default): per task, flush where the task's inputs+weights or the network's "
                                            "weights exceed the last-level cache. A bare --cache-flush means on."),
                             QStringLiteral("on|off|auto"), QStringLiteral("auto")};
    QCommandLineOption only{QStringLiteral("tasks"),
                            QStringLiteral("Tune only these task IDs of the extraction order (comma list, e.g. 2,5)."),
                            QStringLiteral("IDS")};
    QCommandLineOption pipeline{QStringLiteral("pipeline"),
                                QStringLiteral("Local CPU runner: build and run rounds N candidates at a time, compiling the "
                                               "next N (at nice 19) while the runner times these (default 0: build all, then run all; on 2 cores the "
                                               "compiles slow the timed kernels)."),
                                QStringLiteral("N"), QStringLiteral("0")};
    QCommandLineOption abandon{QStringLiteral("abandon-factor"),
                               QStringLiteral("Local CPU runner: stop timing a candidate whose first call is F times "
                                              "slower than its task's best so far; its record holds that call (default "
                                              "2.5; 0: time every candidate fully, as TVM)."),
                               QStringLiteral("F"), QStringLiteral("2.5")};
    QCommandLineOption screen{QStringLiteral("screen"),
                              QStringLiteral("Local CPU runner: time every candidate for --screen-ms first and to "
                                             "min_repeat_ms only those within F times its task's best so far; the "
                                             "others' records hold the screening time (default 1.1; 0: time every "
                                             "candidate fully, as TVM)."),
                              QStringLiteral("F"), QStringLiteral("1.1")};
    QCommandLineOption screenMs{QStringLiteral("screen-ms"),
                                QStringLiteral("Local CPU runner: how long the screening part of a measurement lasts "
                                               "(default 10 ms)."),
                                QStringLiteral("MS"), QStringLiteral("10")};
    QCommandLineOption rejectPreempted{QStringLiteral("reject-preempted"),
                                       QStringLiteral("Local CPU runner: time only the ~1 ms slices in which no thread of "
                                                      "the measuring process was preempted (shared, loaded machines).")};
    QCommandLineOption slices{QStringLiteral("slices"),
                              QStringLiteral("Local CPU runner: a round's result is the fastest of N slices of "
                                             "min_repeat_ms, at the same timing budget; helps against interference "
                                             "shorter than a slice (default 1: the mean over the round, as TVM). Not "
                                             "with --reject-preempted."),
                              QStringLiteral("N"), QStringLiteral("1")};
    QCommandLineOption layoutRewrite{
        QStringLiteral("layout-rewrite"),
        QStringLiteral("TVM layout_rewrite_option of the tasks: 2 times each kernel with its weights already in the "
                       "layout its loops read (as a network compiled with the log runs it), 0 in their original "
                       "layout (default: 2 on CPU targets, 0 on GPUs, TVM's choice for a network's tasks)."),
        QStringLiteral("0|2")};
    QCommandLineOption noSeed{QStringLiteral("no-default-seed"),
                              QStringLiteral("Do not measure each task's default schedule in its first round (pure Ansor).")};

    /// `args` with a bare `--cache-flush` (one not followed by on, off or auto) written
    /// `--cache-flush=on`, what it meant before the option took a value. Parse this, not `args`.
    static QStringList normalized(const QStringList& args);
    /// Every option of the command, the network's first.
    QList<QCommandLineOption> options() const;
    void addTo(QCommandLineParser& p) const { p.addOptions(options()); }
    /// The job the parsed options describe. Throws tb::UserError naming the bad option (a missing
    /// --log, a malformed number, an unknown strategy, cost model or runner, a bad --tracker).
    tuning::TuningJob job(const QCommandLineParser& p) const;
    /// The options that describe `job` (without the `tune` command), options at their default left
    /// out: job(parse(arguments(j))) gives `j` back in every field a `tune` option sets.
    static QStringList arguments(const tuning::TuningJob& job);
};

}  // namespace tb::cli
