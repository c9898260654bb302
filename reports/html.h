// Small text helpers the report pages share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "results.h"

namespace locklab::reports {

// `text` safe inside HTML or SVG element content and quoted attribute values.
std::string escape(std::string_view text);

// A duration or instant for people: "850 ns", "12.3 µs", "12.3 ms", "1.512 s".
std::string format_duration(int64_t ns);

// 1234567 -> "1,234,567".
std::string format_count(int64_t n);

// A coordinate or length in an SVG drawing, to a tenth: "12", "12.5", "0".
std::string svg_number(double v);

// `text` as an id fragment: lower-case letters, digits and '-', never empty.
std::string slug(std::string_view text);

// A verdict ("safe", "violated", "error", ...) as a coloured pill; with
// `times` > 0 it reads "violated ×3" (a verdict of repeated runs).
std::string verdict_pill(std::string_view verdict, size_t times = 0);

// How a run stands against its expectation, as a badge people cannot miss:
// "✓ met", "✗ UNMET", "⚠ NOT EXERCISED", "not applicable", "✓ safer than
// LIKE", "✗ run failed", or "no expectation" for nullopt; its tooltip says
// what that means. `like` names the built-in a safer-than run stands in for.
std::string outcome_badge(std::optional<RunOutcome> outcome, const std::string& like = "");

// The CSS class of an outcome, shared by badges, sections and matrix cells:
// "met", "not-met", "not-exercised", "not-applicable", "safer", "failed", or
// "none" for nullopt.
std::string outcome_class(std::optional<RunOutcome> outcome);

// A complete page: the embedded template with `title` (escaped here), the
// embedded stylesheet and `body` (already HTML).
std::string html_page(std::string_view title, std::string_view body);

}  // namespace locklab::reports
