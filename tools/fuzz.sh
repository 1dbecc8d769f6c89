#!/usr/bin/env bash
# Runs the libFuzzer targets (kaas_fuzz_test in bazel/kaas.bzl), built with
# --config=fuzz (clang-14, ASan + UBSan) in tools/clang_check.sh's output
# base:
#
#   tools/fuzz.sh [TARGET...] [--seconds=N]     (./dev fuzz installs clang)
#   tools/fuzz.sh opfuzz [--seeds=N] [--first-seed=M]
#
# TARGET is a target's name (record_batch_fuzzer) or label; none means all.
# Each target fuzzes for N seconds (default 60) on a working corpus kept in
# ${KAAS_FUZZ_DIR:-~/.cache/kaas-storage-fuzz}/NAME (so runs build on each
# other), starting from its checked-in seeds (PACKAGE/fuzz_corpus/NAME) and
# with its dictionary (PACKAGE/fuzz_corpus/NAME.dict) if it has one. An
# input that takes over 10 s counts as a hang. Prints one line per target,
# "fuzz: ok NAME ..." or "fuzz: FAIL NAME ..." naming the input that failed
# (copy it into the target's fuzz_corpus dir: it becomes a regression test
# `bazel test` replays), and exits non-zero if any failed.
#
# `opfuzz` runs the model-based operation fuzzer instead
# (storage/engine/engine_opfuzz_test.cc: the disk engine against the memory
# engine) over N seeds from M (default 1000 from 1); a divergence prints
# the seed and a shrunk replay.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=60
seeds=1000
first_seed=1
names=()
for arg in "$@"; do
  case "${arg}" in
    --seconds=*) seconds="${arg#--seconds=}" ;;
    --seeds=*) seeds="${arg#--seeds=}" ;;
    --first-seed=*) first_seed="${arg#--first-seed=}" ;;
    -h | --help)
      sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) names+=("${arg##*:}") ;;
  esac
done

if [[ "${names[*]:-}" == opfuzz ]]; then
  # Roughly 0.2 s a seed; five times that as the timeout. Only fatal log
  # lines: the injected faults log thousands of warnings, which would push
  # the summary past what Bazel prints of a test's output.
  bazel test //storage/engine:engine_opfuzz_test --test_output=all \
    --test_env=GLOG_minloglevel=3 \
    --test_env=KAAS_OPFUZZ_SEEDS="${seeds}" \
    --test_env=KAAS_OPFUZZ_FIRST_SEED="${first_seed}" \
    --test_timeout=$((seeds + 60)) 2>&1 |
    grep -a -E '^opfuzz:|Failure|seed [0-9]+:|shrunk|^  [a-z]|PASSED|FAILED'
  exit "${PIPESTATUS[0]}"
fi

output_base="${KAAS_CLANG_OUTPUT_BASE:-${HOME}/.cache/kaas-storage-clang}"
fuzz_root="${KAAS_FUZZ_DIR:-${HOME}/.cache/kaas-storage-fuzz}"
bz() { bazel --output_base="${output_base}" "$@"; }

# As in tools/clang_check.sh: skip what lies under a bazel-* link.
mapfile -t all < <(bz query --keep_going \
  'attr(tags, "fuzz_target", kind(cc_test, //...))' 2>/dev/null |
  grep -v '^//bazel-')
labels=()
for label in "${all[@]}"; do
  if ((${#names[@]} == 0)); then
    labels+=("${label}")
    continue
  fi
  for name in "${names[@]}"; do
    [[ "${label##*:}" == "${name}" ]] && labels+=("${label}")
  done
done
if ((${#labels[@]} == 0)); then
  echo "fuzz: FAIL no fuzz target matches: ${names[*]:-(none found)}"
  exit 1
fi

if ! bz build --config=fuzz --symlink_prefix=/ "${labels[@]}" >"${fuzz_root}.build.log" 2>&1; then
  grep -E 'error:|ERROR:' "${fuzz_root}.build.log" | head -n 40
  echo "fuzz: FAIL the fuzz targets do not build (--config=fuzz)"
  exit 1
fi
bin_dir="$(bz info --config=fuzz bazel-bin 2>/dev/null)"

failed=0
for label in "${labels[@]}"; do
  package="${label#//}"
  package="${package%%:*}"
  name="${label##*:}"
  work="${fuzz_root}/${name}"
  mkdir -p "${work}/corpus" "${work}/crashes"
  seeds="${package}/fuzz_corpus/${name}"
  dict=()
  [[ -f "${seeds}.dict" ]] && dict=("-dict=${seeds}.dict")
  "${bin_dir}/${package}/${name}" -max_total_time="${seconds}" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="${work}/crashes/" "${dict[@]}" \
    "${work}/corpus" "${seeds}" >"${work}/log" 2>&1
  rc=$?
  runs="$(grep -a 'stat::number_of_executed_units' "${work}/log" |
    awk '{print $2}')"
  corpus="$(find "${work}/corpus" -type f | wc -l)"
  if ((rc == 0)); then
    echo "fuzz: ok ${name}: ${runs:-?} runs in ${seconds} s, corpus ${corpus} inputs"
  else
    failed=$((failed + 1))
    grep -a -E 'ERROR|Check failed|SUMMARY|runtime error|deadly signal|timeout' \
      "${work}/log" | head -n 20
    input="$(ls -t "${work}/crashes" 2>/dev/null | head -n 1)"
    echo "fuzz: FAIL ${name}: input ${work}/crashes/${input:-?} (log ${work}/log);" \
      "add it to ${seeds}/ as a regression test"
  fi
done
exit $((failed > 0))
