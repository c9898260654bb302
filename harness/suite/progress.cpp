#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "summary.h"

namespace locklab::suite {

namespace {

// Columns of the terminal on stderr (80 when it cannot tell).
size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 80;
}

// The first `columns` characters of UTF-8 `text` (a character is counted
// once however many bytes it takes, which is right for the text used here).
std::string clipped(const std::string& text, size_t columns) {
  size_t characters = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a continuation byte
    if (++characters > columns) return text.substr(0, i);
  }
  return text;
}

}  // namespace

namespace {

// The line of a finished run, before what its library left behind.
std::string outcome_line(size_t done, size_t total, const std::string& label, const RunResult& run,
                         double seconds) {
  char time[32];
  std::snprintf(time, sizeof time, "%.1fs", seconds);
  const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
  const std::string word(kRunOutcomes[outcome].progress);
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + label + ": ";
  if (outcome == RunOutcome::kError) return line + word + " " + time + " — " + unmet_reason(run);
  if (outcome == RunOutcome::kNotApplicable)
    return line + word + " " + time + " — " + run.not_applicable.value_or("not run");
  line += std::string(verdict_name(run.verdict)) + " (expected " +
          std::string(verdict_name(run.expected.value_or(Expectation{}).verdict)) + ") " + word;
  if (outcome == RunOutcome::kMet) return line + " " + time;
  if (outcome == RunOutcome::kSaferThan)
    return line + " " + run.like.value_or("the built-in") + " " + time;
  return line + " " + time + " — " + unmet_reason(run);
}

}  // namespace

std::string progress_line(size_t done, size_t total, const std::string& label, const RunResult& run,
                          double seconds) {
  std::string line = outcome_line(done, total, label, run, seconds);
  if (!run.incidents.empty()) line += " ⚑ " + incident_text(run.incidents.front());
  return line;
}

Progress::Progress(std::ostream& out, bool live, size_t total)
    : out_(out), live_(live), total_(total) {}

void Progress::started(const std::string& label) {
  std::lock_guard lock(mu_);
  running_.insert(label);
  if (live_) redraw();
}

void Progress::finished(const std::string& label, const RunResult& run, double seconds) {
  std::lock_guard lock(mu_);
  ++done_;
  if (auto it = running_.find(label); it != running_.end()) running_.erase(it);
  const RunOutcome outcome = run.outcome.value_or(decide_outcome(run));
  ++outcomes_[outcome];
  const std::string line = progress_line(done_, total_, label, run, seconds);
  if (!live_) {
    out_ << line << "\n" << std::flush;
    return;
  }
  if (!passes(outcome)) out_ << "\r\033[K" << line << "\n";  // problems stay on screen
  redraw();
}

void Progress::close() {
  std::lock_guard lock(mu_);
  if (live_) out_ << "\n" << std::flush;
}

void Progress::redraw() {
  constexpr size_t kWidth = 20;
  const size_t filled = total_ ? done_ * kWidth / total_ : kWidth;
  auto count = [this](RunOutcome outcome) {
    auto it = outcomes_.find(outcome);
    return std::to_string(it == outcomes_.end() ? 0 : it->second);
  };
  auto tally = [&](RunOutcome outcome) {
    return "  " + std::string(kRunOutcomes[outcome].tally) + " " + count(outcome);
  };
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
                    std::to_string(done_) + "/" + std::to_string(total_) + tally(RunOutcome::kMet) +
                    tally(RunOutcome::kUnmet) + tally(RunOutcome::kError);
  // The rarer outcomes only once they happen, so the line stays short.
  for (RunOutcome outcome :
       {RunOutcome::kNotExercised, RunOutcome::kSaferThan, RunOutcome::kNotApplicable})
    if (outcomes_.count(outcome)) bar += tally(outcome);
  if (!running_.empty()) {
    bar += "  running:";
    for (const auto& label : running_) bar += " " + label + ";";
    bar.pop_back();
  }
  out_ << "\r\033[K" << clipped(bar, terminal_columns() - 1) << std::flush;
}

}  // namespace locklab::suite
