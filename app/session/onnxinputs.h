// SPDX-License-Identifier: Apache-2.0
#pragma once
// What an ONNX model declares about its graph inputs, for the session panel: the names, the
// declared dims (dynamic ones marked), a suggested binding of the dynamic dims, and the check of
// the panel's "Input shapes" text against the model. Read through the engine's ONNX importer
// (graph::inspectOnnx, graph::parseShapeMap) without importing the model; part of the session
// bridge, so widgets see only Qt value types.

#include <QList>
#include <QString>
#include <QStringList>

namespace tb::session {

/// One graph input (not an initializer) of an ONNX model, as declared.
struct OnnxInput {
    QString name;
    QString type;           ///< ONNX element type name, e.g. "float" (graph::onnxTypeName)
    QList<qint64> dims;     ///< declared dims; -1 = dynamic (or unknown)
    QStringList dimParams;  ///< symbolic names of the dynamic dims ("p2o.DynamicDimension.0"); "" for static ones
    /// The dims with every dynamic one replaced by a suggestion: 1 for the batch (first) dim; for
    /// NCHW images 640 × 640 when both spatial dims are dynamic, and 320 for a dynamic width next to
    /// a static height below 100 (PaddleOCR's text-line input 3×48×320); 3 for dynamic channels;
    /// 128 for any other dim. A suggestion to edit, not a fact about the model.
    QList<qint64> example;

    bool isDynamic() const { return dims.contains(-1); }
    /// "[?, 3, 48, ?]"
    QString dimsText() const;
    /// "x=1,3,48,320" (the syntax of the CLI's --shape and of graph::parseShapeMap)
    QString exampleBinding() const;
};

/// The inputs of one model file.
struct OnnxInputs {
    QString path;
    QString error;  ///< non-empty when the file could not be read as an ONNX model
    QList<OnnxInput> inputs;

    bool hasDynamic() const;
    /// The suggested bindings of the inputs with dynamic dims, "x=1,3,640,640; y=1,128"; empty
    /// when every input is static (nothing to bind).
    QString exampleBindings() const;
};

/// Reads the declared inputs of the ONNX model at `path` (graph::inspectOnnx: the protobuf is
/// parsed, nothing is imported). Never throws: a missing, empty or malformed file gives `error`.
OnnxInputs readOnnxInputs(const QString& path);

/// Checks the panel's shape bindings (`bindings`: "name=d0,d1,..." entries, each may itself hold
/// several separated by ';') against the model: every input with dynamic dims bound, with its
/// rank and static dims, and no name that is not an input. Returns an empty string when they fit
/// (or when the model could not be read: the job then fails with the importer's message), else a
/// translated message naming the input and this model's example binding.
QString checkShapeBindings(const OnnxInputs& model, const QStringList& bindings);

}  // namespace tb::session
