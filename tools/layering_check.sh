#!/usr/bin/env bash
# Proves that the layering of bazel/BUILD.bazel is enforced:
#   1. each forbidden dependency below (a `manual` probe target checked into
#      the package that must not have it) fails to build with Bazel's
#      "is not visible" error;
#   2. only the owners of files open them: calls that open files
#      (OpenForRead / OpenForWrite) appear only in //fs, //storage/segment,
#      //storage/metadata, //testing, //tools and //bench sources.
# Prints one "layering: ok <what>" or "layering: FAIL <what>" line per check.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0

# label of the probe -> the forbidden edge it tries.
probes=(
  "//idempotence:layering_probe_reaches_partition|idempotence -> storage/partition"
  "//txn:layering_probe_opens_files|txn -> fs"
  "//storage/segment:layering_probe_reaches_partition|storage/segment -> storage/partition (upward)"
  "//cleaner:layering_probe_opens_files|cleaner -> fs"
  "//cleaner:layering_probe_reaches_partition|cleaner -> storage/partition"
  "//placement:layering_probe_opens_files|placement -> fs"
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

# FileSystem::OpenForRead/OpenForWrite take a path (a non-empty argument
# list; Segment::OpenForWrite() takes none). Comments and tests, which damage
# files on purpose, are not production code paths.
offenders="$(git grep -nE '\bOpenFor(Read|Write)\([^)]' -- '*.cc' '*.h' \
  ':!*_test.cc' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' |
  grep -vE '^(fs|storage/segment|storage/metadata|testing|tools|bench)/' || true)"
if [[ -z "$offenders" ]]; then
  echo "layering: ok files are opened only by their owning layers"
else
  echo "layering: FAIL files opened outside their owning layers:"
  echo "$offenders"
  status=1
fi

exit "$status"
