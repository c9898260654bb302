// Self-contained HTML reports of lab runs: one page per run directory, one
// index per suite. A report has no external assets and no network use (inline
// CSS and SVG), so it opens from a file:// URL, an archived CI artifact or a mail.
#pragma once

#include <filesystem>

namespace locklab::reports {

// Writes RUN_DIR/report.html for a run directory (RUN_DIR/results.json and the
// history.jsonl of each algorithm it names) and returns its path. Per
// algorithm: verdict against expectation with the run's outcome as a badge
// (met, UNMET, NOT EXERCISED, not applicable, safer than the built-in,
// failed), stats, a table of the scenario's faults (when each fired and
// ended, the ones that never fired highlighted), a timeline of holds,
// operations and faults with every violation drawn on top, and the history
// events of each violation. The file is replaced atomically: there is never a
// half-written report. Throws std::runtime_error naming the file when
// results.json or a history cannot be read or is malformed; no file is left then.
std::filesystem::path write_run_report(const std::filesystem::path& run_dir);

// Writes SUITE_DIR/index.html and returns its path: the matrix scenario ×
// algorithm, each cell the measured verdict against the expectation, styled
// by the cell's outcome (a legend names each style) and linking to the run
// report of the scenario, which is (re)written as well; above it, the runs
// counted per outcome; below it, a chart of the breaking points of each
// sweep found in SUITE_DIR/sweep.json or SUITE_DIR/*/sweep.json, and one
// chart per axis of the safety envelopes in SUITE_DIR/envelope.json or
// SUITE_DIR/envelope/envelope.json (a directory with only those: a page of
// its charts alone). Scenarios
// are the subdirectories holding a results.json, in the order of the suite's
// own results.json when it lists them. A scenario whose files are broken shows
// as a broken row; the index is still written. Throws std::runtime_error naming
// the file when the suite's results.json exists but is malformed, or when the
// index cannot be written.
std::filesystem::path write_suite_report(const std::filesystem::path& suite_dir);

// Writes the report of whatever `dir` holds, from its files alone, and
// returns its path: a run directory's report.html (its results.json has
// "runs"), or a suite directory's index.html (its results.json has "cells",
// or it has none but it or a subdirectory holds a sweep.json, or it holds an
// envelope.json, or some
// subdirectory holds a results.json). Throws std::runtime_error
// with one line naming the directory or file when it is neither, or when
// write_run_report / write_suite_report refuse it.
std::filesystem::path write_report(const std::filesystem::path& dir);

}  // namespace locklab::reports
