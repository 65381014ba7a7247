// SPDX-License-Identifier: Apache-2.0
// `tunebench-cli log summary|distill|check`: inspect and reduce tuning logs of either TVM format.
//   log summary FILE [--json] [--flops FLOPS.json]   counts, errors by TVM name, best per workload,
//                                                    unparsable lines with their numbers
//   log distill -i IN [-o OUT]                       TVM `measure_record --mode distill` (default
//                                                    OUT = IN.best.json) or, for an AutoTVM log,
//                                                    `autotvm.record --mode pick` (IN.best.log)
//   log check FILE [--json]                          AutoTVM: decode each record's config index in
//                                                    the rebuilt space of its template, compare
//                                                    with the record's entity (engine/autotvm)
#include <QCommandLineParser>

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "engine/autotvm/log_check.h"
#include "engine/record/history_best.h"
#include "engine/record/json_format.h"
#include "engine/record/log_summary.h"
#include "engine/record/record_io.h"
#include "engine/support/error.h"

namespace tb::cli {

namespace {

using namespace tb::record;

void printLogUsage(FILE* out) {
    std::fprintf(out,
                 "Usage: tunebench-cli log <action> [options]\n\n"
                 "Actions:\n"
                 "  summary FILE [--json] [--flops F]  records, errors, best cost per workload, bad lines\n"
                 "  distill -i IN [-o OUT]             keep the best record per workload and target\n"
                 "  check FILE [--json]                AutoTVM: does each record's config index decode to\n"
                 "                                     its entity in our rebuilt template space?\n\n"
                 "summary and distill work on auto_scheduler (.json) and AutoTVM (.log) logs.\n");
}

std::string cut(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

FlopMap readFlops(const QString& path) {
    FlopMap flops;
    if (path.isEmpty()) return flops;
    const std::string text = readTextFile(path.toStdString());
    const auto j = nlohmann::json::parse(text, nullptr, false);
    TB_USER_CHECK(j.is_object()) << "'" << path.toStdString() << "' must be a JSON object {workload key: FLOPs}";
    for (auto it = j.begin(); it != j.end(); ++it) {
        TB_USER_CHECK(it.value().is_number()) << "FLOPs of '" << it.key() << "' must be a number";
        flops[it.key()] = it.value().get<double>();
    }
    return flops;
}

nlohmann::ordered_json summaryJson(const std::string& path, const LogSummary& s) {
    using oj = nlohmann::ordered_json;
    oj j;
    j["file"] = path;
    j["format"] = logFormatName(s.format);
    j["total_lines"] = s.totalLines;
    j["records"] = s.records;
    j["valid"] = s.valid;
    j["comment_lines"] = s.commentLines;
    j["blank_lines"] = s.blankLines;
    oj errors = oj::array();
    for (const auto& [no, count] : s.errorCounts)
        errors.push_back({{"error_no", no}, {"name", measureErrorName(no)}, {"count", count}});
    j["errors"] = errors;
    oj versions = oj::object();
    for (const auto& [v, count] : s.versions) versions[v] = count;
    j["versions"] = versions;
    if (s.format == LogFormat::AutoTvm) j["v01_records"] = s.v01Records;
    oj wls = oj::array();
    for (const auto& w : s.workloads) {
        oj o;
        o["key"] = w.key;
        o["name"] = w.name;
        o["records"] = w.records;
        o["valid"] = w.valid;
        o["best_cost_s"] = w.valid ? oj(w.bestCost) : oj(nullptr);
        o["best_line"] = w.bestLine;
        o["best_target"] = w.bestTarget;
        o["flop"] = w.flop >= 0 ? oj(w.flop) : oj(nullptr);
        o["gflops"] = w.gflops >= 0 ? oj(w.gflops) : oj(nullptr);
        wls.push_back(o);
    }
    j["workloads"] = wls;
    oj bad = oj::array();
    for (const auto& b : s.badLines) bad.push_back({{"line", b.line}, {"reason", b.reason}, {"torn", b.torn}, {"text", b.text}});
    j["unparsable"] = bad;
    return j;
}

void printSummary(const std::string& path, const LogSummary& s) {
    std::printf("log: %s\n", path.c_str());
    std::string versions;
    for (const auto& [v, count] : s.versions) versions += (versions.empty() ? "" : ", ") + v + " x" + std::to_string(count);
    std::printf("format: %s%s%s%s\n", logFormatName(s.format), versions.empty() ? "" : " (version ", versions.c_str(),
                versions.empty() ? "" : ")");
    std::printf("lines: %d (%d records, %d comments, %d blank, %d unparsable)\n", s.totalLines, s.records, s.commentLines,
                s.blankLines, int(s.badLines.size()));
    std::printf("records: %d, valid: %d\n", s.records, s.valid);
    if (s.v01Records)
        std::printf("note: %d records in the old AutoTVM log format v0.1 (TVM >= 0.7 skips them; shown here)\n",
                    s.v01Records);
    if (!s.errorCounts.empty()) {
        std::printf("results by error_no:\n");
        for (const auto& [no, count] : s.errorCounts)
            std::printf("  %-24s %7d\n", (measureErrorName(no) + " (" + std::to_string(no) + ")").c_str(), count);
    }
    std::printf("workloads: %zu\n", s.workloads.size());
    if (!s.workloads.empty()) {
        std::printf("  %4s  %-34s %-40s %7s %7s %12s %9s %7s\n", "#", "name", "args", "records", "valid", "best (ms)",
                    "GFLOPS", "line");
        for (size_t i = 0; i < s.workloads.size(); ++i) {
            const auto& w = s.workloads[i];
            // The key minus its name: the (possibly nested) argument list.
            std::string args = w.key;
            if (const size_t p = args.find(w.name); p != std::string::npos) {
                args = args.substr(p + w.name.size());
                while (!args.empty() && (args.front() == '"' || args.front() == ',' || args.front() == ' ')) args.erase(0, 1);
                if (!args.empty() && args.back() == ']') args.pop_back();
            }
            char best[32] = "-", gflops[32] = "-";
            if (w.valid) std::snprintf(best, sizeof best, "%.4f", w.bestCost * 1e3);
            if (w.gflops >= 0) std::snprintf(gflops, sizeof gflops, "%.2f", w.gflops);
            std::printf("  %4zu  %-34s %-40s %7d %7d %12s %9s %7d\n", i, cut(w.name, 34).c_str(), cut(args, 40).c_str(),
                        w.records, w.valid, best, gflops, w.bestLine);
        }
    }
    if (!s.badLines.empty()) {
        std::printf("unparsable lines: %zu\n", s.badLines.size());
        for (const auto& b : s.badLines) std::printf("  line %d: %s\n", b.line, b.reason.c_str());
    }
}

int runSummary(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Summarize a tuning log (auto_scheduler or AutoTVM)."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("file"), QStringLiteral("The log file."));
    p.addOption({QStringLiteral("json"), QStringLiteral("Print the summary as JSON.")});
    p.addOption({QStringLiteral("flops"),
                 QStringLiteral("A JSON object {workload key: FLOP count} to report GFLOPS."), QStringLiteral("file")});
    p.process(args);
    const QStringList pos = p.positionalArguments();
    TB_USER_CHECK(pos.size() == 1) << "log summary takes one FILE (got " << pos.size() << " arguments)";
    const std::string path = pos[0].toStdString();
    const LogSummary s = summarizeFile(path, readFlops(p.value(QStringLiteral("flops"))));
    if (p.isSet(QStringLiteral("json")))
        std::printf("%s\n", summaryJson(path, s).dump(2).c_str());
    else
        printSummary(path, s);
    return 0;
}

int runDistill(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(
        QStringLiteral("Keep the best valid record per workload and target key/model (TVM distill / pick_best)."));
    p.addHelpOption();
    p.addOption({{QStringLiteral("i"), QStringLiteral("input")}, QStringLiteral("Input log."), QStringLiteral("file")});
    p.addOption({{QStringLiteral("o"), QStringLiteral("output")},
                 QStringLiteral("Output log (default IN.best.json, IN.best.log for AutoTVM); merged if it exists "
                                "(auto_scheduler, as TVM)."),
                 QStringLiteral("file")});
    p.process(args);
    TB_USER_CHECK(p.isSet(QStringLiteral("i"))) << "log distill needs -i IN";
    TB_USER_CHECK(p.positionalArguments().isEmpty())
        << "unexpected argument '" << p.positionalArguments().front().toStdString() << "'";
    const std::string in = p.value(QStringLiteral("i")).toStdString();
    const LogFormat format = detectLogFormat(readTextFile(in));
    const bool autotvm = format == LogFormat::AutoTvm;
    std::string out = p.value(QStringLiteral("o")).toStdString();
    if (out.empty()) out = in + (autotvm ? ".best.log" : ".best.json");
    TB_USER_CHECK(out != in) << "the output would overwrite the input '" << in << "'";
    const DistillReport rep = autotvm ? pickBestFile(in, out) : distillRecordFile(in, out);
    for (const auto& b : rep.inputBadLines)
        std::fprintf(stderr, "warning: %s:%d: skipped: %s\n", in.c_str(), b.line, b.reason.c_str());
    for (const auto& b : rep.existingBadLines)
        std::fprintf(stderr, "warning: %s:%d: skipped: %s\n", out.c_str(), b.line, b.reason.c_str());
    std::printf("Extract %d best records from %s to %s (%s; %d input records%s)\n", rep.written, in.c_str(), out.c_str(),
                logFormatName(autotvm ? LogFormat::AutoTvm : LogFormat::AutoScheduler), rep.inputRecords,
                rep.existingRecords ? (", " + std::to_string(rep.existingRecords) + " already in the output").c_str() : "");
    return 0;
}

nlohmann::ordered_json checkJson(const autotvm::LogCheckReport& r) {
    using oj = nlohmann::ordered_json;
    oj j;
    j["records"] = r.records;
    j["checked"] = r.checked;
    j["agree"] = r.agree;
    j["disagree"] = r.disagree;
    oj templates = oj::object();
    for (const auto& [name, c] : r.templates)
        templates[name] = {{"records", c.records}, {"checked", c.checked}, {"agree", c.agree}};
    j["templates"] = templates;
    oj unknown = oj::array();
    for (const auto& [name, count] : r.unknownTemplates) unknown.push_back(name);
    j["unknown_templates"] = unknown;
    return j;
}

void printNotes(const char* title, const std::vector<autotvm::CheckNote>& notes) {
    constexpr size_t kShown = 5;
    if (notes.empty()) return;
    std::printf("%s (%s%zu):\n", title, notes.size() > kShown ? "first 5 of " : "", notes.size());
    for (size_t i = 0; i < notes.size() && i < kShown; ++i)
        std::printf("  line %d: %s index %lld: %s\n", notes[i].line, notes[i].taskName.c_str(),
                    static_cast<long long>(notes[i].index), notes[i].reason.c_str());
}

void printCheck(const std::string& path, const autotvm::LogCheckReport& r) {
    std::printf("log: %s\n", path.c_str());
    std::printf("records: %d, checked: %d, agree: %d, disagree: %d\n", r.records, r.checked, r.agree, r.disagree);
    if (!r.templates.empty()) {
        std::printf("  %-36s %8s %8s %8s\n", "template", "records", "checked", "agree");
        for (const auto& [name, c] : r.templates)
            std::printf("  %-36s %8d %8d %8d\n", name.c_str(), c.records, c.checked, c.agree);
    }
    if (!r.unknownTemplates.empty()) {
        std::printf("templates not implemented (records not checked):\n");
        for (const auto& [name, count] : r.unknownTemplates) std::printf("  %-36s %8d\n", name.c_str(), count);
    }
    if (r.v01Records)
        std::printf("v0.1 records (old format, never checked): %d\n", r.v01Records);
    if (!r.badLines.empty()) std::printf("lines that are not AutoTVM records: %zu\n", r.badLines.size());
    printNotes("disagreements", r.disagreements);
    printNotes("not checked", r.unchecked);
}

int runCheck(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Decode each AutoTVM record's config index in the rebuilt space of its template and compare it "
        "with the record's entity (an explicit outermost split factor equals TVM's -1 when the product matches)."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("file"), QStringLiteral("The AutoTVM log."));
    p.addOption({QStringLiteral("json"), QStringLiteral("Print the counts as JSON.")});
    p.process(args);
    const QStringList pos = p.positionalArguments();
    TB_USER_CHECK(pos.size() == 1) << "log check takes one FILE (got " << pos.size() << " arguments)";
    const std::string path = pos[0].toStdString();
    const autotvm::LogCheckReport r = autotvm::checkLogFile(path);
    if (p.isSet(QStringLiteral("json")))
        std::printf("%s\n", dumpJson(checkJson(r), JsonStyle::Python).c_str());
    else
        printCheck(path, r);
    return 0;
}

}  // namespace

int runLog(const QStringList& args) {
    if (args.size() < 2 || args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h")) {
        printLogUsage(args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 2 : 0;
    }
    const QString action = args[1];
    QStringList sub = args.mid(1);
    sub[0] = args[0] + QLatin1Char(' ') + action;
    if (action == QLatin1String("summary")) return runSummary(sub);
    if (action == QLatin1String("distill")) return runDistill(sub);
    if (action == QLatin1String("check")) return runCheck(sub);
    std::fprintf(stderr, "error: unknown log action '%s'\n\n", qPrintable(action));
    printLogUsage(stderr);
    return 2;
}

}  // namespace tb::cli
