// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file record_io.h
/// \brief Reading whole tuning logs tolerantly and appending records safely.
///
/// A tuning log is written for hours by a process that may be killed at any moment, then read by
/// other tools: a line may be torn (the writer died mid-line), hand-edited, or from another format.
/// TVM's RecordReader skips lines starting with `#` or a space; everything else must parse. We
/// never throw a whole file away for one bad line: the readers here return every good record with
/// its line number and every bad line with its number and the reason (TVM's semantics for good
/// lines, a report instead of a crash for bad ones).
///
/// The writer appends one line per record and hands it to the kernel before returning (one
/// `write(2)` of the whole line on an `O_APPEND` descriptor, the unbuffered equivalent of
/// fwrite + fflush on a file opened in append mode), so a SIGKILL right after append() returns
/// loses nothing, and concurrent appenders never interleave within a line. If the file ends in a
/// torn line, the writer first ends it with a newline, so the torn line stays one bad line instead
/// of corrupting the next record.

#include <string>
#include <string_view>
#include <vector>

#include "engine/record/autotvm_record.h"
#include "engine/record/measure_record.h"

namespace tb::record {

/// A line that is not a record.
struct BadLine {
    int line = 0;              ///< 1-based line number in the file
    std::string reason;        ///< why it was rejected (English, one sentence)
    std::string text;          ///< the line, cut to 120 bytes
    bool torn = false;         ///< it is the last line and has no newline (an interrupted writer)
};

/// Everything read from one log.
template <class Record>
struct LogContents {
    std::vector<Record> records;
    std::vector<int> recordLines;     ///< 1-based line number of each record
    std::vector<BadLine> badLines;    ///< in file order
    int commentLines = 0;             ///< lines starting with '#' or ' ' (skipped, as TVM does)
    int blankLines = 0;               ///< empty lines (or only "\r")
    int totalLines = 0;               ///< all lines, a final line without newline included
};

/// Which tuning log format a file holds.
enum class LogFormat { Unknown, AutoScheduler, AutoTvm };

/// "auto_scheduler", "autotvm" or "unknown".
const char* logFormatName(LogFormat format);

/// The longest line a tuning log may have: 16 MiB (TVM writes a few kB per record; the longest
/// lines of real logs, AutoTVM records of big templates, stay under 10 kB). Longer means the input
/// is not a tuning log, and reading it must not cost its size in memory.
inline constexpr size_t kMaxLogLineBytes = size_t(16) << 20;

/// Parses log text (the content of a file). Never throws for bad content, except a line longer
/// than kMaxLogLineBytes (tb::UserError naming the line).
LogContents<MeasureRecord> parseMeasureRecords(std::string_view text);
LogContents<AutoTvmRecord> parseAutoTvmRecords(std::string_view text);

/// Reads a whole file. Throws tb::UserError if the file cannot be opened or read, or has a line
/// longer than kMaxLogLineBytes (then without reading further).
LogContents<MeasureRecord> readMeasureRecords(const std::string& path);
LogContents<AutoTvmRecord> readAutoTvmRecords(const std::string& path);

/// Reads the whole file at `path` into a string; throws tb::UserError naming the file on failure,
/// and as soon as a line longer than kMaxLogLineBytes shows up (so an endless line costs at most
/// that much memory, not the file's size).
std::string readTextFile(const std::string& path);

/// Guesses the format from the first lines that parse as JSON objects (keys i/r vs
/// input/config/result). Unknown if no line decides.
LogFormat detectLogFormat(std::string_view text);

/// Appends records to a log file as TVM lines, each one on disk (in the kernel) when append()
/// returns. Not copyable; movable.
class RecordWriter {
public:
    enum class Mode { Append, Truncate };
    /// Opens (creating if needed) `path`; Truncate empties it first. Throws tb::UserError naming
    /// the file if it cannot be opened.
    explicit RecordWriter(const std::string& path, Mode mode = Mode::Append);
    ~RecordWriter();
    RecordWriter(RecordWriter&& other) noexcept;
    RecordWriter& operator=(RecordWriter&& other) noexcept;
    RecordWriter(const RecordWriter&) = delete;
    RecordWriter& operator=(const RecordWriter&) = delete;

    /// Writes `r.toLine()` + "\n" in one write(2). Throws tb::UserError on an I/O error (disk
    /// full...), naming the file.
    void append(const MeasureRecord& r);
    void append(const AutoTvmRecord& r);
    /// Writes one already formatted line (a newline is added).
    void appendLine(std::string_view line);

    const std::string& path() const { return m_path; }

private:
    std::string m_path;
    int m_fd = -1;
};

}  // namespace tb::record
