// The one way the lab maps an enum to its words. A table is an array of rows,
// one per enumerator, in enum order: row i holds the enumerator whose value
// is i, and no two rows share a name, which the table checks when it is built
// (at compile time for a constexpr table). A row is a Word (the enumerator,
// its name, its meaning) or any struct with such a key, a `name` and a
// `meaning`: WordTable<Row, &Row::kind, kCount> kRows({{…}, …}).
//
//   inline constexpr auto kColours = word_table<Colour>({
//       {Colour::Red, "red", "the colour of danger"},
//       {Colour::Green, "green", "the colour of safety"},
//   });
//   kColours.name(Colour::Red)  → "red"
//   kColours.named("green")     → Colour::Green
//   kColours.list()             → "red, green"
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace locklab {

// A row of a table that holds only words.
template <class Enum>
struct Word {
  Enum value;
  std::string_view name;     // as files, flags and messages spell it
  std::string_view meaning;  // one line for people
};

// The rows of `Row` keyed by the member `Key` (an enumerator), one per value.
template <class Row, auto Key, size_t N>
class WordTable {
 public:
  using Enum = std::remove_cvref_t<decltype(std::declval<const Row&>().*Key)>;
  static_assert(std::is_enum_v<Enum>, "a word table is keyed by an enum");

  // Throws (and so does not compile, for a constexpr table) unless row i
  // holds the enumerator i and no two rows have the same name.
  constexpr explicit WordTable(const Row (&rows)[N]) : rows_(std::to_array(rows)) { check(); }
  // Whether row i holds the enumerator i and no two rows share a name.
  static constexpr bool in_order(const std::array<Row, N>& rows) {
    for (size_t i = 0; i < N; ++i) {
      if (static_cast<size_t>(rows[i].*Key) != i) return false;
      for (size_t j = 0; j < i; ++j)
        if (rows[j].name == rows[i].name) return false;
    }
    return true;
  }

  static constexpr size_t size() { return N; }
  constexpr std::span<const Row, N> rows() const { return rows_; }
  constexpr auto begin() const { return rows_.begin(); }
  constexpr auto end() const { return rows_.end(); }

  // The row of `value`.
  constexpr const Row& operator[](Enum value) const { return rows_[static_cast<size_t>(value)]; }
  constexpr std::string_view name(Enum value) const { return (*this)[value].name; }
  constexpr std::string_view meaning(Enum value) const { return (*this)[value].meaning; }

  // The row named `name`, or nullptr.
  constexpr const Row* find(std::string_view name) const {
    for (const Row& row : rows_)
      if (row.name == name) return &row;
    return nullptr;
  }
  // The enumerator named `name`, or nullopt.
  constexpr std::optional<Enum> named(std::string_view name) const {
    const Row* row = find(name);
    return row ? std::optional<Enum>(row->*Key) : std::nullopt;
  }

  // Every name, in table order, as a constant (a choice parameter's choices).
  constexpr std::array<std::string_view, N> name_array() const {
    std::array<std::string_view, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = rows_[i].name;
    return out;
  }
  // Every name, in table order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Row& row : rows_) out.emplace_back(row.name);
    return out;
  }
  // "a, b, c": every name, for messages.
  std::string list(std::string_view separator = ", ") const {
    std::string out;
    for (const Row& row : rows_) {
      if (!out.empty()) out += separator;
      out += row.name;
    }
    return out;
  }

 private:
  constexpr void check() const {
    if (!in_order(rows_))
      throw "a word table's rows must be in enum order (row i holds the enumerator i), each "
            "named once";
  }

  std::array<Row, N> rows_;
};

// A table of Words: word_table<Enum>({{Enum::A, "a", "…"}, …}).
template <class Enum, size_t N>
constexpr WordTable<Word<Enum>, &Word<Enum>::value, N> word_table(const Word<Enum> (&rows)[N]) {
  return WordTable<Word<Enum>, &Word<Enum>::value, N>(rows);
}

}  // namespace locklab
