// The command tree the shell completions and the man page are generated from: it holds every
// registered command and flag, and every value it offers is one the command accepts.
#include "command_tree.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acco/cli/app.hpp"

#include "command_spec.hpp"

namespace acco::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const CommandInfo& sub(const CommandInfo& command, const std::string& name) {
  for (const CommandInfo& c : command.commands) {
    if (c.name == name) {
      return c;
    }
  }
  ADD_FAILURE() << command.name << " has no command " << name;
  return command;
}

const FlagInfo* flag(const CommandInfo& command, const std::string& name) {
  for (const FlagInfo& f : command.flags) {
    for (const std::string& n : f.names) {
      if (n == name) {
        return &f;
      }
    }
  }
  return nullptr;
}

Result<Options> parse(const std::vector<std::string>& args) {
  return parse_args(args, [](const char*) -> const char* { return nullptr; });
}

// Every command under `command` with the words that name it, and each offered flag's value.
struct Offer {
  std::vector<std::string> words;  // "power", "run"
  const FlagInfo* flag;
};

void collect_offers(const CommandInfo& command, std::vector<std::string> words,
                    std::vector<Offer>& out) {
  for (const FlagInfo& f : command.flags) {
    if (!f.values.empty()) {
      out.push_back({words, &f});
    }
  }
  for (const FlagInfo& f : command.positionals) {
    if (!f.values.empty()) {
      out.push_back({words, &f});
    }
  }
  for (const CommandInfo& c : command.commands) {
    std::vector<std::string> below = words;
    below.push_back(c.name);
    collect_offers(c, below, out);
  }
}

// The command line that gives `value` to the offer's flag, with the flags it needs before it.
std::vector<std::string> line_for(const Offer& offer, const CommandInfo& command,
                                  const std::string& value) {
  std::vector<std::string> args = offer.words;
  for (const std::string& needed : offer.flag->needs) {
    const FlagInfo* n = flag(command, needed);
    args.push_back(needed);
    if (n != nullptr && n->kind != ValueKind::kNone) {
      args.push_back(n->values.empty() ? std::string("1") : n->values.front());
    }
  }
  // What some commands and values need besides: record a file and a duration, the storage suite
  // a file to read (made at run time), a --via other than auto device buffers.
  if (offer.words.front() == "record") {
    args.insert(args.end(), {"--out", "recording.jsonl", "--duration", "1s"});
  }
  if (offer.words.front() == "exec") {  // a device (unless the flag chooses it) and no command
    args.emplace_back("--dry-run");
    if (offer.flag->names.back() != "--local-rank") {
      args.insert(args.end(), {"--device", "0"});
    }
  }
  if (value == "storage") {
    args.insert(args.end(), {"--file", "data.bin", "--create", "1MiB"});
  }
  if (offer.flag->names.back() == "--via") {
    args.insert(args.end(), {"--buffers", "device"});
  }
  if (offer.flag->kind != ValueKind::kNone && offer.flag->names.front().starts_with("-")) {
    args.push_back(offer.flag->names.back());
  }
  args.push_back(value);
  return args;
}

const CommandInfo& command_at(const CommandInfo& root, const std::vector<std::string>& words) {
  const CommandInfo* c = &root;
  for (const std::string& w : words) {
    c = &sub(*c, w);
  }
  return *c;
}

TEST(CommandTreeTest, HoldsEveryRegisteredCommandInHelpOrder) {
  const CommandInfo root = command_tree();
  EXPECT_EQ(root.name, "acco");
  std::vector<std::string> names;
  for (const CommandInfo& c : root.commands) {
    names.push_back(c.name);
  }
  std::vector<std::string> registered;
  for (const CommandSpec& spec : commands()) {
    registered.emplace_back(spec.name);
  }
  EXPECT_EQ(names, registered);
  std::vector<std::string> power;
  for (const CommandInfo& c : sub(root, "power").commands) {
    power.push_back(c.name);
  }
  EXPECT_THAT(power, ElementsAre("status", "run"));
  ASSERT_NE(flag(root, "--version"), nullptr);
}

