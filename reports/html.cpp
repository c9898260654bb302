#include "html.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "interact_text.h"
#include "page_text.h"
#include "report_text.h"

namespace locklab::reports {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string format_duration(int64_t ns) {
  char buffer[48];
  double abs = ns < 0 ? -double(ns) : double(ns);
  if (ns == 0) return "0 s";
  if (abs >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.3f s", double(ns) / 1e9);
  else if (abs >= 1e6)
    std::snprintf(buffer, sizeof buffer, "%.1f ms", double(ns) / 1e6);
  else if (abs >= 1e3)
    std::snprintf(buffer, sizeof buffer, "%.1f µs", double(ns) / 1e3);
  else
    std::snprintf(buffer, sizeof buffer, "%lld ns", static_cast<long long>(ns));
  return buffer;
}

std::string format_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string svg_number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  std::string out = buffer;
  if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
  return out == "-0" ? "0" : out;
}

std::string slug(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "x" : out;
}

std::string verdict_pill(std::string_view verdict, size_t times) {
  return "<span class=\"verdict verdict-" + slug(verdict) + "\">" + escape(verdict) +
         (times > 0 ? " ×" + std::to_string(times) : "") + "</span>";
}

std::string outcome_class(std::optional<RunOutcome> outcome) {
  return outcome ? std::string(kRunOutcomes[*outcome].style) : "none";
}

std::string outcome_badge(std::optional<RunOutcome> outcome, const std::string& like) {
  std::string text = "no expectation", tip = "the scenario expects nothing of this run";
  if (outcome) {
    const RunOutcomeInfo& row = kRunOutcomes[*outcome];
    text = std::string(row.badge), tip = std::string(row.tip);
    if (*outcome == RunOutcome::kSaferThan)
      text += " " + (like.empty() ? std::string("the built-in") : like);
  }
  return "<span class=\"expectation " + outcome_class(outcome) + "\" title=\"" + escape(tip) +
         "\">" + escape(text) + "</span>";
}

std::string html_page(std::string_view title, std::string_view body) {
  // One pass over the template: inserted text is never searched for
  // placeholders, so a history that happens to contain "{{body}}" stays text.
  const std::map<std::string_view, std::string> values = {
      {"title", escape(title)},
      {"style", std::string(assets::report)},
      {"body", std::string(body)},
      {"script", std::string(assets::interact)}};
  std::string_view page = assets::page;
  std::string out;
  out.reserve(page.size() + body.size() + assets::report.size() + assets::interact.size());
  size_t at = 0;
  while (true) {
    size_t open = page.find("{{", at);
    if (open == std::string_view::npos) break;
    size_t close = page.find("}}", open);
    if (close == std::string_view::npos) break;
    auto it = values.find(page.substr(open + 2, close - open - 2));
    if (it == values.end())
      throw std::logic_error("report template: unknown placeholder " +
                             std::string(page.substr(open, close + 2 - open)));
    out.append(page.substr(at, open - at));
    out += it->second;
    at = close + 2;
  }
  out.append(page.substr(at));
  return out;
}

}  // namespace locklab::reports
