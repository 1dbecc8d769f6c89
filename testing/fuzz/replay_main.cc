// File: testing/fuzz/replay_main.cc
//
// The main() of a fuzz target outside --config=fuzz: runs the target's
// LLVMFuzzerTestOneInput once over each file named on the command line (its
// checked-in seed corpus and the regression inputs of crashes found), so
// that `bazel test` under gcc, ASan, UBSan and TSan replays them. Each input
// lives in a heap block of exactly its size, so that ASan flags a read past
// its end. Under --config=fuzz libFuzzer's main takes this one's place and
// treats file arguments the same way (run once each, then exit).

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int runs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    if (!path.empty() && path[0] == '-') continue;  // a libFuzzer flag
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      std::cerr << "replay: cannot read " << path << "\n";
      return 1;
    }
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    std::unique_ptr<uint8_t[]> exact(new uint8_t[bytes.size()]);
    std::memcpy(exact.get(), bytes.data(), bytes.size());
    LLVMFuzzerTestOneInput(exact.get(), bytes.size());
    ++runs;
  }
  std::cout << "replay: ran " << runs << " inputs\n";
  return runs > 0 ? 0 : 1;
}
