// File: base/status_future.h
//
// A one-shot asynchronous result: an absl::Status that becomes known later.
// The engine returns a StatusFuture from Append so that the caller can learn
// when the appended bytes are durable without blocking a thread: an event-loop
// broker attaches a callback, a thread-per-request broker calls Wait().
//
//   StatusPromise promise;
//   StatusFuture done = promise.GetFuture();
//   done.Then([](const absl::Status& s) { ... });   // or done.Wait()
//   promise.Set(absl::OkStatus());                  // runs the callback
//
// A promise destroyed without being set completes its future with
// kCancelled, so a waiter is never left hanging.
//
// Thread-safety: all methods of both classes are safe for concurrent use.
// Callbacks run exactly once, either on the thread calling Then() (if the
// result is already known) or on the thread calling Set(). They must be
// short and must not block: Set() is called from the engine's I/O threads,
// its timer thread (a watchdog stall), a thread in AppendAndWait that runs a
// sync cycle itself, and the threads calling lifecycle methods (waiters
// failed by a relinquish or a delete).

#ifndef KAAS_BASE_STATUS_FUTURE_H_
#define KAAS_BASE_STATUS_FUTURE_H_

#include <memory>
#include <optional>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kaas {

namespace future_internal {
struct State;
}  // namespace future_internal

using StatusCallback = absl::AnyInvocable<void(const absl::Status&) &&>;

class StatusFuture {
 public:
  // An already completed future.
  static StatusFuture Ready(absl::Status status);

  // Copies share the same result.
  StatusFuture(const StatusFuture&) = default;
  StatusFuture& operator=(const StatusFuture&) = default;
  StatusFuture(StatusFuture&&) = default;
  StatusFuture& operator=(StatusFuture&&) = default;

  bool IsReady() const;

  // Blocks until the result is known and returns it.
  absl::Status Wait() const;

  // Blocks at most `timeout`; nullopt if the result is still unknown.
  std::optional<absl::Status> WaitFor(absl::Duration timeout) const;

  // Runs `callback` with the result once it is known (see file comment).
  void Then(StatusCallback callback) const;

 private:
  friend class StatusPromise;
  explicit StatusFuture(std::shared_ptr<future_internal::State> state)
      : state_(std::move(state)) {}

  std::shared_ptr<future_internal::State> state_;
};

class StatusPromise {
 public:
  StatusPromise();
  ~StatusPromise();  // completes with kCancelled if never set

  StatusPromise(StatusPromise&&) = default;
  StatusPromise& operator=(StatusPromise&&);
  StatusPromise(const StatusPromise&) = delete;
  StatusPromise& operator=(const StatusPromise&) = delete;

  StatusFuture GetFuture() const { return StatusFuture(state_); }

  // Completes the future. Only the first call has an effect. Runs the
  // registered callbacks on this thread, after releasing internal locks.
  void Set(absl::Status status);

 private:
  std::shared_ptr<future_internal::State> state_;
};

}  // namespace kaas

#endif  // KAAS_BASE_STATUS_FUTURE_H_
