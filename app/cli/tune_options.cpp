// SPDX-License-Identifier: Apache-2.0
#include "app/cli/tune_options.h"

#include "engine/support/error.h"

namespace tb::cli {

namespace {

std::string optionName(const QCommandLineOption& o) { return "--" + o.names().first().toStdString(); }

int intValue(const QCommandLineParser& p, const QCommandLineOption& o, int minValue) {
    bool ok = false;
    const int v = p.value(o).toInt(&ok);
    TB_USER_CHECK(ok && v >= minValue) << optionName(o) << " must be an integer >= " << minValue << ", got '"
                                       << p.value(o).toStdString() << "'";
    return v;
}

QString str(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

QStringList TuneCommandLine::normalized(const QStringList& args) {
    static const QStringList values = {QStringLiteral("on"), QStringLiteral("off"), QStringLiteral("auto")};
    QStringList out = args;
    for (qsizetype i = 0; i < out.size(); ++i)
        if (out[i] == QLatin1String("--cache-flush") && (i + 1 == out.size() || !values.contains(out[i + 1])))
            out[i] = QStringLiteral("--cache-flush=on");
    return out;
}

QList<QCommandLineOption> TuneCommandLine::options() const {
    return net.options() + QList<QCommandLineOption>{target, targetHost, trials, log, resume, strategy, perRound, seed, costModel,
                                                     early, runner, tracker, key, tsv, number, repeat, minRepeat,
                                                     timeout, flush, only, noSeed, pipeline, abandon, screen, screenMs, rejectPreempted,
                                                     slices, layoutRewrite};
}

tuning::TuningJob TuneCommandLine::job(const QCommandLineParser& p) const {
    tuning::TuningJob j;
    // `tune` has no positional argument: one is a mistyped value (`--cache-flush sometimes`).
    TB_USER_CHECK(p.positionalArguments().isEmpty())
        << "unexpected argument '" << p.positionalArguments().value(0).toStdString()
        << "' (options take their value as --name VALUE; --cache-flush takes on, off or auto)";
    j.network = net.source(p);
    j.target = p.value(target).toStdString();
    j.targetHost = p.value(targetHost).toStdString();

    TB_USER_CHECK(p.isSet(log)) << "--log FILE is required (every measurement is appended to it)";
    j.logPath = p.value(log).toStdString();
    TB_USER_CHECK(!j.logPath.empty()) << "--log needs a file name";
    j.resume = p.isSet(resume);
    j.latencyLogPath = p.value(tsv).toStdString();

    auto& s = j.search;
    s.trials = intValue(p, trials, 0);
    s.perRound = intValue(p, perRound, 1);
    s.earlyStopping = intValue(p, early, -1);
    const std::string strat = p.value(strategy).toStdString();
    TB_USER_CHECK(strat == "gradient" || strat == "round-robin")
        << "--strategy must be gradient or round-robin, got '" << strat << "'";
    s.strategy = strat == "gradient" ? tuning::TaskSchedulerOptions::Strategy::Gradient
                                     : tuning::TaskSchedulerOptions::Strategy::RoundRobin;
    bool ok = false;
    s.seed = p.value(seed).toULongLong(&ok);
    TB_USER_CHECK(ok) << "--seed must be a non-negative integer, got '" << p.value(seed).toStdString() << "'";
    s.costModel = p.value(costModel).toStdString();
    TB_USER_CHECK(s.costModel == "xgb" || s.costModel == "xgb-rank" || s.costModel == "xgb-tvm" || s.costModel == "random")
        << "--cost-model must be xgb, xgb-rank, xgb-tvm or random, got '" << s.costModel << "'";
    s.seedDefaultSchedule = !p.isSet(noSeed);
    if (p.isSet(layoutRewrite)) {
        const QString v = p.value(layoutRewrite);
        TB_USER_CHECK(v == QStringLiteral("0") || v == QStringLiteral("2"))
            << "--layout-rewrite must be 0 (no rewrite) or 2 (weights pre-transformed), got '" << v.toStdString() << "'";
        j.layoutRewrite = v == QStringLiteral("2") ? LayoutRewriteOption::RewriteForPreTransformed
                                                   : LayoutRewriteOption::NoRewrite;
    }
    if (p.isSet(only)) {
        for (const QString& id : p.value(only).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const int k = id.trimmed().toInt(&ok);
            TB_USER_CHECK(ok && k >= 0) << "--tasks: '" << id.toStdString() << "' is not a task ID";
            j.taskIds.push_back(k);
        }
    }

    auto& r = j.runner;
    const std::string kind = p.value(runner).toStdString();
    TB_USER_CHECK(kind == "local" || kind == "rpc") << "--runner must be local or rpc, got '" << kind << "'";
    r.kind = kind == "rpc" ? tuning::RunnerConfig::Kind::Rpc : tuning::RunnerConfig::Kind::Local;
    const QStringList hp = p.value(tracker).split(QLatin1Char(':'));
    TB_USER_CHECK(hp.size() == 2 && !hp[0].isEmpty() && hp[1].toInt() > 0) << "--tracker must be HOST:PORT";
    r.trackerHost = hp[0].toStdString();
    r.trackerPort = hp[1].toInt();
    r.key = p.value(key).toStdString();
    TB_USER_CHECK(r.kind == tuning::RunnerConfig::Kind::Local || !r.key.empty()) << "--runner rpc needs --key DEVICE_KEY";
    r.number = intValue(p, number, 1);
    r.repeat = intValue(p, repeat, 1);
    r.minRepeatMs = intValue(p, minRepeat, 0);
    r.timeoutS = p.value(timeout).toDouble(&ok);
    TB_USER_CHECK(ok && r.timeoutS > 0) << "--timeout must be a positive number of seconds, got '"
                                        << p.value(timeout).toStdString() << "'";
    const std::string flushText = p.value(flush).toStdString();
    TB_USER_CHECK(flushText == "on" || flushText == "off" || flushText == "auto")
        << "--cache-flush must be on, off or auto, got '" << flushText << "'";
    r.cacheFlush = tuning::parseCacheFlushMode(flushText);
    r.pipelineSlice = intValue(p, pipeline, 0);
    r.abandonFactor = p.value(abandon).toDouble(&ok);
    TB_USER_CHECK(ok && (r.abandonFactor == 0 || r.abandonFactor > 1))
        << "--abandon-factor must be 0 (off) or a number > 1, got '" << p.value(abandon).toStdString() << "'";
    r.screenFactor = p.value(screen).toDouble(&ok);
    TB_USER_CHECK(ok && (r.screenFactor == 0 || r.screenFactor > 1))
        << "--screen must be 0 (off) or a number > 1, got '" << p.value(screen).toStdString() << "'";
    r.screenMs = p.value(screenMs).toDouble(&ok);
    TB_USER_CHECK(ok && r.screenMs > 0) << "--screen-ms must be a positive number of ms, got '"
                                        << p.value(screenMs).toStdString() << "'";
    r.rejectPreempted = p.isSet(rejectPreempted);
    TB_USER_CHECK(!(r.rejectPreempted && r.cacheFlush == tuning::CacheFlushMode::On))
        << "--reject-preempted does not combine with --cache-flush on (a flushed round is timed whole)";
    r.slices = p.value(slices).toInt(&ok);
    TB_USER_CHECK(ok && r.slices >= 1 && r.slices <= 1000)
        << "--slices must be a whole number from 1 to 1000, got '" << p.value(slices).toStdString() << "'";
    TB_USER_CHECK(!(r.rejectPreempted && p.isSet(slices) && r.slices > 1))
        << "--slices does not combine with --reject-preempted (it times its own ~1 ms slices)";
    return j;
}

QStringList TuneCommandLine::arguments(const tuning::TuningJob& j) {
    const tuning::TuningJob d;  // the defaults are left out
    QStringList a = NetworkOptions::arguments(j.network);
    if (!j.target.empty()) a << QStringLiteral("--target") << str(j.target);
    if (!j.targetHost.empty()) a << QStringLiteral("--target-host") << str(j.targetHost);

    const auto& s = j.search;
    if (s.trials != d.search.trials) a << QStringLiteral("--trials") << QString::number(s.trials);
    if (s.perRound != d.search.perRound) a << QStringLiteral("--per-round") << QString::number(s.perRound);
    if (s.earlyStopping != d.search.earlyStopping) a << QStringLiteral("--early-stopping") << QString::number(s.earlyStopping);
    if (s.strategy == tuning::TaskSchedulerOptions::Strategy::RoundRobin)
        a << QStringLiteral("--strategy") << QStringLiteral("round-robin");
    if (s.seed != d.search.seed) a << QStringLiteral("--seed") << QString::number(s.seed);
    if (s.costModel != d.search.costModel) a << QStringLiteral("--cost-model") << str(s.costModel);
    if (!s.seedDefaultSchedule) a << QStringLiteral("--no-default-seed");
    if (j.layoutRewrite) a << QStringLiteral("--layout-rewrite") << QString::number(int(*j.layoutRewrite));
    if (!j.taskIds.empty()) {
        QStringList ids;
        for (int id : j.taskIds) ids << QString::number(id);
        a << QStringLiteral("--tasks") << ids.join(QLatin1Char(','));
    }

    const auto& r = j.runner;
    if (r.kind == tuning::RunnerConfig::Kind::Rpc) a << QStringLiteral("--runner") << QStringLiteral("rpc");
    if (r.trackerHost != d.runner.trackerHost || r.trackerPort != d.runner.trackerPort)
        a << QStringLiteral("--tracker") << QStringLiteral("%1:%2").arg(str(r.trackerHost)).arg(r.trackerPort);
    if (!r.key.empty()) a << QStringLiteral("--key") << str(r.key);
    if (r.number != d.runner.number) a << QStringLiteral("--number") << QString::number(r.number);
    if (r.repeat != d.runner.repeat) a << QStringLiteral("--repeat") << QString::number(r.repeat);
    if (r.minRepeatMs != d.runner.minRepeatMs) a << QStringLiteral("--min-repeat-ms") << QString::number(r.minRepeatMs);
    if (r.timeoutS != d.runner.timeoutS) a << QStringLiteral("--timeout") << QString::number(r.timeoutS, 'g', 17);
    if (r.cacheFlush != d.runner.cacheFlush)
        a << QStringLiteral("--cache-flush") << QString::fromLatin1(tuning::cacheFlushModeName(r.cacheFlush));
    if (r.pipelineSlice != d.runner.pipelineSlice) a << QStringLiteral("--pipeline") << QString::number(r.pipelineSlice);
    if (r.abandonFactor != d.runner.abandonFactor) a << QStringLiteral("--abandon-factor") << QString::number(r.abandonFactor, 'g', 17);
    if (r.screenFactor != d.runner.screenFactor) a << QStringLiteral("--screen") << QString::number(r.screenFactor, 'g', 17);
    if (r.screenMs != d.runner.screenMs) a << QStringLiteral("--screen-ms") << QString::number(r.screenMs, 'g', 17);
    if (r.rejectPreempted) a << QStringLiteral("--reject-preempted");
    if (r.slices != d.runner.slices) a << QStringLiteral("--slices") << QString::number(r.slices);

    a << QStringLiteral("--log") << str(j.logPath);
    if (j.resume) a << QStringLiteral("--resume");
    if (j.latencyLogPath != d.latencyLogPath) a << QStringLiteral("--tsv") << str(j.latencyLogPath);
    return a;
}

}  // namespace tb::cli
