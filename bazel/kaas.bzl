"""Build conventions shared by every kaas-storage package.

KAAS_COPTS: warnings for our own code (external repositories keep theirs).
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

def kaas_cc_library(name, copts = [], **kwargs):
    native.cc_library(name = name, copts = KAAS_COPTS + copts, **kwargs)

def kaas_cc_binary(name, copts = [], **kwargs):
    native.cc_binary(name = name, copts = KAAS_COPTS + copts, **kwargs)

def kaas_cc_test(name, deps = [], copts = [], size = "small", **kwargs):
    native.cc_test(
        name = name,
        size = size,
        copts = KAAS_COPTS + copts,
        deps = deps + [
            "@com_google_googletest//:gtest_main",
            # TSan's known absl::Mutex false positive under gcc.
            "//testing:tsan_suppressions",
        ],
        **kwargs
    )
