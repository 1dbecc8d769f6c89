#!/usr/bin/env bash
# Builds every target with clang-14 (--config=clang): clang's thread-safety
# analysis (the ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations
# checked at compile time, as errors) and layering_check (a header may be
# included only from a direct dependency, so visibility cannot be bypassed
# by including a header a transitive dependency happens to bring).
# Uses an output base of its own, next to Bazel's default one, and shuts
# its server down at the end. Prints one line "clang: ok" or "clang: FAIL".
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-14 >/dev/null; then
  echo "clang_check: installing clang-14" >&2
  apt-get install -y --no-install-recommends clang-14 >&2 ||
    { echo "clang: FAIL clang-14 could not be installed"; exit 1; }
fi

output_base="${KAAS_CLANG_OUTPUT_BASE:-${HOME}/.cache/kaas-storage-clang}"
log="$(mktemp)"
# Bazel skips its convenience symlinks (bazel-<workspace>, bazel-bin...) when
# they point into its own output base, but not the default output base's
# when building with this one: leave every top-level bazel-* link out.
excluded=()
for link in bazel-*; do
  [[ -L "${link}" ]] && ! grep -qx "${link}" .bazelignore &&
    excluded+=("-//${link}/...")
done
bazel --output_base="${output_base}" build --config=clang -k -- //... \
  "${excluded[@]}" >"${log}" 2>&1
rc=$?
bazel --output_base="${output_base}" shutdown >/dev/null 2>&1
if [[ ${rc} -eq 0 ]]; then
  echo "clang: ok thread-safety analysis and layering_check"
else
  grep -E 'error:|ERROR:' "${log}" | sort -u | head -n 60
  echo "clang: FAIL thread-safety analysis or layering_check (see above)"
fi
rm -f "${log}"
exit "${rc}"
