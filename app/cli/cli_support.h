#pragma once
// Argument handling and exit codes shared by the CLI subcommands.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace plab::cli {

enum ExitCode { kOk = 0, kRunFailed = 1, kUsage = 2, kInterrupted = 130 };

// Wrong command line: printed as "error: ..." with a hint to --help, exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Consumes options from an argument list; whatever is left are positionals.
class Args {
 public:
  explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}
  bool flag(const std::string& name);                        // --name
  std::optional<std::string> value(const std::string& name);  // --name V or --name=V
  std::optional<long long> intValue(const std::string& name, long long min);
  bool wantsHelp() { return flag("--help") || flag("-h"); }
  // Remaining arguments; throws UsageError on an unknown --option or when
  // more than maxPositionals remain.
  std::vector<std::string> positionals(size_t maxPositionals);

 private:
  std::vector<std::string> args_;
};

bool stderrIsTerminal();

// "1-5" or "1,2,7": at most maxSeeds seeds, each 0..2^63-1, none twice;
// sorted. UsageError naming `option` otherwise.
std::vector<unsigned long long> parseSeedList(const std::string& text, size_t maxSeeds, const std::string& option);

// A number written in decimal ("0.01", "5e-3"): not hex ("0x10"), not inf or
// nan, nothing after it. nullopt otherwise.
std::optional<double> parseDecimal(const std::string& text);

int runCommand(Args& args);
int defaultConfigCommand(Args& args);
int inspectCommand(Args& args);
int cacheCommand(Args& args);
int downloadCommand(Args& args);
int benchCommand(Args& args);
int memoryCommand(Args& args);
int adviseCommand(Args& args);

extern const char* const kRunHelp;
extern const char* const kInspectHelp;
extern const char* const kCacheHelp;
extern const char* const kDownloadHelp;
extern const char* const kBenchHelp;
extern const char* const kMemoryHelp;
extern const char* const kAdviseHelp;
extern const char* const kDefaultConfigHelp;

}  // namespace plab::cli
