// libFuzzer target: decoding .index and .timeindex files (which may be
// stale, torn or damaged; recovery then rebuilds them). The first byte
// picks the index kind, the next eight the segment's base offset, the next
// eight the .log size (and from it the
// segment's next offset); the rest is the file. Beyond "never fails, no
// crash", it checks that the kept prefix re-encodes to exactly the bytes
// it came from, that its entries are strictly ascending (as lookups
// assume), that a problem is reported unless every byte was kept, and that
// lookups on it never fail.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "storage/segment/offset_index.h"
#include "storage/segment/time_index.h"

namespace {

int64_t Take64(const uint8_t* data) {
  uint64_t v;
  std::memcpy(&v, data, sizeof(v));
  return static_cast<int64_t>(v);
}

template <typename Decoded>
void CheckPrefix(const Decoded& decoded, absl::string_view bytes,
                 size_t entry_size) {
  const std::string encoded = decoded.index.Encode();
  CHECK_EQ(encoded.size(), decoded.index.size() * entry_size);
  CHECK(absl::string_view(encoded) == bytes.substr(0, encoded.size()));
  if (encoded.size() < bytes.size()) CHECK(!decoded.problem.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 17) return 0;
  // Non-negative, as segment names hold; room above for the segment.
  const int64_t base_offset =
      static_cast<int64_t>(static_cast<uint64_t>(Take64(data + 1)) >> 2);
  const uint64_t log_size = static_cast<uint64_t>(Take64(data + 9)) >> 32;
  const absl::string_view bytes(reinterpret_cast<const char*>(data) + 17,
                                size - 17);
  if (data[0] % 2 == 0) {
    const kaas::segment::OffsetIndex::Decoded decoded =
        kaas::segment::OffsetIndex::Decode(base_offset, bytes, log_size);
    CheckPrefix(decoded, bytes, kaas::segment::kOffsetIndexEntrySize);
    const auto entries = decoded.index.entries();
    for (size_t i = 0; i < entries.size(); ++i) {
      CHECK_LT(entries[i].position, log_size);
      if (i > 0) {
        CHECK_GT(entries[i].offset, entries[i - 1].offset);
        CHECK_GT(entries[i].position, entries[i - 1].position);
      }
      CHECK(decoded.index.Lookup(entries[i].offset) == entries[i]);
    }
  } else {
    // The time index is checked against the segment's next offset.
    const int64_t next_offset =
        base_offset + static_cast<int64_t>(log_size >> 1);
    const kaas::segment::TimeIndex::Decoded decoded =
        kaas::segment::TimeIndex::Decode(base_offset, bytes, next_offset);
    CheckPrefix(decoded, bytes, kaas::segment::kTimeIndexEntrySize);
    const auto entries = decoded.index.entries();
    for (size_t i = 0; i < entries.size(); ++i) {
      CHECK_GE(entries[i].offset, base_offset);
      CHECK_LT(entries[i].offset, next_offset);
      if (i > 0) {
        CHECK_GT(entries[i].timestamp, entries[i - 1].timestamp);
        CHECK_GT(entries[i].offset, entries[i - 1].offset);
      }
    }
  }
  return 0;
}
