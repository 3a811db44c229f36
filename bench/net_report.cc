// net_report: turns the main job's raw measurement files into the report:
// text on stdout and in DIR/report.txt, DIR/report.json, and a gnuplot
// script with its data for DIR/throughput.png. The work is in bench/report/;
// this file is the command line and the files.
//
//   net_report --raw FILE [--raw FILE]... --out DIR [--title TEXT]
//
// Exit status: 0 done, 1 an output file could not be written, 2 bad usage
// or malformed input (the message names the file and line).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/report/input_error.h"
#include "bench/report/raw_parser.h"
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
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> raws;
  std::string out_dir;
  std::string title = "kvmmio: guest versus host network throughput";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a != "--raw" && a != "--out" && a != "--title") usage_error("unknown argument '" + a + "'");
    if (i + 1 >= argc) usage_error(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--raw") raws.push_back(v);
    else if (a == "--out") out_dir = v;
    else title = v;
  }
  if (raws.empty()) usage_error("no --raw file given");
  if (out_dir.empty()) usage_error("no --out directory given");

  report::RawData raw;
  try {
    for (const std::string& path : raws) report::read_raw_file(path, raw);
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
  write_file(dir / report::kGnuplotScriptName, plot.script);
  std::fputs(text.c_str(), stdout);
  return 0;
}
