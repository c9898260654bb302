#include "progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "summary.h"

namespace locklab::suite {

using nlohmann::json;

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

std::string progress_line(size_t done, size_t total, const std::string& label, const json& run,
                          double seconds) {
  char time[32];
  std::snprintf(time, sizeof time, "%.1fs", seconds);
  const bool failed = run.contains("error") && !run["error"].is_null();
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + label + ": ";
  if (failed) return line + "error ERROR " + time + " — " + unmet_reason(run);
  line += run.value("verdict", "unknown") + " (expected " +
          run.value("expected", json::object()).value("verdict", "safe") + ") ";
  if (run.value("expectation_met", false)) return line + "ok " + time;
  return line + "NOT MET " + time + " — " + unmet_reason(run);
}

Progress::Progress(std::ostream& out, bool live, size_t total)
    : out_(out), live_(live), total_(total) {}

void Progress::started(const std::string& label) {
  std::lock_guard lock(mu_);
  running_.insert(label);
  if (live_) redraw();
}

void Progress::finished(const std::string& label, const json& run, double seconds) {
  std::lock_guard lock(mu_);
  ++done_;
  if (auto it = running_.find(label); it != running_.end()) running_.erase(it);
  const bool failed = run.contains("error") && !run["error"].is_null();
  const bool met = !failed && run.value("expectation_met", false);
  ++(failed ? errors_ : met ? met_ : unmet_);
  const std::string line = progress_line(done_, total_, label, run, seconds);
  if (!live_) {
    out_ << line << "\n" << std::flush;
    return;
  }
  if (!met) out_ << "\r\033[K" << line << "\n";  // problems stay on screen
  redraw();
}

void Progress::close() {
  std::lock_guard lock(mu_);
  if (live_) out_ << "\n" << std::flush;
}

void Progress::redraw() {
  constexpr size_t kWidth = 20;
  const size_t filled = total_ ? done_ * kWidth / total_ : kWidth;
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
                    std::to_string(done_) + "/" + std::to_string(total_) + "  ok " +
                    std::to_string(met_) + "  not met " + std::to_string(unmet_) + "  errors " +
                    std::to_string(errors_);
  if (!running_.empty()) {
    bar += "  running:";
    for (const auto& label : running_) bar += " " + label + ";";
    bar.pop_back();
  }
  out_ << "\r\033[K" << clipped(bar, terminal_columns() - 1) << std::flush;
}

}  // namespace locklab::suite
