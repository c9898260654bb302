// OUT/index.html of an exploration: what was found (each minimal scenario
// with its report and reproduction rate), then what was tried and what never
// was, so that "nothing found" is read for what it is.
#include <cmath>
#include <map>
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

std::string list_of(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "—" : out;
}

std::string number(double value) {
  std::ostringstream out;
  out.precision(value < 10 ? 2 : 3);
  out << value;
  return out.str();
}

// {"a": 2, "b": 1} as "a 2, b 1".
std::string counts_text(const std::map<std::string, int64_t>& counts) {
  std::string out;
  for (const auto& [name, count] : counts)
    out += (out.empty() ? "" : ", ") + name + " " + std::to_string(count);
  return out;
}

std::string fault_line(const ExploredFault& fault) {
  std::string line = fault.kind + " " + fault.trigger;
  for (auto it = fault.parameters.begin(); it != fault.parameters.end(); ++it)
    if (it.key() != "at_ms" && it.key() != "when")
      line += ", " + it.key() + " " + text_of(it.value());
  return line;
}

std::string found_section(const Exploration& doc) {
  std::ostringstream html;
  html << "<h2>Found</h2>\n";
  if (doc.found.empty() && doc.not_shrunk.empty()) {
    html << "<p class=\"banner good\">No violation"
         << (doc.options.kinds.empty() ? std::string()
                                       : " of " + escape(list_of(doc.options.kinds)))
         << " in " << doc.runs_total
         << " runs. That is what this budget tried, not a proof: see below for what was "
            "explored and what never was.</p>\n";
    return html.str();
  }
  html << "<table class=\"summary\"><thead><tr><th>minimal scenario</th><th>violations</th>"
          "<th>faults</th><th>reproduced</th><th>from</th></tr></thead><tbody>\n";
  for (const auto& f : doc.found) {
    html << "<tr><td><a href=\"" << escape(f.file) << "\">" << escape(f.name) << ".json</a>";
    if (f.report) html << " · <a href=\"" << escape(*f.report) << "\">report</a>";
    html << "</td><td>" << escape(list_of(f.kinds)) << "</td><td>";
    if (f.faults.empty()) html << "none";
    for (const auto& fault : f.faults) html << escape(fault_line(fault)) << "<br>";
    html << "<span class=\"hint\">" << f.clients << " clients, ttl " << f.ttl_ms << " ms, run "
         << f.duration_ms << " ms</span></td><td>" << f.reproduced.broke << " of "
         << f.reproduced.runs << " runs</td><td>run " << f.from_run << " (shrunk from "
         << f.original_faults << " fault" << (f.original_faults == 1 ? "" : "s") << "), "
         << f.same_cause_runs.size() << " more runs alike; shrink: " << f.shrink.candidates_tried
         << " candidates, " << f.shrink.runs << " runs"
         << (f.shrink.complete ? "" : " (cut short: budget)") << "</td></tr>\n";
  }
  for (const auto& n : doc.not_shrunk)
    html << "<tr><td>run " << n.run << " (not shrunk: " << escape(n.why) << ")</td><td>"
         << escape(list_of(n.kinds)) << "</td><td>" << escape(list_of(n.fault_kinds))
         << "</td><td>—</td><td>" << n.runs << " runs</td></tr>\n";
  html << "</tbody></table>\n";
  return html.str();
}

std::string coverage_section(const Exploration& doc) {
  std::ostringstream html;
  const CoverageSummary& coverage = doc.coverage;
  html << "<h2>What was explored</h2>\n<table><thead><tr><th>fault kind</th><th>runs</th>"
          "<th>faults generated</th>"
          "<th>fired</th><th>drawn from</th><th>fired with</th></tr></thead><tbody>\n";
  for (const auto& k : coverage.fault_kinds) {
    std::string drawn, fired;
    for (const auto& r : k.ranges) {
      drawn += r.param + " " + number(r.drawn.first) + "–" + number(r.drawn.second) + " " + r.unit +
               "; ";
      if (r.fired)
        fired += r.param + " " + number(r.fired->first) + "–" + number(r.fired->second) + " " +
                 r.unit + "; ";
    }
    html << "<tr><td>" << escape(k.kind) << "</td><td>" << k.runs << "</td><td>" << k.generated
         << "</td><td" << (k.fired == 0 ? " class=\"kind missing\"" : "") << ">" << k.fired
         << "</td><td>" << escape(drawn) << "</td><td>" << escape(fired) << "</td></tr>\n";
  }
  html << "</tbody></table>\n<table><thead><tr><th>step</th><th>faults triggered there</th>"
          "<th>of which fired</th></tr></thead><tbody>\n";
  for (const auto& s : coverage.steps)
    html << "<tr><td>" << escape(s.step) << "</td><td>" << s.generated << "</td><td>" << s.fired
         << "</td></tr>\n";
  html << "</tbody></table>\n<p class=\"notice\">Never fired: fault kinds "
       << escape(list_of(coverage.kinds_never_fired)) << "; steps "
       << escape(list_of(coverage.steps_never_fired)) << ".</p>\n";
  return html.str();
}

}  // namespace

void write_explore_index(const Exploration& doc, const std::filesystem::path& out_dir) {
  std::ostringstream body;
  const std::string& name = doc.explore;
  body << "<div class=\"page-head\"><h1>Exploring " << escape(name) << "</h1></div>\n";
  body << "<p class=\"meta\">" << doc.runs_total << " generated runs in "
       << number(doc.explore_seconds) << " s (" << number(doc.runs_per_minute) << " per minute, "
       << doc.options.jobs << " at a time), seed " << doc.options.seed
       << "; a violation counts when it reproduces in " << doc.options.reproduce.needed << " of "
       << doc.options.reproduce.reruns << " runs; " << doc.shrink_runs
       << " more runs spent shrinking.";
  if (doc.interrupted) body << " <b>Interrupted</b>: the budget was not spent.";
  body << "</p>\n";
  if (doc.error) body << "<p class=\"banner bad\">" << escape(*doc.error) << "</p>\n";
  body << "<p>Violations by kind (generated runs): "
       << escape(doc.violations_by_kind.empty() ? std::string("none")
                                                : counts_text(doc.violations_by_kind))
       << ".";
  if (!doc.options.kinds.empty() && !doc.kinds_seen.empty())
    body << " All kinds seen, sought or not: " << escape(counts_text(doc.kinds_seen)) << ".";
  body << " Every run: <a href=\"explore.json\">explore.json</a>.</p>\n";
  body << found_section(doc) << coverage_section(doc);
  write_file_atomically(out_dir / "index.html",
                        reports::html_page("locklab explore " + name, body.str()));
}

}  // namespace locklab::explore