TEST(CommandTreeTest, FlagsCarryTheirValuesAndWhatCompletesThem) {
  const CommandInfo root = command_tree();
  const CommandInfo& bench = sub(root, "bench");
  const FlagInfo* backend = flag(bench, "--backend");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->kind, ValueKind::kChoice);
  EXPECT_THAT(backend->values, ElementsAre("auto", "host", "cuda"));
  EXPECT_EQ(backend->value_name, "NAME");
  const FlagInfo* min_bytes = flag(bench, "-b");
  ASSERT_NE(min_bytes, nullptr);
  EXPECT_THAT(min_bytes->names, ElementsAre("-b", "--min-bytes"));
  EXPECT_EQ(min_bytes->kind, ValueKind::kText);
  EXPECT_THAT(min_bytes->needs, ElementsAre("--collective"));
  EXPECT_EQ(flag(bench, "--quick")->kind, ValueKind::kNone);
  EXPECT_EQ(flag(bench, "--html")->kind, ValueKind::kFile);
  EXPECT_EQ(flag(sub(root, "probe"), "--sysroot")->kind, ValueKind::kDirectory);
  EXPECT_EQ(flag(sub(root, "probe"), "--nvml")->kind, ValueKind::kChoice);
  const CommandInfo& analyze = sub(root, "analyze");
  ASSERT_EQ(analyze.positionals.size(), 1U);
  EXPECT_EQ(analyze.positionals.front().kind, ValueKind::kFile);
  EXPECT_EQ(flag(sub(root, "bench"), "--nccl-library")->env, "ACCO_NCCL_LIBRARY");
}

TEST(CommandTreeTest, PathsNameEveryCommandDepthFirst) {
  const CommandInfo root = command_tree();
  std::vector<std::string> words;
  for (const CommandPath& path : command_paths(root)) {
    words.push_back(path.words);
  }
  ASSERT_GE(words.size(), 4U);
  EXPECT_EQ(words.front(), "acco");
  EXPECT_EQ(words[1], "acco probe");
  const auto power = std::find(words.begin(), words.end(), "acco power");
  ASSERT_NE(power, words.end());
  EXPECT_EQ(*(power + 1), "acco power status");
  EXPECT_EQ(*(power + 2), "acco power run");
  EXPECT_EQ(words.size(), root.commands.size() + 3);  // acco, and power's status and run
}

// What the completions offer is what the commands accept: each offered value parses, and a value
// not offered is refused by the command's own check, which names the flag.
TEST(CommandTreeTest, EveryOfferedValueParsesAndOthersAreRefused) {
  const CommandInfo root = command_tree();
  std::vector<Offer> offers;
  collect_offers(root, {}, offers);
  EXPECT_GE(offers.size(), 20U);
  for (const Offer& offer : offers) {
    const CommandInfo& command = command_at(root, offer.words);
    for (const std::string& value : offer.flag->values) {
      const auto args = line_for(offer, command, value);
      const auto parsed = parse(args);
      EXPECT_TRUE(parsed.has_value())
          << ::testing::PrintToString(args) << ": " << parsed.error().message;
    }
    const auto args = line_for(offer, command, "not-a-value");
    const auto refused = parse(args);
    ASSERT_FALSE(refused.has_value()) << ::testing::PrintToString(args);
    EXPECT_EQ(refused.error().code, Errc::kUsage) << refused.error().message;
    const std::string named =
        offer.flag->names.front().starts_with("-") ? offer.flag->names.back() : offer.words.back();
    EXPECT_THAT(refused.error().message, HasSubstr(named)) << ::testing::PrintToString(args);
  }
}

TEST(CommandTreeTest, CompletionAndManNeedNoMachine) {
  const auto missing = parse_args({"man"}, [](const char* name) -> const char* {
    return std::string_view(name) == "ACCO_SYSROOT" ? "/nonexistent" : nullptr;
  });
  EXPECT_TRUE(missing.has_value());
  const auto shell = parse({"completion"});
  ASSERT_FALSE(shell.has_value());
  EXPECT_THAT(shell.error().message, HasSubstr("shell"));
}

}  // namespace
}  // namespace acco::cli
