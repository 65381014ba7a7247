// SPDX-License-Identifier: Apache-2.0
#include "app/cli/network_loader.h"

#include <QFileInfo>

#include "engine/support/error.h"

namespace tb::cli {

tuning::NetworkSource NetworkOptions::source(const QCommandLineParser& p) const {
    TB_USER_CHECK(p.isSet(network) != p.isSet(onnx)) << "give exactly one of --network NAME or --onnx FILE";
    tuning::NetworkSource s;
    bool ok = false;
    s.batch = p.value(batch).toLongLong(&ok);
    TB_USER_CHECK(ok && s.batch >= 1) << "--batch must be a positive integer, got '" << p.value(batch).toStdString() << "'";
    s.layout = p.value(layout).toStdString();
    TB_USER_CHECK(s.layout == "NHWC" || s.layout == "NCHW") << "--layout must be NHWC or NCHW, got '" << s.layout << "'";
    s.winograd = !p.isSet(noWinograd);
    s.winogradAlternatives = p.isSet(winogradOrDirect);
    TB_USER_CHECK(s.winograd || !s.winogradAlternatives) << "--winograd-or-direct and --no-winograd contradict";
    if (p.isSet(network)) {
        TB_USER_CHECK(!p.isSet(shape)) << "--shape applies to --onnx models only";
        s.zooName = p.value(network).toStdString();
    } else {
        s.onnxPath = p.value(onnx).toStdString();
        for (const QString& v : p.values(shape)) s.shapes.push_back(v.toStdString());
    }
    return s;
}

QStringList NetworkOptions::arguments(const tuning::NetworkSource& s) {
    QStringList a;
    if (s.onnxPath.empty()) {
        a << QStringLiteral("--network") << QString::fromStdString(s.zooName);
    } else {
        a << QStringLiteral("--onnx") << QString::fromStdString(s.onnxPath);
        for (const auto& v : s.shapes) a << QStringLiteral("--shape") << QString::fromStdString(v);
    }
    const tuning::NetworkSource defaults;
    if (s.batch != defaults.batch) a << QStringLiteral("--batch") << QString::number(s.batch);
    if (s.layout != defaults.layout) a << QStringLiteral("--layout") << QString::fromStdString(s.layout);
    if (!s.winograd) a << QStringLiteral("--no-winograd");
    if (s.winogradAlternatives) a << QStringLiteral("--winograd-or-direct");
    return a;
}

QString NetworkOptions::name(const QCommandLineParser& p) const {
    return p.isSet(network) ? p.value(network) : QFileInfo(p.value(onnx)).completeBaseName();
}

}  // namespace tb::cli
