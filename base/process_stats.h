// File: base/process_stats.h
//
// Small facts about the running process, read from /proc: used by stats and
// by the tests that prove the engine's thread count does not grow with the
// number of partitions.
//
// Thread-safety: pure functions of the process state.

#ifndef KAAS_BASE_PROCESS_STATS_H_
#define KAAS_BASE_PROCESS_STATS_H_

#include <cstdint>

namespace kaas {

// Number of threads of this process (the "Threads:" line of
// /proc/self/status), or -1 if it cannot be read.
int CurrentThreadCount();

// Number of open file descriptors (entries of /proc/self/fd), or -1.
int CurrentOpenFileDescriptors();

// Resident memory of this process in bytes (the "VmRSS:" line of
// /proc/self/status), or -1 if it cannot be read.
int64_t CurrentResidentBytes();

}  // namespace kaas

#endif  // KAAS_BASE_PROCESS_STATS_H_
