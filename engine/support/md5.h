// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file md5.h
/// \brief MD5 (RFC 1321) of a byte string, as lower-case hex.
///
/// Exists because TVM's workload keys are `md5(PrintDAG(simple_mode=True))` (REFERENCE-TVM §0) and
/// the engine links no Qt (QCryptographicHash) and no OpenSSL. Not for security.

#include <string>
#include <string_view>

namespace tb {

/// MD5 digest of `data` as 32 lower-case hex characters, e.g. md5Hex("") ==
/// "d41d8cd98f00b204e9800998ecf8427e".
std::string md5Hex(std::string_view data);

}  // namespace tb
