#!/bin/sh
echo "bazel coverage is not available offline (no CoverageOutputGenerator)." >&2
exit 1
