// File: testing/tsan_suppressions.cc
//
// Built-in ThreadSanitizer suppressions, linked into every test binary by
// kaas_cc_test (TSan calls __tsan_default_suppressions at startup; the
// symbol is unused in other builds).
//
// NewThreadIdentity: a known false positive of absl::Mutex under TSan with
// gcc (google/sanitizers#953). A thread that blocks on an absl::Mutex for the
// first time mmaps its per-thread semaphore after the point where TSan models
// its unlock, so the thread that later wakes it (Waiter::Post) seems to race
// with that mmap. Only reports with the identity's allocation in one of the
// stacks are suppressed; real races on our data still fail the tests.
//
// Waiter::Post: the same false positive when TSan can no longer restore the
// stack of the mmap (its history buffer has wrapped): the report then names
// only the waking thread, inside absl's per-thread semaphore. That code
// touches nothing but absl's own per-thread state, so no race on our data
// has it on a stack.
//
// CalcGmtOffset: glog computes each log line's GMT offset with localtime_r,
// whose tzset frees and strdups the TZ name under glibc's own lock, which
// TSan (glibc is not instrumented) cannot see: two threads logging at once
// look like a race inside libc. Only stacks through glog's time code match.

extern "C" const char* __tsan_default_suppressions() {
  return "race:NewThreadIdentity\n"
         "race:synchronization_internal::Waiter::Post\n"
         "race:google::LogMessageTime::CalcGmtOffset\n";
}
