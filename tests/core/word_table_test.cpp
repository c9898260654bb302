// The word table every enum's words are kept in (word_table.h).
#include "word_table.h"

#include <gtest/gtest.h>

#include <vector>

namespace locklab {
namespace {

enum class Colour { Red, Green, Blue };

constexpr auto kColours = word_table<Colour>({
    {Colour::Red, "red", "the colour of danger"},
    {Colour::Green, "green", "the colour of safety"},
    {Colour::Blue, "blue", "the colour of the sky"},
});

// A constexpr table is read at compile time.
static_assert(kColours.size() == 3);
static_assert(kColours.name(Colour::Green) == "green");
static_assert(kColours.named("blue") == Colour::Blue);
static_assert(!kColours.named("purple"));

struct Shade {
  Colour colour;
  std::string_view name;
  std::string_view meaning;
  int depth = 0;
};

constexpr WordTable<Shade, &Shade::colour, 3> kShades({
    {Colour::Red, "crimson", "a deep red", 3},
    {Colour::Green, "olive", "a dull green", 2},
    {Colour::Blue, "navy", "a dark blue", 4},
});

TEST(WordTable, NamesMeaningsAndLookUps) {
  EXPECT_EQ(kColours.name(Colour::Red), "red");
  EXPECT_EQ(kColours.meaning(Colour::Blue), "the colour of the sky");
  EXPECT_EQ(kColours.named("green"), Colour::Green);
  EXPECT_FALSE(kColours.named("Green").has_value());
  EXPECT_EQ(kColours.find("red"), &kColours[Colour::Red]);
  EXPECT_EQ(kColours.find(""), nullptr);
  EXPECT_EQ(kColours.list(), "red, green, blue");
  EXPECT_EQ(kColours.list(" | "), "red | green | blue");
  EXPECT_EQ(kColours.names(), (std::vector<std::string>{"red", "green", "blue"}));
}

TEST(WordTable, RicherRowsAreKeyedByTheirMember) {
  EXPECT_EQ(kShades[Colour::Blue].depth, 4);
  EXPECT_EQ(kShades.name(Colour::Green), "olive");
  EXPECT_EQ(kShades.named("crimson"), Colour::Red);
  size_t rows = 0;
  for (const Shade& shade : kShades) EXPECT_EQ(size_t(shade.colour), rows++);
  EXPECT_EQ(rows, kShades.rows().size());
}

TEST(WordTable, RowsOutOfOrderOrNamedTwiceAreRefused) {
  // A constexpr table like these does not compile; built at run time, it throws.
  const Word<Colour> swapped[] = {{Colour::Green, "green", ""}, {Colour::Red, "red", ""}};
  EXPECT_ANY_THROW((WordTable<Word<Colour>, &Word<Colour>::value, 2>(swapped)));
  const Word<Colour> twice[] = {{Colour::Red, "red", ""}, {Colour::Green, "red", ""}};
  EXPECT_ANY_THROW((WordTable<Word<Colour>, &Word<Colour>::value, 2>(twice)));
}

}  // namespace
}  // namespace locklab
