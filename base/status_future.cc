#include "base/status_future.h"

#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/inlined_vector.h"
#include "absl/synchronization/mutex.h"

namespace kaas {
namespace future_internal {

struct State {
  absl::Mutex mu;
  bool ready ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
  absl::InlinedVector<StatusCallback, 1> callbacks ABSL_GUARDED_BY(mu);

  bool IsReady() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return ready; }
};

}  // namespace future_internal

using future_internal::State;

StatusFuture StatusFuture::Ready(absl::Status status) {
  auto state = std::make_shared<State>();
  {
    absl::MutexLock lock(&state->mu);
    state->ready = true;
    state->status = std::move(status);
  }
  return StatusFuture(std::move(state));
}

bool StatusFuture::IsReady() const {
  absl::MutexLock lock(&state_->mu);
  return state_->ready;
}

absl::Status StatusFuture::Wait() const {
  absl::MutexLock lock(&state_->mu);
  state_->mu.Await(absl::Condition(state_.get(), &State::IsReady));
  return state_->status;
}

std::optional<absl::Status> StatusFuture::WaitFor(
    absl::Duration timeout) const {
  absl::MutexLock lock(&state_->mu);
  if (!state_->mu.AwaitWithTimeout(
          absl::Condition(state_.get(), &State::IsReady), timeout)) {
    return std::nullopt;
  }
  return state_->status;
}

void StatusFuture::Then(StatusCallback callback) const {
  absl::Status status;
  {
    absl::MutexLock lock(&state_->mu);
    if (!state_->ready) {
      state_->callbacks.push_back(std::move(callback));
      return;
    }
    status = state_->status;
  }
  std::move(callback)(status);
}

StatusPromise::StatusPromise() : state_(std::make_shared<State>()) {}

StatusPromise::~StatusPromise() {
  if (state_ != nullptr) {
    Set(absl::CancelledError("the operation was abandoned before completing"));
  }
}

StatusPromise& StatusPromise::operator=(StatusPromise&& other) {
  if (this != &other) {
    if (state_ != nullptr) {
      Set(absl::CancelledError(
          "the operation was abandoned before completing"));
    }
    state_ = std::move(other.state_);
  }
  return *this;
}

void StatusPromise::Set(absl::Status status) {
  absl::InlinedVector<StatusCallback, 1> callbacks;
  {
    absl::MutexLock lock(&state_->mu);
    if (state_->ready) return;
    state_->ready = true;
    state_->status = status;
    callbacks.swap(state_->callbacks);
  }
  for (StatusCallback& callback : callbacks) std::move(callback)(status);
}

}  // namespace kaas
