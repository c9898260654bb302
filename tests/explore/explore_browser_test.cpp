// An exploration's index.html as a person sees it: loaded in headless
// Chromium (skipped where none is installed), its "What was explored" table
// read back from the rendered DOM, every value under its header. No servers:
// the page is written from a small typed document.
#include <gtest/gtest.h>

#include "exploration.h"
#include "explore.h"
#include "reports/headless_browser.h"

namespace locklab::explore {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace reports::fixtures;

// This test's own output directory (build/tests/explore/browser/<test>), fresh each run.
fs::path output_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(BROWSER_OUTPUT_DIR) / info->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string unescape(std::string text) {
  for (auto [from, to] : {std::pair{"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", " "}, {"&amp;", "&"}}) {
    const std::string f = from;
    for (size_t at = text.find(f); at != std::string::npos; at = text.find(f, at + 1))
      text.replace(at, f.size(), to);
  }
  return text;
}

// Two kinds: pause fired (with a fired range), clock-jump never did. Every
// count differs from the others, so a value under the wrong header shows.
Exploration small_exploration() {
  Exploration doc;
  doc.explore = "set-nx-px";
  doc.algorithm = "set-nx-px";
  doc.options.seed = 7;
  doc.options.fault_kinds = {"pause", "clock-jump"};
  doc.runs_total = 9;
  doc.explore_seconds = 30;
  doc.runs_per_minute = 18;
  doc.coverage.fault_kinds = {
      {.kind = "pause",
       .runs = 3,
       .generated = 7,
       .fired = 4,
       .ranges = {{.param = "duration_ms",
                   .unit = "× ttl",
                   .drawn = {0.1, 5.0},
                   .fired = std::pair(0.5, 2.5)}}},
      {.kind = "clock-jump",
       .runs = 2,
       .generated = 6,
       .fired = 0,
       .ranges = {{.param = "delta_ms", .unit = "× ttl", .drawn = {0.1, 5.0}},
                  {.param = "duration_ms", .unit = "× ttl", .drawn = {0.1, 3.0}}}}};
  doc.coverage.steps = {{.step = "acquired", .generated = 5, .fired = 1}};
  doc.coverage.kinds_never_fired = {"clock-jump"};
  return doc;
}

// Reads the table that follows the "What was explored" heading as the
// browser laid it out: its header cells' texts, and each body row's cells'
// texts and classes, as JSON in <pre id="table-dump">.
const char* kTableDump = R"(<script>
document.addEventListener("DOMContentLoaded", function () {
  var out = {headers: [], rows: []};
  document.querySelectorAll("h2").forEach(function (h) {
    if (h.textContent !== "What was explored") return;
    var table = h.nextElementSibling;
    out.headers = Array.from(table.tHead.rows[0].cells, function (c) { return c.textContent; });
    out.rows = Array.from(table.tBodies[0].rows, function (r) {
      return Array.from(r.cells, function (c) { return {text: c.textContent, class: c.className}; });
    });
  });
  var pre = document.createElement("pre");
  pre.id = "table-dump";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>)";

TEST(ExploreBrowser, WhatWasExploredShowsEveryValueUnderItsHeader) {
  const auto chromium = find_chromium();
  if (!chromium)
    GTEST_SKIP() << "no headless browser: chromium is not installed (Debian: apt-get install "
                    "chromium; harness/scripts/lab.sh setup installs it)";
  const fs::path out = output_dir();
  write_explore_index(small_exploration(), out);
  const std::string html = read_text(out / "index.html");
  const fs::path page = out / "dumped.html";
  write_text(page, html.substr(0, html.rfind("</body>")) + kTableDump + "</body></html>");
  const PageLoad load = load_page(*chromium, page, "", out / "explore-index.png");
  for (const auto& line : load.console_lines) ADD_FAILURE() << "console: " << line;

  const std::string open = "<pre id=\"table-dump\">";
  const size_t from = load.dom.find(open);
  ASSERT_NE(from, std::string::npos) << load.dom;
  const size_t to = load.dom.find("</pre>", from);
  const json table =
      json::parse(unescape(load.dom.substr(from + open.size(), to - from - open.size())));
  const auto headers = table["headers"].get<std::vector<std::string>>();
  ASSERT_EQ(headers, (std::vector<std::string>{"fault kind", "runs", "faults generated", "fired",
                                               "drawn from", "fired with"}));
  ASSERT_EQ(table["rows"].size(), 2u) << table.dump(2);

  // Each row as header → cell.
  std::vector<std::map<std::string, json>> rows;
  for (const auto& row : table["rows"]) {
    EXPECT_EQ(row.size(), headers.size()) << "a row with another number of cells than the "
                                             "header: "
                                          << row.dump();
    std::map<std::string, json> cells;
    for (size_t i = 0; i < row.size() && i < headers.size(); ++i) cells[headers[i]] = row[i];
    rows.push_back(cells);
  }
  auto text = [&](size_t row, const std::string& header) {
    auto it = rows[row].find(header);
    return it == rows[row].end() ? std::string("(no cell)") : it->second["text"].get<std::string>();
  };
  EXPECT_EQ(text(0, "fault kind"), "pause");
  EXPECT_EQ(text(0, "runs"), "3");
  EXPECT_EQ(text(0, "faults generated"), "7");
  EXPECT_EQ(text(0, "fired"), "4");
  EXPECT_EQ(text(0, "drawn from"), "duration_ms 0.1–5 × ttl; ");
  EXPECT_EQ(text(0, "fired with"), "duration_ms 0.5–2.5 × ttl; ");
  EXPECT_EQ(text(1, "fault kind"), "clock-jump");
  EXPECT_EQ(text(1, "runs"), "2");
  EXPECT_EQ(text(1, "faults generated"), "6");
  EXPECT_EQ(text(1, "fired"), "0");
  EXPECT_EQ(text(1, "drawn from"), "delta_ms 0.1–5 × ttl; duration_ms 0.1–3 × ttl; ");
  EXPECT_EQ(text(1, "fired with"), "");
  // The kind that never fired is marked in its "fired" cell, and only there.
  for (size_t row = 0; row < rows.size(); ++row)
    for (const auto& [header, cell] : rows[row])
      EXPECT_EQ(cell["class"] == "kind missing", row == 1 && header == "fired")
          << "row " << row << ", " << header << ": " << cell.dump();
}

}  // namespace
}  // namespace locklab::explore
