"""Build conventions shared by every kaas-storage package.

KAAS_COPTS: warnings for our own code (external repositories keep theirs).
KAAS_FEATURES: our targets ask for clang's layering_check (a header may be
included only from a direct dependency); toolchains without the feature
(gcc) ignore it, and `--config=clang` (tools/clang_check.sh) enforces it,
together with clang's thread-safety analysis as errors.
kaas_cc_test: a cc_test with our copts, gtest_main, the project's TSan
suppressions and `size = "small"` unless told otherwise.
kaas_fuzz_test: a libFuzzer target (LLVMFuzzerTestOneInput) that is also a
test replaying its seed corpus.
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

def kaas_fuzz_test(name, srcs, corpus, deps = [], dictionary = None, **kwargs):
    """A libFuzzer target that `bazel test` runs once over its seed corpus.

    Under --config=fuzz (which defines kaas_fuzz=1) the binary is linked
    with libFuzzer, and `./dev fuzz` runs it for as long as asked, on a
    copy of `corpus` with `dictionary`; otherwise //testing/fuzz:replay_main
    is its main. Either way the test's arguments are the corpus files, which
    both mains run once each.

    Args:
      name: the target; `./dev fuzz NAME` finds it by this name.
      srcs: sources defining LLVMFuzzerTestOneInput.
      corpus: seed inputs (files; a crash's input joins them as a
        regression test).
      deps: libraries under test.
      dictionary: an optional libFuzzer dictionary file.
      **kwargs: passed to cc_test.
    """
    native.cc_test(
        name = name,
        srcs = srcs,
        size = kwargs.pop("size", "small"),
        copts = KAAS_COPTS,
        features = KAAS_FEATURES,
        deps = deps + ["//testing:tsan_suppressions"] + select({
            "//bazel:fuzzing": [],
            "//conditions:default": ["//testing/fuzz:replay_main"],
        }),
        linkopts = select({
            "//bazel:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        data = corpus + ([dictionary] if dictionary else []),
        args = ["$(location %s)" % f for f in corpus],
        tags = kwargs.pop("tags", []) + ["fuzz_target"],
        **kwargs
    )
