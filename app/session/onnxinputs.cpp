// SPDX-License-Identifier: Apache-2.0
#include "app/session/onnxinputs.h"

#include <QCoreApplication>

#include <exception>
#include <map>
#include <string>
#include <vector>

#include "engine/graph/onnx_import.h"
#include "engine/graph/tensor_io.h"

namespace tb::session {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("tb::session::OnnxInputs", text); }

QList<qint64> suggestDims(const QList<qint64>& dims) {
    const std::vector<int64_t> shape = graph::suggestInputShape(std::vector<int64_t>(dims.begin(), dims.end()));
    return QList<qint64>(shape.begin(), shape.end());
}

QString joinDims(const QList<qint64>& dims, const QString& sep, bool markDynamic) {
    QStringList parts;
    for (qint64 d : dims) parts.append(markDynamic && d < 0 ? QStringLiteral("?") : QString::number(d));
    return parts.join(sep);
}

}  // namespace

QString OnnxInput::dimsText() const { return QLatin1Char('[') + joinDims(dims, QStringLiteral(", "), true) + QLatin1Char(']'); }

QString OnnxInput::exampleBinding() const { return name + QLatin1Char('=') + joinDims(example, QStringLiteral(","), false); }

bool OnnxInputs::hasDynamic() const {
    for (const OnnxInput& in : inputs)
        if (in.isDynamic()) return true;
    return false;
}

QString OnnxInputs::exampleBindings() const {
    QStringList parts;
    for (const OnnxInput& in : inputs)
        if (in.isDynamic()) parts.append(in.exampleBinding());
    return parts.join(QStringLiteral("; "));
}

OnnxInputs readOnnxInputs(const QString& path) {
    OnnxInputs out;
    out.path = path;
    try {
        const graph::OnnxModelInfo info = graph::inspectOnnx(path.toStdString());
        for (const graph::OnnxInputInfo& in : info.inputs) {
            OnnxInput i;
            i.name = QString::fromStdString(in.name);
            i.type = QString::fromStdString(graph::onnxTypeName(in.onnxType));
            for (size_t d = 0; d < in.shape.size(); ++d) {
                i.dims.append(in.shape[d] < 0 ? -1 : qint64(in.shape[d]));
                i.dimParams.append(d < in.dimParams.size() ? QString::fromStdString(in.dimParams[d]) : QString());
            }
            i.example = suggestDims(i.dims);
            out.inputs.append(i);
        }
    } catch (const std::exception& e) {
        out.error = QString::fromUtf8(e.what());
        out.inputs.clear();
    }
    return out;
}

QString checkShapeBindings(const OnnxInputs& model, const QStringList& bindings) {
    if (!model.error.isEmpty()) return {};
    const QString example = model.exampleBindings();
    std::map<std::string, std::vector<int64_t>> bound;
    try {
        if (!bindings.isEmpty()) bound = graph::parseShapeMap(bindings.join(QLatin1Char(';')).toStdString());
    } catch (const std::exception& e) {
        return example.isEmpty() ? QString::fromUtf8(e.what())
                                 : tr("%1 (for this model, e.g. %2)").arg(QString::fromUtf8(e.what()), example);
    }
    QStringList names;
    for (const OnnxInput& in : model.inputs) names.append(in.name);
    for (const auto& [name, dims] : bound)
        if (!names.contains(QString::fromStdString(name)))
            return tr("'%1' is not an input of this model (its inputs: %2)")
                .arg(QString::fromStdString(name), names.join(QStringLiteral(", ")));
    for (const OnnxInput& in : model.inputs) {
        const auto it = bound.find(in.name.toStdString());
        if (it == bound.end()) {
            if (!in.isDynamic()) continue;
            return tr("Input '%1' has dynamic dimensions %2: bind them, e.g. %3")
                .arg(in.name, in.dimsText(), in.exampleBinding());
        }
        const std::vector<int64_t>& given = it->second;
        bool fits = qsizetype(given.size()) == in.dims.size();
        for (size_t d = 0; fits && d < given.size(); ++d) fits = in.dims[qsizetype(d)] < 0 || in.dims[qsizetype(d)] == given[d];
        if (!fits) {
            QList<qint64> g(given.begin(), given.end());
            return tr("Input '%1' is declared %2; the binding %3 does not fit it (e.g. %4)")
                .arg(in.name, in.dimsText(), joinDims(g, QStringLiteral(","), false), in.exampleBinding());
        }
    }
    return {};
}

}  // namespace tb::session
