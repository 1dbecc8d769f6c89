#include "bench/child_protocol.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

TEST(ChildProtocol, ArgumentsRoundTrip) {
  ChildWriteSpec spec;
  spec.data_dir = "/d/x y";
  spec.topic = "bench";
  spec.shape = kBatch1KiB;
  spec.bytes = 12345;
  spec.flush_interval_messages = 1;
  spec.crash = true;
  ASSERT_OK_AND_ASSIGN(ChildWriteSpec parsed,
                       ParseChildWriteArgs(ChildWriteArgs(spec)));
  EXPECT_EQ(parsed.data_dir, spec.data_dir);
  EXPECT_EQ(parsed.topic, spec.topic);
  EXPECT_EQ(parsed.shape.name, "1KiB");
  EXPECT_EQ(parsed.shape.records, 8);
  EXPECT_EQ(parsed.bytes, 12345u);
  EXPECT_EQ(parsed.flush_interval_messages, 1);
  EXPECT_TRUE(parsed.crash);
}

TEST(ChildProtocol, BadArgumentsAreNamed) {
  std::vector<std::string> good = ChildWriteArgs(ChildWriteSpec{"/d", "t"});
  auto with = [&](std::string arg) {
    std::vector<std::string> args = good;
    args.push_back(std::move(arg));
    return ParseChildWriteArgs(args).status();
  };
  EXPECT_THAT(with("--color=red"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("color")));
  EXPECT_THAT(
      with("--topic=again"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("given twice")));
  EXPECT_THAT(with("stray"), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("malformed")));
  std::vector<std::string> args = good;
  args.erase(args.begin());  // --data_dir
  EXPECT_THAT(
      ParseChildWriteArgs(args).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("data_dir")));
  args = good;
  args[2] = "--batch=4KiB";
  EXPECT_THAT(ParseChildWriteArgs(args).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("4KiB")));
  args = good;
  args[3] = "--bytes=lots";
  EXPECT_THAT(ParseChildWriteArgs(args).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lots")));
  args = good;
  args[5] = "--end=sometime";
  EXPECT_THAT(
      ParseChildWriteArgs(args).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sometime")));
}

TEST(ChildProtocol, ReportIsFoundAmongOtherOutput) {
  ChildWriteReport report{800, 790, 100, 1633300};
  const std::string out =
      "some log line\n" + FormatChildReport(report) + "another\n";
  ASSERT_OK_AND_ASSIGN(ChildWriteReport parsed, ParseChildReport(out));
  EXPECT_EQ(parsed.end_offset, 800);
  EXPECT_EQ(parsed.high_watermark, 790);
  EXPECT_EQ(parsed.batches, 100);
  EXPECT_EQ(parsed.bytes, 1633300u);
}

TEST(ChildProtocol, MissingOrBrokenReportFails) {
  EXPECT_THAT(ParseChildReport("crashed before reporting\n").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no report line")));
  EXPECT_THAT(ParseChildReport("bench-child end_offset=1\n").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("high_watermark")));
}

}  // namespace
}  // namespace kaas::bench
