#include "acco/core/names.hpp"

#include <array>

#include <gtest/gtest.h>

namespace acco::core {
namespace {

enum class Color {
  kRed,
  kGreen,
  kBlue
};

const char* to_string(Color c) {
  switch (c) {
    case Color::kRed:
      return "red";
    case Color::kGreen:
      return "green";
    case Color::kBlue:
      return "blue";
  }
  return "red";
}

constexpr std::array kColors = {Color::kRed, Color::kGreen, Color::kBlue};

TEST(Names, FindsTheValueByItsName) {
  EXPECT_EQ(find_named("green", kColors), Color::kGreen);
  EXPECT_EQ(find_named("blue", kColors), Color::kBlue);
  EXPECT_FALSE(find_named("Green", kColors).has_value());
  EXPECT_FALSE(find_named("", kColors).has_value());
}

TEST(Names, ListsTheNamesForAnError) {
  EXPECT_EQ(name_list(kColors), "red, green or blue");
  EXPECT_EQ(name_list(std::array{Color::kBlue}), "blue");
  EXPECT_EQ(name_list(std::array{Color::kBlue, Color::kRed}), "blue or red");
}

}  // namespace
}  // namespace acco::core
