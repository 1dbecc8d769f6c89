"""Build conventions shared by every kaas-storage package.

KAAS_COPTS: warnings for our own code (external repositories keep theirs).
KAAS_FEATURES: our targets ask for clang's layering_check (a header may be
included only from a direct dependency); toolchains without the feature
(gcc) ignore it, and `--config=clang` (tools/clang_check.sh) enforces it,
together with clang's thread-safety analysis as errors.
kaas_cc_test: a cc_test with our copts, gtest_main, the project's TSan
suppressions and `size = "small"` unless told otherwise.
"""

KAAS_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
]

KAAS_FEATURES = ["layering_check"]

def kaas_cc_library(name, copts = [], features = [], **kwargs):
    native.cc_library(
        name = name,
        copts = KAAS_COPTS + copts,
        features = KAAS_FEATURES + features,
        **kwargs
    )

def kaas_cc_binary(name, copts = [], features = [], **kwargs):
    native.cc_binary(
        name = name,
        copts = KAAS_COPTS + copts,
        features = KAAS_FEATURES + features,
        **kwargs
    )

def kaas_cc_test(name, deps = [], copts = [], features = [], size = "small", **kwargs):
    native.cc_test(
        name = name,
        size = size,
        copts = KAAS_COPTS + copts,
        features = KAAS_FEATURES + features,
        deps = deps + [
            "@com_google_googletest//:gtest_main",
            # TSan's known absl::Mutex false positive under gcc.
            "//testing:tsan_suppressions",
        ],
        **kwargs
    )
