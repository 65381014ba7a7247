// SPDX-License-Identifier: Apache-2.0
#include "app/cli/network_loader.h"

#include <QFileInfo>

#include "engine/graph/onnx_import.h"
#include "engine/graph/passes/passes.h"
#include "engine/graph/zoo.h"
#include "engine/support/error.h"

namespace tb::cli {

graph::Graph NetworkOptions::load(const QCommandLineParser& p) const {
    TB_USER_CHECK(p.isSet(network) != p.isSet(onnx)) << "give exactly one of --network NAME or --onnx FILE";
    bool ok = false;
    int64_t b = p.value(batch).toLongLong(&ok);
    TB_USER_CHECK(ok && b >= 1) << "--batch must be a positive integer, got '" << p.value(batch).toStdString() << "'";
    const std::string lay = p.value(layout).toStdString();
    TB_USER_CHECK(lay == "NHWC" || lay == "NCHW") << "--layout must be NHWC or NCHW, got '" << lay << "'";
    if (p.isSet(network)) {
        TB_USER_CHECK(!p.isSet(shape)) << "--shape applies to --onnx models only";
        return graph::makeNetwork(p.value(network).toStdString(), b, lay);
    }
    graph::OnnxImportOptions opt;
    for (const QString& s : p.values(shape))
        for (auto& [k, v] : graph::parseShapeMap(s.toStdString())) opt.inputShapes[k] = v;
    graph::Graph g = graph::importOnnx(p.value(onnx).toStdString(), opt);
    if (lay == "NHWC") g = graph::convertLayout(g, "NHWC");
    return g;
}

QString NetworkOptions::name(const QCommandLineParser& p) const {
    return p.isSet(network) ? p.value(network) : QFileInfo(p.value(onnx)).completeBaseName();
}

}  // namespace tb::cli
