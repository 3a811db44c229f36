// SPDX-License-Identifier: BSD-2-Clause
// net_report: turns the main job's raw measurement files into the report:
// text on stdout and in DIR/report.txt, DIR/report.json, and a gnuplot
// script with its data (throughput.dat, pps.dat, fio.dat) for DIR/throughput.png. The work is in bench/report/;
// this file is the command line and the files.
//
//   net_report --raw FILE [--raw FILE]... --out DIR [--title TEXT]
//
// Exit status: 0 done, 2 bad usage, malformed input (the message names the
// file and line) or an output file that cannot be written.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/report/input_error.h"
#include "kvmmio/base/error.h"
#include "vmm/process/parse.h"
#include "bench/report/read_runs.h"
#include "bench/report/render_gnuplot.h"
#include "bench/report/render_json.h"
#include "bench/report/render_text.h"
#include "bench/report/report.h"

namespace report = kvmmio::report;

namespace {

constexpr const char* kUsage = "usage: net_report --raw FILE [--raw FILE]... --out DIR [--title TEXT]\n";

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "net_report: %s\n%s", what.c_str(), kUsage);
  std::exit(2);
}

void write_file(const std::filesystem::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) {
    std::fprintf(stderr, "net_report: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> raws;
  std::string out_dir;
  std::string title = "kvmmio: guest versus host network throughput";
  bool help = false;
  try {
    kvmmio::parse_cli(
        {{"--raw", "a raw measurement file (JSON lines), e.g. --raw raw.jsonl",
          [&raws](const std::string& v) { raws.push_back(v); }, /*repeatable=*/true},
         {"--out", "a directory, e.g. --out report", [&out_dir](const std::string& v) { out_dir = v; }},
         {"--title", "the chart's title", [&title](const std::string& v) { title = v; }},
         {"--help", "", [&help](const std::string&) { help = true; }}},
        std::vector<std::string>(argv + 1, argv + argc), 0);
  } catch (const kvmmio::UserError& e) {
    usage_error(e.what());
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (raws.empty()) usage_error("no --raw file given");
  if (out_dir.empty()) usage_error("no --out directory given");

  report::RawData raw;
  try {
    for (const std::string& path : raws) report::read_runs_file(path, raw);
  } catch (const report::InputError& e) {
    std::fprintf(stderr, "net_report: %s\n", e.what());
    return 2;
  }
  const report::Report rep = report::aggregate(raw);

  const std::filesystem::path dir(out_dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "net_report: cannot create %s: %s\n", out_dir.c_str(), ec.message().c_str());
    return 1;
  }
  const std::string text = report::render_text(rep, title);
  const report::GnuplotFiles plot = report::render_gnuplot(rep, title);
  write_file(dir / "report.txt", text);
  write_file(dir / "report.json", report::render_json(rep, title));
  write_file(dir / report::kGnuplotDataName, plot.data);
  write_file(dir / report::kGnuplotPpsDataName, plot.pps_data);
  write_file(dir / report::kGnuplotFioDataName, plot.fio_data);
  write_file(dir / report::kGnuplotScriptName, plot.script);
  std::fputs(text.c_str(), stdout);
  return 0;
}
