// SPDX-License-Identifier: Apache-2.0
#include "engine/te/printer.h"

#include <sstream>

#include "engine/support/error.h"
#include "engine/te/operation.h"

namespace tb::te {
namespace {

void print(std::ostream& os, const Expr& e);

void printInfix(std::ostream& os, const BinaryNode* n, const char* op) {
    os << '(';
    print(os, n->a);
    os << op;
    print(os, n->b);
    os << ')';
}
void printCall(std::ostream& os, const char* name, const Expr& a, const Expr& b) {
    os << name << '(';
    print(os, a);
    os << ", ";
    print(os, b);
    os << ')';
}

void print(std::ostream& os, const Expr& e) {
    TB_CHECK(e) << "printing a null expression";
    switch (e.kind()) {
        case ExprKind::IntImm: {
            auto* n = e.as<IntImmNode>();
            if (n->dtype == DType::Int32)
                os << n->value;
            else
                os << '(' << dtypeName(n->dtype) << ')' << n->value;
            return;
        }
        case ExprKind::FloatImm: {
            auto* n = e.as<FloatImmNode>();
            std::ostringstream ss;  // default stream state: %g with 6 significant digits
            ss << n->value;
            os << ss.str();
            if (n->dtype == DType::Float32) os << 'f';
            return;
        }
        case ExprKind::Var:
            os << e.as<VarNode>()->name;
            return;
        case ExprKind::Add: return printInfix(os, e.as<BinaryNode>(), " + ");
        case ExprKind::Sub: return printInfix(os, e.as<BinaryNode>(), " - ");
        case ExprKind::Mul: return printInfix(os, e.as<BinaryNode>(), "*");
        case ExprKind::Div: return printInfix(os, e.as<BinaryNode>(), "/");
        case ExprKind::Mod: return printInfix(os, e.as<BinaryNode>(), " % ");
        case ExprKind::EQ: return printInfix(os, e.as<BinaryNode>(), " == ");
        case ExprKind::NE: return printInfix(os, e.as<BinaryNode>(), " != ");
        case ExprKind::LT: return printInfix(os, e.as<BinaryNode>(), " < ");
        case ExprKind::LE: return printInfix(os, e.as<BinaryNode>(), " <= ");
        case ExprKind::GT: return printInfix(os, e.as<BinaryNode>(), " > ");
        case ExprKind::GE: return printInfix(os, e.as<BinaryNode>(), " >= ");
        case ExprKind::And: return printInfix(os, e.as<BinaryNode>(), " && ");
        case ExprKind::Or: return printInfix(os, e.as<BinaryNode>(), " || ");
        case ExprKind::FloorDiv: { auto* n = e.as<BinaryNode>(); return printCall(os, "floordiv", n->a, n->b); }
        case ExprKind::FloorMod: { auto* n = e.as<BinaryNode>(); return printCall(os, "floormod", n->a, n->b); }
        case ExprKind::Min: { auto* n = e.as<BinaryNode>(); return printCall(os, "min", n->a, n->b); }
        case ExprKind::Max: { auto* n = e.as<BinaryNode>(); return printCall(os, "max", n->a, n->b); }
        case ExprKind::Not:
            os << '!';
            print(os, e.as<NotNode>()->a);
            return;
        case ExprKind::Select: {
            auto* n = e.as<SelectNode>();
            os << "select(";
            print(os, n->cond);
            os << ", ";
            print(os, n->t);
            os << ", ";
            print(os, n->f);
            os << ')';
            return;
        }
        case ExprKind::Cast:
            os << dtypeName(e.dtype()) << '(';
            print(os, e.as<CastNode>()->value);
            os << ')';
            return;
        case ExprKind::Call: {
            auto* n = e.as<CallNode>();
            os << n->op << '(';
            for (size_t i = 0; i < n->args.size(); ++i) {
                if (i) os << ", ";
                print(os, n->args[i]);
            }
            os << ')';
            return;
        }
        case ExprKind::Load: {
            auto* n = e.as<LoadNode>();
            os << n->op->name;
            if (n->valueIndex > 0) os << ".v" << n->valueIndex;
            os << '[';
            for (size_t i = 0; i < n->indices.size(); ++i) {
                if (i) os << ", ";
                print(os, n->indices[i]);
            }
            os << ']';
            return;
        }
        case ExprKind::Reduce: {
            // TVM: reduce(combiner=comm_reducer(...), source=[...], init=[], axis=[...], where=..., value_index=0)
            auto* n = e.as<ReduceNode>();
            const char* comb = n->combiner == ReduceKind::Sum ? "sum" : n->combiner == ReduceKind::Max ? "max" : "min";
            os << "reduce(combiner=" << comb << ", source=[";
            print(os, n->source);
            os << "], axis=[";
            for (size_t i = 0; i < n->axis.size(); ++i) {
                if (i) os << ", ";
                os << n->axis[i].name();
            }
            os << "])";
            return;
        }
    }
}

}  // namespace

std::string toString(const Expr& e) {
    std::ostringstream os;
    print(os, e);
    return os.str();
}

std::string shapeToString(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    return s + "]";
}

}  // namespace tb::te
