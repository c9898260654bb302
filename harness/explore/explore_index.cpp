// OUT/index.html of an exploration: what was found (each minimal scenario
// with its report and reproduction rate), then what was tried and what never
// was, so that "nothing found" is read for what it is.
#include <cmath>
#include <sstream>

#include "atomic_file.h"
#include "explore.h"
#include "html.h"

namespace locklab::explore {
namespace {

using nlohmann::json;
using reports::escape;

std::string text_of(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string list_of(const json& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + text_of(item);
  return out.empty() ? "—" : out;
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(value < 10 ? 2 : 3);
  out << value;
  return out.str();
}

// {"a": 2, "b": 1} as "a 2, b 1".
std::string counts_text(const json& counts) {
  std::string out;
  for (auto it = counts.begin(); it != counts.end(); ++it)
    out += (out.empty() ? "" : ", ") + it.key() + " " + text_of(it.value());
  return out;
}

std::string fault_line(const json& fault) {
  std::string line = text_of(fault["kind"]) + " " + text_of(fault["trigger"]);
  for (auto it = fault.begin(); it != fault.end(); ++it)
    if (it.key() != "kind" && it.key() != "trigger" && it.key() != "at_ms" && it.key() != "when")
      line += ", " + it.key() + " " + text_of(it.value());
  return line;
}

std::string found_section(const json& doc) {
  std::ostringstream html;
  const json& found = doc["found"];
  html << "<h2>Found</h2>\n";
  if (found.empty() && doc["not_shrunk"].empty()) {
    html << "<p class=\"banner good\">No violation"
         << (doc["options"]["kinds"].empty() ? std::string()
                                             : " of " + escape(list_of(doc["options"]["kinds"])))
         << " in " << doc["runs_total"].get<int64_t>()
         << " runs. That is what this budget tried, not a proof: see below for what was "
            "explored and what never was.</p>\n";
    return html.str();
  }
  html << "<table class=\"summary\"><thead><tr><th>minimal scenario</th><th>violations</th>"
          "<th>faults</th><th>reproduced</th><th>from</th></tr></thead><tbody>\n";
  for (const auto& f : found) {
    const int runs = f["reproduced"]["runs"], broke = f["reproduced"]["broke"];
    html << "<tr><td><a href=\"" << escape(text_of(f["file"])) << "\">"
         << escape(text_of(f["name"])) << ".json</a>";
    if (f["report"].is_string())
      html << " · <a href=\"" << escape(text_of(f["report"])) << "\">report</a>";
    html << "</td><td>" << escape(list_of(f["kinds"])) << "</td><td>";
    if (f["faults"].empty()) html << "none";
    for (const auto& fault : f["faults"]) html << escape(fault_line(fault)) << "<br>";
    html << "<span class=\"hint\">" << f["clients"].get<int>() << " clients, ttl "
         << f["ttl_ms"].get<int64_t>() << " ms, run " << f["duration_ms"].get<int64_t>()
         << " ms</span></td><td>" << broke << " of " << runs << " runs</td><td>run "
         << f["from_run"].get<int64_t>() << " (shrunk from " << f["original_faults"].get<int64_t>()
         << " fault" << (f["original_faults"].get<int64_t>() == 1 ? "" : "s") << "), "
         << f["same_cause_runs"].size()
         << " more runs alike; shrink: " << f["shrink"]["candidates_tried"].get<int>()
         << " candidates, " << f["shrink"]["runs"].get<int>() << " runs"
         << (f["shrink"]["complete"].get<bool>() ? "" : " (cut short: budget)") << "</td></tr>\n";
  }
  for (const auto& n : doc["not_shrunk"])
    html << "<tr><td>run " << n["run"].get<int64_t>()
         << " (not shrunk: " << escape(text_of(n["why"])) << ")</td><td>"
         << escape(list_of(n["kinds"])) << "</td><td>" << escape(list_of(n["fault_kinds"]))
         << "</td><td>—</td><td>" << n["runs"].get<int64_t>() << " runs</td></tr>\n";
  html << "</tbody></table>\n";
  return html.str();
}

std::string coverage_section(const json& doc) {
  std::ostringstream html;
  const json& coverage = doc["coverage"];
  html << "<h2>What was explored</h2>\n<table><thead><tr><th>fault kind</th><th>runs</th>"
          "<th>faults generated</th>"
          "<th>fired</th><th>drawn from</th><th>fired with</th></tr></thead><tbody>\n";
  for (const auto& k : coverage["fault_kinds"]) {
    std::string drawn, fired;
    for (const auto& r : k["ranges"]) {
      const std::string unit = text_of(r["unit"]);
      drawn += text_of(r["param"]) + " " + number(r["drawn"][0]) + "–" + number(r["drawn"][1]) +
               " " + unit + "; ";
      if (r.contains("fired"))
        fired += text_of(r["param"]) + " " + number(r["fired"][0]) + "–" + number(r["fired"][1]) +
                 " " + unit + "; ";
    }
    html << "<tr><td>" << escape(text_of(k["kind"])) << "</td><td>" << k["generated"].get<int64_t>()
         << "</td><td" << (k["fired"].get<int64_t>() == 0 ? " class=\"kind missing\"" : "") << ">"
         << k["fired"].get<int64_t>() << "</td><td>" << escape(drawn) << "</td><td>"
         << escape(fired) << "</td></tr>\n";
  }
  html << "</tbody></table>\n<table><thead><tr><th>step</th><th>faults triggered there</th>"
          "<th>of which fired</th></tr></thead><tbody>\n";
  for (const auto& s : coverage["steps"])
    html << "<tr><td>" << escape(text_of(s["step"])) << "</td><td>" << s["generated"].get<int64_t>()
         << "</td><td>" << s["fired"].get<int64_t>() << "</td></tr>\n";
  html << "</tbody></table>\n<p class=\"notice\">Never fired: fault kinds "
       << escape(list_of(coverage["kinds_never_fired"])) << "; steps "
       << escape(list_of(coverage["steps_never_fired"])) << ".</p>\n";
  return html.str();
}

}  // namespace

void write_explore_index(const json& doc, const std::filesystem::path& out_dir) {
  std::ostringstream body;
  const std::string name = text_of(doc["explore"]);
  body << "<div class=\"page-head\"><h1>Exploring " << escape(name) << "</h1></div>\n";
  body << "<p class=\"meta\">" << doc["runs_total"].get<int64_t>() << " generated runs in "
       << number(doc["explore_seconds"].get<double>()) << " s ("
       << number(doc["runs_per_minute"].get<double>()) << " per minute, "
       << doc["options"]["jobs"].get<int>() << " at a time), seed "
       << doc["options"]["seed"].get<uint64_t>() << "; a violation counts when it reproduces in "
       << doc["options"]["reproduce"]["needed"].get<int>() << " of "
       << doc["options"]["reproduce"]["reruns"].get<int>() << " runs; "
       << doc["shrink_runs"].get<int64_t>() << " more runs spent shrinking.";
  if (doc["interrupted"].get<bool>()) body << " <b>Interrupted</b>: the budget was not spent.";
  body << "</p>\n";
  if (doc.contains("error"))
    body << "<p class=\"banner bad\">" << escape(text_of(doc["error"])) << "</p>\n";
  body << "<p>Violations by kind (generated runs): "
       << escape(doc["violations_by_kind"].empty() ? std::string("none")
                                                   : counts_text(doc["violations_by_kind"]))
       << ".";
  if (!doc["options"]["kinds"].empty() && !doc["kinds_seen"].empty())
    body << " All kinds seen, sought or not: " << escape(counts_text(doc["kinds_seen"])) << ".";
  body << " Every run: <a href=\"explore.json\">explore.json</a>.</p>\n";
  body << found_section(doc) << coverage_section(doc);
  write_file_atomically(out_dir / "index.html",
                        reports::html_page("locklab explore " + name, body.str()));
}

}  // namespace locklab::explore
