// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file error.h
/// \brief The engine's two kinds of failure.
///
/// A `UserError` means the input was wrong (a malformed model, log line, target string, schedule):
/// its message names the input and the problem, and callers show it to the user. An
/// `InternalError` means an invariant of the engine broke (a bug): it is raised by `TB_CHECK`, as
/// TVM's `ICHECK` and Halide's `internal_assert`. Expected measurement failures are neither: they
/// are data (`MeasureResult::error_no`), see measure/.

#include <sstream>
#include <stdexcept>
#include <string>

namespace tb {

/// Bad input from the user or a file. what() is a complete, user-facing English sentence.
class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

/// A broken invariant inside the engine (a bug). what() carries file:line and the condition.
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

namespace detail {
/// Collects `<<` pieces and throws E when destroyed (used by TB_CHECK / TB_USER_CHECK).
template <class E>
class Thrower {
public:
    Thrower(const char* file, int line, const char* cond) {
        if (cond) m_ss << file << ":" << line << ": check failed: " << cond << ": ";
    }
    template <class T>
    Thrower& operator<<(const T& v) {
        m_ss << v;
        return *this;
    }
    [[noreturn]] ~Thrower() noexcept(false) { throw E(m_ss.str()); }

private:
    std::ostringstream m_ss;
};
}  // namespace detail

}  // namespace tb

/// Invariant check: `TB_CHECK(a < b) << "details";` throws tb::InternalError when false.
#define TB_CHECK(cond) \
    if (cond) {        \
    } else             \
        ::tb::detail::Thrower<::tb::InternalError>(__FILE__, __LINE__, #cond)

/// Input check: `TB_USER_CHECK(ok) << "model.onnx: node 'x' has no input";` throws tb::UserError.
#define TB_USER_CHECK(cond) \
    if (cond) {             \
    } else                  \
        ::tb::detail::Thrower<::tb::UserError>(nullptr, 0, nullptr)

/// Unconditional user error: `TB_USER_ERROR() << "unknown network '" << name << "'";`
#define TB_USER_ERROR() ::tb::detail::Thrower<::tb::UserError>(nullptr, 0, nullptr)
