// The libraries file: each library asked hello once, in the file's
// directory; a file that cannot be used is one line naming the file and the
// entry. The adapters here are the broken ones of tests/adapter.
#include "libraries.h"

#include <gtest/gtest.h>

#include <fstream>

#include "temp_dir.h"

namespace locklab {
namespace {

using nlohmann::json;

const std::string kAdapters = ADAPTER_TEST_DIR;

class LibrariesFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& text) {
    const auto file = dir_.path() / "libraries.json";
    std::ofstream(file) << text;
    return file;
  }

  // The one-line error load_libraries gives for `text`, wanting `wanted`.
  std::string error_of(const std::string& text, const std::vector<std::string>& wanted = {}) {
    try {
      load_libraries(write(text), wanted);
    } catch (const LibrariesError& e) {
      return e.what();
    }
    return "(no LibrariesError)";
  }

  TempDir dir_{"locklab-libraries-test"};
};

TEST_F(LibrariesFile, EachLibraryIsAskedHelloInTheFilesDirectory) {
  // A relative command finds the adapter beside the file, wherever the lab runs.
  std::filesystem::copy_file(kAdapters + "/exits_after_hello.sh", dir_.path() / "mine.sh");
  const auto locks = load_libraries(write(R"({"libraries": [{"adapter": "sh mine.sh",
      "like": "redlock", "unclassified_overlaps": "it keeps its winning try to itself",
      "unlock_deletes_any_holder": "its unlock is a plain DEL"}]})"))
                         .locks;
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].unclassified_overlaps, "it keeps its winning try to itself");
  EXPECT_EQ(locks[0].unlock_deletes_any_holder, "its unlock is a plain DEL");
  EXPECT_EQ(locks[0].name, "exits-after-hello");
  EXPECT_EQ(locks[0].family, "library");
  EXPECT_EQ(locks[0].like, "redlock");
  EXPECT_TRUE(locks[0].multi_node) << "as the built-in it stands in for";
}

TEST_F(LibrariesFile, BadFilesAreOneLineNamingTheEntry) {
  const std::string file = (dir_.path() / "libraries.json").string();
  EXPECT_EQ(error_of("{"), error_of("{")) << "deterministic";
  EXPECT_EQ(error_of("{").rfind(file + ": not JSON", 0), 0u) << error_of("{");
  EXPECT_NE(error_of(R"({"libraries": [{"adapter": "sh x.sh", "like": "redlok"}]})")
                .find("'libraries[0].like' names unknown algorithm \"redlok\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"libraries": [{"adapter": ""}]})").find("'libraries[0].adapter'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"libraries": [{"adapter": "sh x.sh", "colour": "red"}]})")
                .find("'libraries[0].colour' is not a known field"),
            std::string::npos);
  const std::string garbage =
      error_of(R"({"libraries": [{"adapter": "sh )" + kAdapters + R"(/prints_garbage.sh"}]})");
  EXPECT_EQ(garbage.rfind(file + ": libraries[0].adapter: ", 0), 0u) << garbage;
  EXPECT_NE(garbage.find("Traceback"), std::string::npos) << "quotes what it printed";
  EXPECT_EQ(garbage.find('\n'), std::string::npos);
  const std::string twice = error_of(R"({"libraries": [{"adapter": "sh )" + kAdapters +
                                     R"(/exits_after_hello.sh"}, {"adapter": "sh )" + kAdapters +
                                     R"(/exits_after_hello.sh"}]})");
  EXPECT_NE(twice.find("libraries[1] is named \"exits-after-hello\" like another lock"),
            std::string::npos)
      << twice;
  EXPECT_EQ(error_of("{}"), file + ": field 'libraries' must list at least one library");
  EXPECT_NE(error_of(R"({"libraries": [{"adapter": "sh x.sh", "unlock_deletes_any_holder": 3}]})")
                .find("'libraries[0].unlock_deletes_any_holder'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"libraries": [{"adapter": "sh x.sh", "unclassified_overlaps": 3}]})")
                .find("'libraries[0].unclassified_overlaps'"),
            std::string::npos);
}

TEST_F(LibrariesFile, ALibraryWithADeclaredNameIsAskedOnlyWhenWanted) {
  // The second entry's adapter does not exist: asking it would fail.
  const auto file = write(R"({"libraries": [
      {"name": "exits-after-hello", "adapter": "sh )" +
                          kAdapters + R"(/exits_after_hello.sh"},
      {"name": "never-started", "adapter": "sh does-not-exist.sh", "like": "redlock"}]})");
  const Libraries some = load_libraries(file, {"exits-after-hello", "redlock"});
  ASSERT_EQ(some.locks.size(), 1u);
  EXPECT_EQ(some.locks[0].name, "exits-after-hello");
  EXPECT_EQ(some.names, (std::vector<std::string>{"exits-after-hello", "never-started"}));
  EXPECT_THROW(load_libraries(file, {"never-started"}), LibrariesError) << "wanted, so asked";
  EXPECT_THROW(load_libraries(file), LibrariesError) << "every library is wanted";
}

TEST_F(LibrariesFile, ADeclaredNameIsTheOneTheAdapterAnswers) {
  const std::string wrong = error_of(R"({"libraries": [{"name": "mine", "adapter": "sh )" +
                                     kAdapters + R"(/exits_after_hello.sh"}]})");
  EXPECT_NE(wrong.find("'libraries[0].name' is \"mine\", but its adapter answers hello as "
                       "\"exits-after-hello\""),
            std::string::npos)
      << wrong;
  // Two entries declaring one name are refused, though neither is asked.
  const std::string twice = error_of(R"({"libraries": [{"name": "a", "adapter": "sh x.sh"},
                                                       {"name": "a", "adapter": "sh y.sh"}]})",
                                     {"b"});
  EXPECT_NE(twice.find("libraries[1] is named \"a\" like another lock"), std::string::npos)
      << twice;
}

TEST_F(LibrariesFile, AStoryNamingALibraryNotInTheFileIsAnError) {
  const auto file = dir_.path() / "libraries.json";
  const std::vector<std::string> libraries{"node-redlock-v5"};
  Scenario s = parse_scenario(json::parse(R"({"name":"s","algorithms":["redlock"],
      "libraries":{"node-redlock-v5":{"verdict":"safe"}}})"),
                              "story.json");
  EXPECT_NO_THROW(check_library_names(s, libraries, file));
  s = parse_scenario(json::parse(R"({"name":"s","algorithms":["redlock"],
      "libraries":{"node-redlok-v5":{"not_applicable":"no"}}})"),
                     "story.json");
  try {
    check_library_names(s, libraries, file);
    ADD_FAILURE() << "a misspelt library is an error";
  } catch (const LibrariesError& e) {
    EXPECT_EQ(std::string(e.what()),
              "story.json: field 'libraries.node-redlok-v5' names no "
              "library of " +
                  file.string() + " (its libraries: node-redlock-v5)");
  }
}

}  // namespace
}  // namespace locklab
