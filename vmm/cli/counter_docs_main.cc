// SPDX-License-Identifier: BSD-2-Clause
// counter_docs [--check] FILE: rewrites the counter tables of FILE
// (docs/usage.md) from the code's counter tables; with --check, only says
// whether they are current (exit 1 when not). `make counter-docs` writes;
// tests/check-counter-docs.sh, a test of make check, checks.
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "vmm/cli/counter_docs.h"

int main(int argc, char** argv) {
  const bool check = argc == 3 && std::strcmp(argv[1], "--check") == 0;
  if (argc != 2 && !check) {
    std::cerr << "usage: counter_docs [--check] docs/usage.md\n";
    return 2;
  }
  const char* path = argv[argc - 1];
  try {
    std::ifstream in(path);
    std::stringstream doc;
    doc << in.rdbuf();
    if (!in) throw std::runtime_error(std::string("cannot read ") + path);
    const std::string updated = kvmmio::vmm::with_counter_tables(doc.str());
    if (check) {
      if (updated == doc.str()) return 0;
      std::cerr << "counter_docs: the counter tables of " << path
                << " differ from the code's; run make counter-docs. They should read:\n"
                << kvmmio::vmm::counter_tables_markdown();
      return 1;
    }
    std::ofstream out(path);
    out << updated;
    if (!out) throw std::runtime_error(std::string("cannot write ") + path);
  } catch (const std::exception& e) {
    std::cerr << "counter_docs: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
