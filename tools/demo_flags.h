// File: tools/demo_flags.h
//
// The flags `kaaslog demo` shares with its hidden crash child (both defined
// in tools/demo.cc), and the topic the demo uses.

#ifndef KAAS_TOOLS_DEMO_FLAGS_H_
#define KAAS_TOOLS_DEMO_FLAGS_H_

#include <cstdint>

#include "absl/flags/declare.h"

ABSL_DECLARE_FLAG(int32_t, partitions);
ABSL_DECLARE_FLAG(int32_t, records_per_batch);
ABSL_DECLARE_FLAG(int32_t, value_bytes);
ABSL_DECLARE_FLAG(int32_t, crash_writers);
ABSL_DECLARE_FLAG(int64_t, segment_bytes);

namespace kaas::tools {

inline constexpr char kDemoTopic[] = "kaaslog-demo";

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_DEMO_FLAGS_H_
