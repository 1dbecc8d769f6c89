#!/usr/bin/env bash
# Builds every target with clang-14: clang's thread-safety analysis (the
# ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations checked at
# compile time, as errors) and layering_check (a header may be included only
# from a direct dependency, so visibility cannot be bypassed by including a
# header a transitive dependency happens to bring).
#
#   tools/clang_check.sh          build everything with --config=clang
#   tools/clang_check.sh test     build everything and run the whole suite
#                                 with --config=fuzz (the same checks, plus
#                                 ASan and UBSan; fuzz targets replay their
#                                 corpora), showing Bazel's test summary
#
# Uses an output base of its own, next to Bazel's default one (tools/fuzz.sh
# uses it too), and shuts its server down at the end. Prints one line
# "clang: ok ..." or "clang: FAIL ...".
set -uo pipefail
cd "$(dirname "$0")/.."

mode="${1:-build}"
if ! command -v clang-14 >/dev/null ||
  ! dpkg-query -W -f='${Status}' libclang-rt-14-dev 2>/dev/null |
  grep -q "install ok installed"; then
  echo "clang_check: installing clang-14 and its sanitizer runtimes" >&2
  apt-get install -y --no-install-recommends clang-14 libclang-rt-14-dev >&2 ||
    { echo "clang: FAIL clang-14 could not be installed"; exit 1; }
fi

output_base="${KAAS_CLANG_OUTPUT_BASE:-${HOME}/.cache/kaas-storage-clang}"
log="$(mktemp)"
# The targets are listed first: //... walks into the convenience symlink
# bazel-<workspace> (named after the checkout's directory, so .bazelignore
# cannot name it), whose external repositories do not load. --keep_going
# lists every loadable target; what lies under a bazel-* link is dropped.
# Manual targets are the layering probes, which must not build.
targets="$(mktemp)"
bazel query --keep_going \
  'kind(rule, //...) except attr(tags, "manual", //...)' 2>"${log}" |
  grep -v '^//bazel-' >"${targets}"
if ! grep -q '^//' "${targets}"; then
  tail -n 20 "${log}"
  echo "clang: FAIL no targets found"
  rm -f "${log}" "${targets}"
  exit 1
fi
# --symlink_prefix=/: no convenience symlinks. Repointed into this output
# base, bazel-<workspace> would make a later `bazel test //...` in the
# default output base walk into this one's external repositories.
if [[ "${mode}" == test ]]; then
  bazel --output_base="${output_base}" test --config=fuzz -k --symlink_prefix=/ \
    --target_pattern_file="${targets}" 2>&1 | tee "${log}"
  rc=${PIPESTATUS[0]}
  what="thread-safety analysis, layering_check and the suite under ASan+UBSan"
else
  bazel --output_base="${output_base}" build --config=clang -k --symlink_prefix=/ \
    --target_pattern_file="${targets}" >"${log}" 2>&1
  rc=$?
  what="thread-safety analysis and layering_check"
fi
bazel --output_base="${output_base}" shutdown >/dev/null 2>&1
if [[ ${rc} -eq 0 ]]; then
  echo "clang: ok ${what}"
else
  grep -E 'error:|ERROR:' "${log}" | sort -u | head -n 60
  echo "clang: FAIL ${what} (see above)"
fi
rm -f "${log}" "${targets}"
exit "${rc}"
