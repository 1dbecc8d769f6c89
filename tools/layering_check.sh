#!/usr/bin/env bash
# Proves that the layering of bazel/BUILD.bazel is enforced:
#   1. each forbidden dependency below (a `manual` probe target checked into
#      the package that must not have it) fails to build with Bazel's
#      "is not visible" error;
#   2. every package's production libraries depend only on the packages
#      below it (a `bazel query` of their dependencies), so an arrow that
#      runs upward fails even where the target it reaches is public;
#   3. the engine's layers read the time only through base/clock.h's Clock
#      (or base/stopwatch.h for statistics), so time-based behaviour is
#      testable on a ManualClock;
#   4. the owners of files listed in docs/ARCHITECTURE.md are exactly the
#      packages //fs:file_opener is visible to (the probes of 1. show the
#      others cannot open files).
# Prints one "layering: ok <what>" or "layering: FAIL <what>" line per check.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0

# label of the probe -> the forbidden edge it tries.
probes=(
  "//idempotence:layering_probe_reaches_partition|idempotence -> storage/partition"
  "//txn:layering_probe_opens_files|txn opens files"
  "//storage/segment:layering_probe_reaches_partition|storage/segment -> storage/partition (upward)"
  "//cleaner:layering_probe_opens_files|cleaner opens files"
  "//cleaner:layering_probe_reaches_partition|cleaner -> storage/partition"
  "//placement:layering_probe_opens_files|placement opens files"
  "//storage/partition:layering_probe_opens_files|storage/partition opens files"
  "//storage/engine:layering_probe_opens_files|storage/engine opens files outside its small-file unit"
  "//storage/engine:layering_probe_reaches_broker|storage/engine -> examples/broker (the broker consumes the engine)"
)

for entry in "${probes[@]}"; do
  label="${entry%%|*}"
  what="${entry#*|}"
  out="$(bazel build "$label" 2>&1)"
  if [[ $? -ne 0 ]] && grep -q "is not visible from target" <<<"$out"; then
    echo "layering: ok forbidden dependency rejected: $what ($label)"
  else
    echo "layering: FAIL dependency not rejected as invisible: $what ($label)"
    echo "$out" | tail -n 20
    status=1
  fi
done

# package -> the repository packages its production (not testonly) libraries
# may depend on, itself and //bazel (the visibility groups) aside.
allowed_deps=(
  "base|"
  "fs|base"
  "storage/batch|base"
  "storage/common|base"
  "placement|base"
  "idempotence|base"
  "txn|base"
  "storage/segment|base fs storage/batch"
  "storage/metadata|base fs storage/batch storage/common idempotence txn"
  "storage/partition|base fs storage/batch storage/common storage/metadata storage/segment idempotence txn"
  "storage/engine/small_files|base fs"
  "storage/engine|base fs storage/batch storage/common storage/metadata storage/segment storage/partition storage/engine/small_files idempotence txn placement"
  "cleaner|base storage/common storage/engine storage/partition"
)
for entry in "${allowed_deps[@]}"; do
  pkg="${entry%%|*}"
  allowed=" ${entry#*|} $pkg bazel "
  query="deps(attr(testonly, 0, kind('cc_library', //$pkg/...))
    except attr(name, 'layering_probe', //$pkg/...))"
  reached="$(bazel query "$query" 2>/dev/null | sed -nE 's#^//([^:]*):.*#\1#p' |
    sort -u)"
  upward=""
  for dep in $reached; do
    [[ "$allowed" == *" $dep "* ]] || upward+=" //$dep"
  done
  if [[ -z "$reached" ]]; then
    echo "layering: FAIL could not query the dependencies of //$pkg"
    status=1
  elif [[ -z "$upward" ]]; then
    echo "layering: ok //$pkg depends only on packages below it"
  else
    echo "layering: FAIL //$pkg depends on packages it must not:$upward"
    status=1
  fi
done

# check_only_in WHAT PATTERN ALLOWED_DIRS: lines of production sources (not
# tests, not comments) that match the extended regex PATTERN may appear only
# under the directories of the regex ALLOWED_DIRS.
check_only_in() {
  local what="$1" pattern="$2" allowed="$3" offenders
  offenders="$(git grep -nE "$pattern" -- '*.cc' '*.h' ':!*_test.cc' \
    ':!third_party' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' |
    grep -vE "^($allowed)/" || true)"
  if [[ -z "$offenders" ]]; then
    echo "layering: ok $what"
  else
    echo "layering: FAIL not true that $what:"
    echo "$offenders"
    status=1
  fi
}

# Direct reads of the real clock (base implements Clock, Stopwatch and the
# TimerThread; tools and benchmarks measure real time on purpose).
check_only_in "the engine reads time only through Clock or Stopwatch" \
  'absl::Now\(|GetCurrentTime|(system|steady|high_resolution)_clock::now|\btime\(nullptr\)|clock_gettime' \
  'base|tools|bench|testing|examples'

# The owners of files: //bazel:file_openers must list exactly the packages of
# the table in docs/ARCHITECTURE.md, and //fs:file_opener must be visible to
# that group alone.
group_packages="$(sed -n '/name = "file_openers"/,/^)/p' bazel/BUILD.bazel |
  grep -oE '"//[^"]+"' | tr -d '"' | sort)"
doc_packages="$(sed -n '/<!-- file_openers: begin/,/<!-- file_openers: end/p' \
  docs/ARCHITECTURE.md | grep -oE '^\| `//[^`]+`' | grep -oE '//[^`]+' | sort)"
opener_visibility="$(bazel query 'attr(visibility, "//bazel:file_openers", //fs:file_opener)' 2>/dev/null)"
if [[ -n "$group_packages" && "$group_packages" == "$doc_packages" &&
      "$opener_visibility" == "//fs:file_opener" ]]; then
  echo "layering: ok the owners of files in docs/ARCHITECTURE.md are //bazel:file_openers"
else
  echo "layering: FAIL docs/ARCHITECTURE.md's owners of files and //bazel:file_openers differ:"
  diff <(echo "$doc_packages") <(echo "$group_packages")
  [[ "$opener_visibility" == "//fs:file_opener" ]] ||
    echo "//fs:file_opener is not visible to //bazel:file_openers alone"
  status=1
fi

exit "$status"
