#!/usr/bin/env bash
# The command line of `kaaslog`: help on every subcommand (exit 0) and usage
# errors (exit 2).

source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/kaaslog_test_lib.sh"

readonly SUBCOMMANDS=(demo bench dump verify append read)

test_help_on_every_subcommand_exits_0() {
  for subcommand in "${SUBCOMMANDS[@]}"; do
    kaaslog "${subcommand}" --help
    expect_rc 0
    expect_out "^Usage: kaaslog ${subcommand}"
    kaaslog "${subcommand}" -h
    expect_rc 0
    kaaslog help "${subcommand}"
    expect_rc 0
    expect_out "^Usage: kaaslog ${subcommand}"
  done
  # Help wins over a bad command line.
  kaaslog dump --bogus --help
  expect_rc 0
}

test_general_help_lists_the_public_subcommands() {
  kaaslog --help
  expect_rc 0
  for subcommand in "${SUBCOMMANDS[@]}"; do
    expect_out "^  ${subcommand} "
  done
  expect_no_out "child"
}

test_subcommand_help_lists_its_flags_with_defaults() {
  kaaslog append --help
  expect_rc 0
  expect_out '^  --data_dir \(default "\./kaas-data"\)'
  expect_out '^  --acks \(default "all"\)'
  expect_out '^  --epoch \(default -1\)'
  kaaslog bench --help
  expect_out '^  --scenarios '
  expect_out '^  --seconds \(default 10\)'
  expect_out '^  --warmup_seconds \(default 1\)'
  expect_out '^  --quick \(default false\)'
  expect_out '^  --format \(default "table"\)'
}

test_help_ends_with_what_each_exit_status_means() {
  for subcommand in "${SUBCOMMANDS[@]}"; do
    kaaslog "${subcommand}" --help
    expect_out "^Exit status: 0 "
    expect_out "2 usage\.$"
  done
}

test_a_wrong_number_of_positional_arguments_exits_2() {
  for subcommand in demo bench append read; do
    kaaslog "${subcommand}" stray
    expect_rc 2
    expect_err "kaaslog ${subcommand}: ${subcommand} takes no positional arguments"
  done
  kaaslog dump
  expect_rc 2
  expect_err "dump takes exactly one PATH"
  kaaslog verify a b
  expect_rc 2
  expect_err "verify takes exactly one DATA_DIR"
}

test_unknown_subcommand_exits_2() {
  kaaslog frobnicate
  expect_rc 2
  expect_err 'unknown subcommand "frobnicate"'
}

test_unknown_flag_exits_2() {
  kaaslog dump --bogus=1 x
  expect_rc 2
  expect_err 'unknown flag --bogus'
  # The demo is the default subcommand, and parses flags too.
  kaaslog --bogus
  expect_rc 2
}

test_flag_of_another_subcommand_exits_2() {
  kaaslog dump --repair x
  expect_rc 2
  expect_err 'unknown flag --repair \(not a flag of `kaaslog dump`\)'
}

test_bad_flag_values_exit_2() {
  kaaslog read --topic=t --offset=abc
  expect_rc 2
  expect_err 'invalid value "abc" for --offset'
  kaaslog append --topic
  expect_rc 2
  expect_err 'flag --topic needs a value'
  kaaslog append --topic=t --acks=2 </dev/null
  expect_rc 2
  expect_err '--acks must be all or 1'
  kaaslog read --topic=t --isolation=serializable
  expect_rc 2
  kaaslog bench --scenarios=a,z
  expect_rc 2
  expect_err 'unknown scenario "z"'
  kaaslog bench --format=xml
  expect_rc 2
  kaaslog demo --partitions=0
  expect_rc 2
  kaaslog dump --norecords=1 x
  expect_rc 2
}

test_bad_arguments_exit_2() {
  kaaslog dump
  expect_rc 2
  expect_err 'exactly one PATH'
  kaaslog verify a b
  expect_rc 2
  kaaslog append </dev/null
  expect_rc 2
  expect_err '--topic is required'
  kaaslog append --topic='bad/name' </dev/null
  expect_rc 2
  kaaslog read --topic=t extra
  expect_rc 2
}

test_both_flag_forms_are_accepted() {
  mkdir d
  kaaslog verify --norepair d
  expect_rc 0
  kaaslog verify -repair=false d
  expect_rc 0
  kaaslog dump --print_limit 8 --records d
  expect_rc 0
  # After "--" everything is positional.
  kaaslog dump -- --records
  expect_rc 1
  expect_out 'cannot dump --records'
}

for test in $(declare -F | awk '{print $3}' | grep '^test_'); do
  run_test "${test}"
done
finish
