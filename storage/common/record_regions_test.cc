#include "storage/common/record_regions.h"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

// A "file" of fixed bytes; counts the sends.
class StringSource final : public RecordSource {
 public:
  explicit StringSource(std::string bytes) : bytes_(std::move(bytes)) {}
  absl::StatusOr<size_t> ReadAt(uint64_t position, size_t n,
                                char* dst) const override {
    if (position >= bytes_.size()) return 0;
    return bytes_.copy(dst, n, position);
  }
  absl::StatusOr<size_t> SendTo(uint64_t position, size_t n,
                                int out_fd) const override {
    ++sends_;
    if (position >= bytes_.size()) return 0;
    const size_t want = std::min(n, bytes_.size() - position);
    const ssize_t w = ::write(out_fd, bytes_.data() + position, want);
    if (w < 0 && errno == EAGAIN) return 0;
    if (w < 0) return absl::ErrnoToStatus(errno, "write");
    return static_cast<size_t>(w);
  }
  const std::string& name() const override { return name_; }
  int sends() const { return sends_; }

 private:
  const std::string bytes_;
  const std::string name_ = "segment.log";
  mutable int sends_ = 0;
};

std::string Drain(int fd) {
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t r = ::read(fd, buffer, sizeof(buffer));
    if (r <= 0) break;
    out.append(buffer, static_cast<size_t>(r));
  }
  return out;
}

class RecordRegionsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::pipe2(pipe_, O_NONBLOCK), 0); }
  void TearDown() override {
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  int pipe_[2];
};

TEST_F(RecordRegionsTest, FileRangesAndBytesSendInOrder) {
  auto file = std::make_shared<StringSource>("0123456789");
  RecordRegions regions;
  regions.Append(file, 2, 3);           // "234"
  regions.Append(absl::Cord("-mem-"));  // bytes
  regions.Append(file, 7, 3);           // "789"
  EXPECT_EQ(regions.size(), 11u);
  EXPECT_THAT(regions.SendTo(pipe_[1]), IsOkAndHolds(11));
  EXPECT_EQ(Drain(pipe_[0]), "234-mem-789");
  EXPECT_THAT(regions.ToCord(), IsOkAndHolds(absl::Cord("234-mem-789")));
}

TEST_F(RecordRegionsTest, SendResumesFromAnyOffset) {
  auto file = std::make_shared<StringSource>("0123456789");
  RecordRegions regions;
  regions.Append(file, 0, 4);
  regions.Append(absl::Cord("abc"));
  regions.Append(file, 4, 6);  // not contiguous with the first range
  const std::string all = "0123abc456789";
  for (uint64_t from = 0; from <= all.size(); ++from) {
    EXPECT_THAT(regions.SendTo(pipe_[1], from),
                IsOkAndHolds(all.size() - from));
    EXPECT_EQ(Drain(pipe_[0]), all.substr(from));
  }
}

TEST_F(RecordRegionsTest, ContiguousRangesOfOneFileAreOneSend) {
  auto file = std::make_shared<StringSource>("0123456789");
  RecordRegions regions;
  regions.Append(file, 0, 3);
  regions.Append(file, 3, 4);
  regions.Append(file, 7, 3);
  EXPECT_THAT(regions.SendTo(pipe_[1]), IsOkAndHolds(10));
  EXPECT_EQ(file->sends(), 1);
  EXPECT_EQ(Drain(pipe_[0]), "0123456789");
}

TEST_F(RecordRegionsTest, AFullSocketStopsTheSendAndItResumes) {
  std::string big(200 * 1024, 'x');
  for (size_t i = 0; i < big.size(); ++i) big[i] = 'a' + i % 17;
  auto file = std::make_shared<StringSource>(big);
  RecordRegions regions;
  regions.Append(file, 0, big.size());
  std::string received;
  uint64_t sent = 0;
  int stops = 0;
  while (sent < regions.size()) {
    ASSERT_OK_AND_ASSIGN(uint64_t went, regions.SendTo(pipe_[1], sent));
    if (sent + went < regions.size()) ++stops;
    sent += went;
    received += Drain(pipe_[0]);
  }
  EXPECT_GT(stops, 0);  // a pipe holds 64 KiB
  EXPECT_EQ(received, big);
}

TEST_F(RecordRegionsTest, AFileShorterThanItsRangeIsDataLoss) {
  auto file = std::make_shared<StringSource>("0123");
  RecordRegions regions;
  regions.Append(file, 0, 10);
  EXPECT_THAT(regions.SendTo(pipe_[1]),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("segment.log ends at 4")));
  Drain(pipe_[0]);
  EXPECT_THAT(regions.ToCord(), StatusIs(absl::StatusCode::kDataLoss,
                                         HasSubstr("segment.log ends at 4")));
}

TEST_F(RecordRegionsTest, EmptyPiecesAreNotKept) {
  RecordRegions regions;
  regions.Append(absl::Cord());
  regions.Append(std::make_shared<StringSource>("x"), 0, 0);
  EXPECT_TRUE(regions.empty());
  EXPECT_THAT(regions.SendTo(pipe_[1]), IsOkAndHolds(0));
}

}  // namespace
}  // namespace kaas
