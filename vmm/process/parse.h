// SPDX-License-Identifier: BSD-2-Clause
// Strict parsing of what users type: whole numbers, decimals, sizes,
// KEY=VALUE lists and command-line options. One set of rules for every
// kvmmio program (kvmmio, the benchmarks, net_report) and for the option
// words of the devices (--net, --disk, --fs, --vsock, --console: the
// program's device specifications, vmm/cli/device_specs.h). The
// program's, not the library's: the library takes typed configurations.
//
//  - numbers are decimal digits only, read with std::from_chars: no sign,
//    no space, no base prefix, no suffix unless the parser takes one, and
//    out-of-range values are refused, never wrapped or clamped;
//  - a KEY=VALUE list has no empty item (so no leading, doubled or
//    trailing comma), every item has a '=', and no key is given twice;
//  - a command-line option's value is the rest of "--name=VALUE" or the
//    next argument, which must not itself look like an option.
//
// Every error is a UserError whose message starts with what the user typed
// (`shown`, e.g. "--mem 1X" or "--net queues=+2") and says what to give
// instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


namespace kvmmio {

// A whole decimal number in [min, max].
uint64_t parse_uint(std::string_view text, std::string_view shown, uint64_t min, uint64_t max);

// A decimal number with an optional fraction ("5", "0.5"), in (0, max]:
// digits and at most one '.', nothing else (no sign, exponent, inf or nan).
double parse_positive_decimal(std::string_view text, std::string_view shown, double max);

// A size: a whole number with an optional binary suffix K, M, G or T
// (either case). A plain number counts units of 2^`plain_shift` bytes
// (0: bytes; 20: MiB, as --mem takes it). Overflow is refused.
uint64_t parse_size(std::string_view text, std::string_view shown, unsigned plain_shift);

// "k1=v1,k2=v2": the items in order. Throws for an empty list, an empty
// item, an item without '=', an empty key, or a key given twice. Values
// may be empty ("cmdline="): the caller decides.
using KeyValue = std::pair<std::string_view, std::string_view>;
std::vector<KeyValue> parse_key_values(std::string_view text, std::string_view shown);

// A command-line option of a program.
struct CliOption {
  std::string name;   // "--stores"
  std::string value;  // what the value is, for messages: "a number, e.g. --stores 20000"; empty: a flag
  std::function<void(const std::string& value)> set;  // a flag gets ""
  bool repeatable = false;
};

// Parses `args` (the program name left out) against `options`. Returns the
// arguments that are not options, in order; with `max_positional` of them
// at most. Throws UserError for an unknown option, a missing value ("--kernel
// --mem 1G": --kernel needs a value), a value given to a flag, an option
// given twice that is not repeatable, or too many other arguments. "--"
// ends the options. A value that starts with "--" can be given as
// --name=VALUE.
std::vector<std::string> parse_cli(const std::vector<CliOption>& options,
                                   const std::vector<std::string>& args, size_t max_positional);

}  // namespace kvmmio
