// SPDX-License-Identifier: Apache-2.0
#include "engine/record/record_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/support/error.h"

namespace tb::record {

namespace {

std::string cut(std::string_view s) {
    constexpr size_t kMax = 120;
    return s.size() <= kMax ? std::string(s) : std::string(s.substr(0, kMax)) + "...";
}

// A line longer than kMaxLogLineBytes: the input is not a tuning log (or is hostile).
void checkLineLength(size_t bytes, int lineNo, std::string_view source) {
    TB_USER_CHECK(bytes <= kMaxLogLineBytes)
        << "line " << lineNo << " of " << source << " is longer than " << (kMaxLogLineBytes >> 20)
        << " MiB, more than a tuning log line may have (TVM writes a few kB per record): not a tuning log";
}

// Walks the lines of `text` in TVM's reader order and hands each candidate record line to
// `parse`, which returns normally or throws tb::UserError.
template <class Record, class Parse>
LogContents<Record> parseLines(std::string_view text, Parse parse) {
    LogContents<Record> out;
    size_t pos = 0;
    int lineNo = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        const bool hasNewline = end != std::string_view::npos;
        if (!hasNewline) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = hasNewline ? end + 1 : end;
        ++lineNo;
        checkLineLength(line.size(), lineNo, "the log text");
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) {
            ++out.blankLines;
            continue;
        }
        if (line.front() == '#' || line.front() == ' ') {
            ++out.commentLines;
            continue;
        }
        try {
            out.records.push_back(parse(line));
            out.recordLines.push_back(lineNo);
        } catch (const UserError& e) {
            BadLine bad;
            bad.line = lineNo;
            bad.torn = !hasNewline;
            bad.reason = bad.torn ? std::string("torn last line (no newline at the end: the writer was interrupted?): ") +
                                        e.what()
                                  : e.what();
            bad.text = cut(line);
            out.badLines.push_back(std::move(bad));
        }
    }
    out.totalLines = lineNo;
    return out;
}

std::string errnoText() { return std::strerror(errno); }

void writeAll(int fd, const std::string& path, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            TB_USER_ERROR() << "cannot write to the log '" << path << "': " << errnoText();
        }
        data.remove_prefix(size_t(n));
    }
}

}  // namespace

const char* logFormatName(LogFormat format) {
    switch (format) {
    case LogFormat::AutoScheduler: return "auto_scheduler";
    case LogFormat::AutoTvm: return "autotvm";
    case LogFormat::Unknown: break;
    }
    return "unknown";
}

LogContents<MeasureRecord> parseMeasureRecords(std::string_view text) {
    return parseLines<MeasureRecord>(text, [](std::string_view l) { return MeasureRecord::fromLine(l); });
}

LogContents<AutoTvmRecord> parseAutoTvmRecords(std::string_view text) {
    return parseLines<AutoTvmRecord>(text, [](std::string_view l) { return AutoTvmRecord::fromLine(l); });
}

std::string readTextFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    TB_USER_CHECK(in.is_open()) << "cannot open the log '" << path << "': " << errnoText();
    // Read in chunks, checking line lengths as we go: a file with one endless line (a hostile or
    // wrong file, e.g. 1 GB without a newline) is rejected after kMaxLogLineBytes, not loaded whole.
    std::string text;
    std::vector<char> chunk(1 << 20);
    size_t lineStart = 0;
    int lineNo = 1;
    while (in) {
        in.read(chunk.data(), std::streamsize(chunk.size()));
        const size_t got = size_t(in.gcount());
        const size_t scanFrom = text.size();
        text.append(chunk.data(), got);
        for (size_t nl = text.find('\n', scanFrom); nl != std::string::npos; nl = text.find('\n', nl + 1)) {
            checkLineLength(nl - lineStart, lineNo, "'" + path + "'");
            lineStart = nl + 1;
            ++lineNo;
        }
        if (text.size() - lineStart > kMaxLogLineBytes) checkLineLength(text.size() - lineStart, lineNo, "'" + path + "'");
    }
    TB_USER_CHECK(!in.bad()) << "cannot read the log '" << path << "'";
    return text;
}

LogContents<MeasureRecord> readMeasureRecords(const std::string& path) {
    return parseMeasureRecords(readTextFile(path));
}

LogContents<AutoTvmRecord> readAutoTvmRecords(const std::string& path) {
    return parseAutoTvmRecords(readTextFile(path));
}

LogFormat detectLogFormat(std::string_view text) {
    size_t pos = 0;
    int looked = 0;
    while (pos < text.size() && looked < 50) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        if (line.empty() || line.front() == '#' || line.front() == ' ') continue;
        ++looked;
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object()) continue;
        if (j.contains("input") && j.contains("config")) return LogFormat::AutoTvm;
        if (j.contains("i") && j.contains("r") && !(j.contains("v") && j["v"].is_number())) return LogFormat::AutoScheduler;
    }
    return LogFormat::Unknown;
}

RecordWriter::RecordWriter(const std::string& path, Mode mode) : m_path(path) {
    const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (mode == Mode::Truncate ? O_TRUNC : 0);
    m_fd = ::open(path.c_str(), flags, 0644);
    TB_USER_CHECK(m_fd >= 0) << "cannot open the log '" << path << "' for appending: " << errnoText();
    // A torn last line (the previous writer was killed mid-line) must not swallow our first record.
    struct stat st {};
    if (mode == Mode::Append && ::fstat(m_fd, &st) == 0 && st.st_size > 0) {
        const int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (rfd >= 0) {
            char last = '\n';
            if (::pread(rfd, &last, 1, st.st_size - 1) == 1 && last != '\n') writeAll(m_fd, m_path, "\n");
            ::close(rfd);
        }
    }
}

RecordWriter::~RecordWriter() {
    if (m_fd >= 0) ::close(m_fd);
}

RecordWriter::RecordWriter(RecordWriter&& other) noexcept : m_path(std::move(other.m_path)), m_fd(other.m_fd) {
    other.m_fd = -1;
}

RecordWriter& RecordWriter::operator=(RecordWriter&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) ::close(m_fd);
        m_path = std::move(other.m_path);
        m_fd = other.m_fd;
        other.m_fd = -1;
    }
    return *this;
}

void RecordWriter::appendLine(std::string_view line) {
    TB_CHECK(m_fd >= 0) << "append on a moved-from RecordWriter";
    std::string buf;
    buf.reserve(line.size() + 1);
    buf.append(line);
    buf += '\n';
    writeAll(m_fd, m_path, buf);
}

void RecordWriter::append(const MeasureRecord& r) { appendLine(r.toLine()); }
void RecordWriter::append(const AutoTvmRecord& r) { appendLine(r.toLine()); }

}  // namespace tb::record
