// SPDX-License-Identifier: Apache-2.0
#pragma once
// Shared by the CLI commands that take a network: `--network NAME | --onnx FILE` with --batch,
// --layout, --shape and --no-winograd, turned into the engine's NetworkSource and its graph
// (tuning::loadNetwork: ONNX models converted to NHWC when asked).

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>

#include "engine/graph/graph.h"
#include "engine/tuning/tuning_job.h"

namespace tb::cli {

struct NetworkOptions {
    QCommandLineOption network{QStringLiteral("network"), QStringLiteral("Zoo network (mobilenet, resnet-18, ...)."),
                               QStringLiteral("NAME")};
    QCommandLineOption onnx{QStringLiteral("onnx"), QStringLiteral("ONNX model file."), QStringLiteral("FILE")};
    QCommandLineOption batch{QStringLiteral("batch"), QStringLiteral("Batch size of a zoo network (default 1)."),
                             QStringLiteral("N"), QStringLiteral("1")};
    QCommandLineOption layout{QStringLiteral("layout"),
                              QStringLiteral("NHWC or NCHW (default NHWC); NHWC converts an NCHW ONNX model."),
                              QStringLiteral("LAYOUT"), QStringLiteral("NHWC")};
    QCommandLineOption shape{QStringLiteral("shape"), QStringLiteral("Bind an ONNX input shape, e.g. x=1,3,640,640."),
                             QStringLiteral("NAME=DIMS")};
    QCommandLineOption noWinograd{
        QStringLiteral("no-winograd"),
        QStringLiteral("Keep NHWC 3x3 convolutions direct where TVM rewrites them to winograd (the tasks then "
                       "differ from TVM's; tune, compile and run must agree).")};
    QCommandLineOption winogradOrDirect{
        QStringLiteral("winograd-or-direct"),
        QStringLiteral("Also tune, beside each winograd task, the direct conv2d task of the same convolutions "
                       "(appended after TVM's tasks); compile then runs whichever has the faster record, per "
                       "convolution. Not a TVM option.")};
    QList<QCommandLineOption> options() const {
        return {network, onnx, batch, layout, shape, noWinograd, winogradOrDirect};
    }
    void addTo(QCommandLineParser& p) const { p.addOptions(options()); }
    /// False when --no-winograd is given (graph::AlterLayoutOptions::winograd).
    bool winograd(const QCommandLineParser& p) const { return !p.isSet(noWinograd); }
    /// The network the options name. Throws tb::UserError naming the bad option.
    tuning::NetworkSource source(const QCommandLineParser& p) const;
    /// The options naming `source` (--batch, --layout, --no-winograd, --winograd-or-direct only when
    /// not the default).
    static QStringList arguments(const tuning::NetworkSource& source);
    /// The graph the options name. Throws tb::UserError naming the bad option.
    graph::Graph load(const QCommandLineParser& p) const { return tuning::loadNetwork(source(p)); }
    /// "mobilenet" or the ONNX file's base name, for messages.
    QString name(const QCommandLineParser& p) const;
};

}  // namespace tb::cli
