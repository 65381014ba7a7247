// SPDX-License-Identifier: Apache-2.0
#include "widgets/models/workloadtext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QRegularExpression>
#include <QStringList>

namespace tb::models {

namespace {

QJsonArray parseKey(const QString& key) {
    const QJsonDocument doc = QJsonDocument::fromJson(key.toUtf8());
    return doc.isArray() ? doc.array() : QJsonArray();
}

QString number(const QJsonValue& v) {
    const double d = v.toDouble();
    return d == double(qint64(d)) ? QString::number(qint64(d)) : QString::number(d, 'g', 6);
}

bool isIntList(const QJsonValue& v) {
    if (!v.isArray() || v.toArray().isEmpty()) return false;
    for (const QJsonValue& e : v.toArray())
        if (!e.isDouble()) return false;
    return true;
}

QString shape(const QJsonArray& dims) {
    QStringList parts;
    for (const QJsonValue& d : dims) parts << number(d);
    return parts.join(QChar(0x00D7));  // ×
}

QString value(const QJsonValue& v) {
    if (v.isDouble()) return number(v);
    if (v.isString()) return v.toString();
    if (v.isBool()) return v.toBool() ? QStringLiteral("True") : QStringLiteral("False");
    if (v.isNull()) return QStringLiteral("None");
    if (v.isArray()) {
        const QJsonArray a = v.toArray();
        // AutoTVM tensors: ["TENSOR", [shape], "dtype"].
        if (a.size() == 3 && a[0].toString() == QLatin1String("TENSOR") && a[1].isArray()) return shape(a[1].toArray());
        QStringList parts;
        for (const QJsonValue& e : a) parts << value(e);
        return QLatin1Char('(') + parts.join(QStringLiteral(", ")) + QLatin1Char(')');
    }
    return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
}

bool isDagHash(const QString& s) {
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{32}$"));
    return hex.match(s).hasMatch();
}

}  // namespace

QString workloadArgsText(const QString& workloadKey) {
    const QJsonArray key = parseKey(workloadKey);
    if (key.size() < 2) return {};
    QJsonArray args;
    for (qsizetype i = 1; i < key.size(); ++i) args.append(key[i]);
    // auto_scheduler: one shape per io tensor, inputs first, the output last.
    bool shapes = true;
    for (const QJsonValue& a : args) shapes = shapes && isIntList(a);
    if (shapes) {
        QStringList parts;
        const bool io = args.size() >= 2 && isDagHash(key[0].toString());
        for (qsizetype i = 0; i < args.size(); ++i) {
            const QJsonArray dims = args[i].toArray();
            // A per-channel operand of the fused epilogue (bias, scale: 1×1×1×128) is its channel
            // count, which keeps the shapes that tell tasks apart within a column's width.
            bool broadcast = io && i + 1 < args.size() && dims.size() >= 3;
            for (qsizetype d = 0; broadcast && d + 1 < dims.size(); ++d) broadcast = dims[d].toDouble() == 1;
            parts << (broadcast ? number(dims.last()) : shape(dims));
        }
        if (io) {
            const QString out = parts.takeLast();
            return parts.join(QStringLiteral(", ")) + QStringLiteral(" → ") + out;
        }
        return parts.join(QStringLiteral(", "));
    }
    QStringList parts;
    for (const QJsonValue& a : args) parts << value(a);
    return parts.join(QStringLiteral(", "));
}

QString workloadNameText(const QString& workloadKey) {
    const QJsonArray key = parseKey(workloadKey);
    if (key.isEmpty() || !key[0].isString()) return workloadKey;
    const QString name = key[0].toString();
    return isDagHash(name) ? name.left(8) + QChar(0x2026) : name;
}

QString workloadLabel(const QString& description, const QString& workloadKey) {
    const QString head = description.isEmpty() ? workloadNameText(workloadKey) : description;
    const QString args = workloadArgsText(workloadKey);
    return args.isEmpty() ? head : head + QStringLiteral("  ") + args;
}

}  // namespace tb::models
