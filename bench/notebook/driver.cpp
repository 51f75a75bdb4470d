#include "notebook/driver.h"

#include <QDateTime>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "notebook/latency_probe.h"
#include "notebook/page_cache.h"
#include "notebook/process_stats.h"
#include "notebook/template_runs.h"
#include "notebook/workspace_generator.h"
#include "report/run_folder_reader.h"
#include "util/run_folder.h"

namespace plab::bench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kChildTimeoutS = 1800;

std::string hostName() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "?";
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "?";
}

QString workspaceOf(const DriverOptions& o, int runs) { return o.work + QString("/ws-%1").arg(runs); }

struct Child {
  QString kind;
  int runs = 0;
  QString label;
  QStringList env;  // NAME=value
};

json runChildProcess(const DriverOptions& o, const Child& c, const QString& exportDir = {}) {
  QTemporaryDir home;  // the window touches no settings of the user
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("QT_QPA_PLATFORM", "offscreen");
  // The app as a user starts it: LibTorch one thread per CPU, so that a
  // training run keeps both cores busy (the templates' CLI runs used one).
  if (!qEnvironmentVariableIsSet("PLAB_BENCH_KEEP_OMP")) env.remove("OMP_NUM_THREADS");
  env.insert("HOME", home.path());
  for (const char* xdg : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"})
    env.insert(xdg, home.path() + "/" + xdg);
  QDir(home.path()).mkdir("runtime");
  QFile::setPermissions(home.path() + "/runtime", QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  env.insert("XDG_RUNTIME_DIR", home.path() + "/runtime");
  for (const QString& kv : c.env) env.insert(kv.section('=', 0, 0), kv.section('=', 1));
  QStringList args = {"--child", c.kind, "--workspace", workspaceOf(o, c.runs), "--seconds", QString::number(o.seconds)};
  if (!exportDir.isEmpty()) args << "--export-dir" << exportDir;
  QProcess p;
  p.setProcessEnvironment(env);
  p.setProcessChannelMode(QProcess::SeparateChannels);
  env.insert("PLAB_BENCH_SPAWN_NS", QString::number(monotonicNs()));
  p.setProcessEnvironment(env);
  p.start(o.self, args);
  const bool finished = p.waitForFinished(kChildTimeoutS * 1000);
  if (!finished) p.kill(), p.waitForFinished();
  const QByteArray out = p.readAllStandardOutput();
  const QByteArray err = p.readAllStandardError();
  for (const QByteArray& line : out.split('\n'))
    if (line.startsWith("BENCH_RESULT ")) {
      json j = json::parse(line.mid(13).toStdString());
      j["label"] = c.label.toStdString();
      if (!j.value("ok", false)) std::fprintf(stderr, "%s failed: %s\n", c.label.toUtf8().constData(), j.value("error", "?").c_str());
      return j;
    }
  std::fprintf(stderr, "%s: no result (exit %d)\n%s\n", c.label.toUtf8().constData(), p.exitCode(), err.right(3000).constData());
  return {{"label", c.label.toStdString()}, {"ok", false}, {"error", "no result"}};
}

// ---- printing ----

struct Spread {
  std::vector<double> v;
  void add(double x) { v.push_back(x); }
  double median() const { return percentile(v, 50); }
  std::string text(const char* format) const {
    if (v.empty()) return "–";
    char one[64], lo[64], hi[64];
    std::snprintf(one, sizeof one, format, median());
    if (v.size() == 1) return one;
    std::snprintf(lo, sizeof lo, format, *std::min_element(v.begin(), v.end()));
    std::snprintf(hi, sizeof hi, format, *std::max_element(v.begin(), v.end()));
    return std::string(one) + " (" + lo + "–" + hi + ")";
  }
};

double num(const json& j, const std::vector<std::string>& path) {
  const json* at = &j;
  for (const std::string& k : path) {
    if (!at->is_object() || !at->contains(k)) return -1;
    at = &(*at)[k];
  }
  return at->is_number() ? at->get<double>() : -1;
}

Spread spreadOf(const std::vector<json>& results, const std::vector<std::string>& path) {
  Spread s;
  for (const json& r : results)
    if (r.value("ok", false) && num(r, path) >= 0) s.add(num(r, path));
  return s;
}

const char* verdict(bool ok) { return ok ? "meets" : "MISSES"; }

// The pairs of two cases' results from the same round (the same load).
std::vector<std::pair<const json*, const json*>> sameRound(const std::vector<json>& a, const std::vector<json>& b) {
  std::vector<std::pair<const json*, const json*>> pairs;
  for (const json& x : a)
    for (const json& y : b)
      if (x.value("round", -1) == y.value("round", -2)) pairs.push_back({&x, &y});
  return pairs;
}

void printOpen(std::map<std::string, std::vector<json>>& results, const DriverOptions& o) {
  std::printf("\n== Open: a fresh process per open; from spawn to the table painted (ready), the charts drawn, and\n"
              "   settled (model inspected, heatmap read, nothing redrawn for 1.5 s); CPU = the process's user+sys.\n"
              "   unticked: every run's display.json hidden; cold: the workspace's files dropped from the page cache\n"
              "   first; unindexed: index.json removed (runs written before indexes: the app writes them again) ==\n");
  std::printf("%-22s %6s %6s %7s %-16s %-16s %-16s %-16s %-14s %-14s %-14s\n", "case", "runs", "rows", "series",
              "ready ms", "ready CPU s", "charts ms", "settled ms", "settled CPU s", "RSS MiB", "HWM MiB");
  std::vector<std::string> labels;
  for (int n : o.sizes) labels.push_back("open " + std::to_string(n));
  for (int n : o.sizes) labels.push_back("open " + std::to_string(n) + " unticked");
  for (int n : o.sizes) labels.push_back("cold " + std::to_string(n));
  for (int n : o.sizes) labels.push_back("unindexed " + std::to_string(n));
  for (const std::string& l : labels) {
    auto it = results.find(l);
    if (it == results.end() || it->second.empty()) continue;
    const auto& rs = it->second;
    const json& first = rs.front();
    std::printf("%-22s %6d %6d %7d %-16s %-16s %-16s %-16s %-14s %-14s %-14s\n", l.c_str(),
                static_cast<int>(num(first, {"open", "runs"})), static_cast<int>(num(first, {"open", "top_rows"})),
                static_cast<int>(num(first, {"open", "chart_series"})), spreadOf(rs, {"open", "ready_ms"}).text("%.0f").c_str(),
                spreadOf(rs, {"open", "ready", "cpu_s"}).text("%.2f").c_str(), spreadOf(rs, {"open", "charts_ms"}).text("%.0f").c_str(),
                spreadOf(rs, {"open", "settled_ms"}).text("%.0f").c_str(), spreadOf(rs, {"open", "settled", "cpu_s"}).text("%.2f").c_str(),
                spreadOf(rs, {"open", "settled", "rss_mib"}).text("%.0f").c_str(), spreadOf(rs, {"open", "settled", "hwm_mib"}).text("%.0f").c_str());
  }
  for (const std::string& l : labels) {
    auto it = results.find(l);
    if (it == results.end() || it->second.empty()) continue;
    const json& f = it->second.front()["open"];
    std::printf("  %s: grouping %s, %d fp32 runs, %d with an fp32 twin, %d without, %d unreadable, %d ticked; charts: \"%s\"\n",
                l.c_str(), f.value("grouping", "").c_str(), f.value("fp32_runs", 0), f.value("with_twin", 0),
                f.value("without_twin", 0), f.value("unreadable", 0), f.value("ticked", 0), f.value("chart_note", "").c_str());
  }
  // Targets, from the rounds' pairs (the same round: the same load).
  const int small = o.sizes.front(), large = o.sizes.back();
  const auto& one = results["open " + std::to_string(small)];
  const auto& many = results["open " + std::to_string(large)];
  if (one.empty() || many.empty()) return;
  Spread ready = spreadOf(many, {"open", "ready_ms"}), charts = spreadOf(many, {"open", "charts_ms"});
  Spread cpuReady, cpuSettled, rssPerRun, rssPerRunUnticked;
  for (const auto& [a, b] : sameRound(one, many)) {
    cpuReady.add(num(*b, {"open", "ready", "cpu_s"}) / num(*a, {"open", "ready", "cpu_s"}));
    cpuSettled.add(num(*b, {"open", "settled", "cpu_s"}) / num(*a, {"open", "settled", "cpu_s"}));
    rssPerRun.add((num(*b, {"open", "settled", "rss_mib"}) - num(*a, {"open", "settled", "rss_mib"})) / (large - small));
  }
  const auto& oneU = results["open " + std::to_string(small) + " unticked"];
  const auto& manyU = results["open " + std::to_string(large) + " unticked"];
  for (const auto& [a, b] : sameRound(oneU, manyU))
    rssPerRunUnticked.add((num(*b, {"open", "settled", "rss_mib"}) - num(*a, {"open", "settled", "rss_mib"})) / (large - small));
  std::printf("\n  target: %d runs listed and painted in <= 3000 ms wall: %s ms — %s (charts drawn: %s ms)\n", large,
              ready.text("%.0f").c_str(), verdict(ready.median() <= 3000), charts.text("%.0f").c_str());
  std::printf("  target: CPU <= 3x the %d-run start: at ready %sx, settled %sx — %s\n", small, cpuReady.text("%.2f").c_str(),
              cpuSettled.text("%.2f").c_str(), verdict(cpuSettled.median() <= 3 && cpuReady.median() <= 3));
  std::printf("  target: RSS growth <= 0.5 MiB per run not drawn (settled, %d vs %d runs, every run unticked): %s MiB/run — %s;"
              " ticked (drawn as the grouping draws them) %s MiB/run\n",
              large, small, rssPerRunUnticked.text("%.3f").c_str(), rssPerRunUnticked.v.empty() ? "–" : verdict(rssPerRunUnticked.median() <= 0.5),
              rssPerRun.text("%.3f").c_str());
}

void printFilter(const std::vector<json>& rs) {
  if (rs.empty()) return;
  std::printf("\n== Filter and group at %d runs, a probe event posted every 5 ms. Per change: until idle = the change and the\n"
              "   events it posted (table update and paint) until nothing is left to process; then until the GUI thread is\n"
              "   quiet again (charts redrawn on their 250 ms tick, a heatmap run read and drawn): freeze = the longest any\n"
              "   input waited, GUI CPU = the GUI thread's CPU time, charts = the charts' redraws (ms) ==\n",
              static_cast<int>(num(rs.front(), {"open", "runs"})));
  const json& first = rs.front()["filter"];
  std::printf("%-18s %-20s %-20s %-20s %-20s %s\n", "change", "until idle ms", "freeze ms", "GUI CPU ms", "charts ms", "top rows");
  Spread keyIdle, keyFreeze;
  const auto row = [&](const std::string& name, const std::string& list, size_t i, bool isKey) {
    Spread idle, freeze, cpu, charts;
    for (const json& r : rs) {
      if (!r.value("ok", false)) continue;
      const json& t = r["filter"][list][i];
      idle.add(t["until_idle_ms"].get<double>());
      freeze.add(t["freeze_ms"].get<double>());
      cpu.add(t["gui_cpu_ms"].get<double>());
      charts.add(t["chart_redraw_ms"].get<double>());
      if (isKey) {
        keyIdle.add(t["until_idle_ms"].get<double>());
        keyFreeze.add(t["freeze_ms"].get<double>());
      }
    }
    std::printf("%-18s %-20s %-20s %-20s %-20s %d\n", name.c_str(), idle.text("%.1f").c_str(), freeze.text("%.0f").c_str(),
                cpu.text("%.0f").c_str(), charts.text("%.0f").c_str(), first[list][i].value("top_rows", -1));
  };
  for (size_t i = 0; i < first["group_by"].size(); ++i) row("group " + first["group_by"][i]["group_by"].get<std::string>(), "group_by", i, false);
  for (size_t i = 0; i < first["keys"].size(); ++i) row("key '" + first["keys"][i]["key"].get<std::string>() + "'", "keys", i, true);
  for (size_t i = 0; i < first["group_by_filtered"].size(); ++i)
    row("filtered, group " + first["group_by_filtered"][i]["group_by"].get<std::string>(), "group_by_filtered", i, false);
  std::printf("  typed \"%s\": %s\n", first.value("typed", "").c_str(), first.value("filter_note", "").c_str());
  const auto maxOf = [](const Spread& s) { return s.v.empty() ? 0.0 : *std::max_element(s.v.begin(), s.v.end()); };
  std::printf("  target: <= 50 ms per key, key to table updated (%zu keys x rounds): p50 %.1f, p95 %.1f, max %.1f ms — %s\n"
              "          freeze with what the key set off (charts, heatmap): p50 %.0f, p95 %.0f, max %.0f ms — %s\n",
              keyIdle.v.size(), keyIdle.median(), percentile(keyIdle.v, 95), maxOf(keyIdle), verdict(maxOf(keyIdle) <= 50),
              keyFreeze.median(), percentile(keyFreeze.v, 95), maxOf(keyFreeze), verdict(maxOf(keyFreeze) <= 50));
}

void printLatency(std::map<std::string, std::vector<json>>& results, int runs, int seconds) {
  const std::string n = std::to_string(runs);
  std::printf("\n== Input latency: an event posted every 20 ms for the probe's duration, its wait until the GUI thread\n"
              "   handled it; every 10th switches the results tab (Comparison <-> Log) and repaints it ==\n");
  std::printf("%-26s %-18s %-18s %-18s %-18s %-18s %-16s %-12s %s\n", "case", "p50 ms", "p95 ms", "max ms", "tab switch p95",
              "tab switch max", "GUI thread CPU", "steps/s", "threads by nice");
  for (const std::string& l : {"idle " + n, "train " + n + " nice 10", "train " + n + " nice 0"}) {
    const auto& rs = results[l];
    if (rs.empty()) continue;
    std::string nices;
    for (const auto& pair : rs.front()["latency"]["thread_nice"]) nices += std::to_string(pair[0].get<int>()) + ":" + std::to_string(pair[1].get<int>()) + " ";
    Spread gui;  // the share of one core the GUI thread used during the probe
    for (const json& r : rs)
      if (r.value("ok", false)) gui.add(100 * num(r, {"latency", "gui_thread_cpu_s"}) / seconds);
    std::printf("%-26s %-18s %-18s %-18s %-18s %-18s %-16s %-12s %s\n", l.c_str(), spreadOf(rs, {"latency", "latency", "p50_ms"}).text("%.1f").c_str(),
                spreadOf(rs, {"latency", "latency", "p95_ms"}).text("%.1f").c_str(), spreadOf(rs, {"latency", "latency", "max_ms"}).text("%.0f").c_str(),
                spreadOf(rs, {"latency", "tab_switch", "p95_ms"}).text("%.1f").c_str(), spreadOf(rs, {"latency", "tab_switch", "max_ms"}).text("%.0f").c_str(),
                (gui.text("%.0f") + " %").c_str(), spreadOf(rs, {"latency", "steps_per_s"}).text("%.2f").c_str(), nices.c_str());
  }
  const Spread p95 = spreadOf(results["train " + n + " nice 10"], {"latency", "latency", "p95_ms"});
  if (!p95.v.empty())
    std::printf("  target: p95 <= 100 ms while a run trains: %s ms — %s (every round: %s)\n", p95.text("%.1f").c_str(),
                verdict(p95.median() <= 100), verdict(*std::max_element(p95.v.begin(), p95.v.end()) <= 100));
}

void printExport(const std::vector<json>& rs) {
  if (rs.empty()) return;
  std::printf("\n== Export at %d runs: exportReportTo with the probe posting every 5 ms; the longest wait is the stall ==\n",
              static_cast<int>(num(rs.front(), {"open", "runs"})));
  std::printf("  export wall ms %s, call ms %s, p95 wait ms %s, longest wait ms %s\n", spreadOf(rs, {"export", "export_ms"}).text("%.0f").c_str(),
              spreadOf(rs, {"export", "call_ms"}).text("%.1f").c_str(), spreadOf(rs, {"export", "latency", "p95_ms"}).text("%.1f").c_str(),
              spreadOf(rs, {"export", "latency", "max_ms"}).text("%.0f").c_str());
  for (const json& r : rs) {
    if (!r.value("ok", false)) continue;
    const json& e = r["export"];
    std::printf("  round: ok %s, %d runs exported, %d files; stalls over 50 ms:", e.value("ok", false) ? "yes" : "NO",
                e.value("exported_runs", 0), e.value("files", 0));
    for (const json& s : e["stalls_over_50ms"]) {
      std::printf(" [%.0f ms at +%.0f", s["length_ms"].get<double>(), s["from_ms"].get<double>());
      for (const json& p : s["progress"])
        std::printf("; +%.0f step %d/%d %s", p["at_ms"].get<double>(), p["done"].get<int>(), p["total"].get<int>(), p["step"].get<std::string>().c_str());
      std::printf("]");
    }
    std::printf("\n");
  }
  // The chart images are drawn on the GUI thread one per event-loop turn: a
  // job's time is from its progress signal to the next one.
  for (const json& r : rs) {
    if (!r.value("ok", false)) continue;
    const json& e = r["export"];
    const int runs = e.value("exported_runs", 0);
    std::vector<std::pair<double, std::string>> jobs;
    const json& p = e["progress"];
    int total = 0;
    for (size_t k = 0; k + 1 < p.size(); ++k) {
      if (p[k]["step"].get<std::string>().rfind("Preparing", 0) != 0) continue;
      total = p[k]["total"].get<int>();
      const int job = p[k]["done"].get<int>();
      const int images = total - 3;  // the worker's three steps follow
      const bool lossVsFp32 = images == runs + 5;
      static const char* kFirst[] = {"loss chart", "loss minus fp32", "update lost", "rounded away", "memory"};
      std::string name;
      const int fixed = lossVsFp32 ? 5 : 4;
      if (job < fixed) name = kFirst[lossVsFp32 || job == 0 ? job : job + 1];
      else name = "heatmap of run " + std::to_string(job - fixed + 1);
      jobs.push_back({p[k + 1]["at_ms"].get<double>() - p[k]["at_ms"].get<double>(), "image " + std::to_string(job) + " (" + name + ")"});
    }
    std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    double sum = 0;
    for (const auto& j : jobs) sum += j.first;
    std::printf("  round: %zu image jobs on the GUI thread, %.0f ms in all; longest:", jobs.size(), sum);
    for (size_t k = 0; k < std::min<size_t>(5, jobs.size()); ++k) std::printf(" %s %.0f ms;", jobs[k].second.c_str(), jobs[k].first);
    if (!p.empty() && p.size() > 1) std::printf(" first image job began at +%.0f ms", p[1]["at_ms"].get<double>());
    std::printf("\n");
  }
  const Spread worst = spreadOf(rs, {"export", "latency", "max_ms"});
  std::printf("  target: the window never waits > 100 ms: longest %s ms — %s\n", worst.text("%.0f").c_str(),
              verdict(!worst.v.empty() && *std::max_element(worst.v.begin(), worst.v.end()) <= 100));
}

int smoke(const DriverOptions& o) {
  // Every GPT-2 template over its seeds, then the Llama's fp32 family's
  // first two seeds: as many runs as `run --default` has modes decides.
  const std::vector<fs::path> templates = findTemplateRuns(o.templates.toStdString());
  std::set<std::string> models;
  int gpt2Templates = 0;
  for (const fs::path& t : templates) {
    const std::string tag = modelTag(json::parse(std::ifstream(t / "config.json")));
    models.insert(tag);
    gpt2Templates += tag == "tiny-gpt2" ? 1 : 0;
  }
  const int runs = kSeedsPerConfig * gpt2Templates + 2;
  const fs::path ws = workspaceOf(o, runs).toStdString();
  ensureWorkspace(o.templates.toStdString(), ws, runs);
  int failures = 0;
  const auto check = [&failures](bool ok, const std::string& what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
    failures += ok ? 0 : 1;
  };
  const std::string n = std::to_string(runs);
  check(countIndexes(ws) == runs, "the generator's " + n + " runs have current indexes (" + std::to_string(countIndexes(ws)) + ")");
  check(models.size() == 2, "templates of two models (" + std::to_string(models.size()) + ")");
  int llamas = 0, marked = 0;
  for (const fs::path& run : workspaceRuns(ws)) {
    llamas += run.filename().string().find("tiny-llama") != std::string::npos ? 1 : 0;
    marked += fs::is_regular_file(run / kRunFolderMarkerName) && runFolderOriginProblem(run).empty() ? 1 : 0;
  }
  check(marked == runs, "every copy carries its sweep's marker, as a run of the tool's (" + std::to_string(marked) + ")");
  check(llamas == 2, "the last two runs are the Llama's fp32 family (" + std::to_string(llamas) + " Llama runs)");
  const json r = runChildProcess(o, {"open", runs, QString::fromStdString("smoke open " + n), {}});
  const json& f = r.value("open", json::object());
  std::printf("%s\n", f.dump().c_str());
  check(r.value("ok", false), "the window opened the workspace: " + r.value("error", std::string("ok")));
  check(f.value("runs", 0) == runs && f.value("unreadable", -1) == 0, n + " runs listed, none unreadable");
  check(f.value("top_rows", 0) == gpt2Templates + 1,
        "grouped by seed family: " + std::to_string(gpt2Templates + 1) + " top rows (" + std::to_string(f.value("top_rows", 0)) + ")");
  check(f.value("fp32_runs", 0) == kSeedsPerConfig + 2 && f.value("with_twin", 0) == runs - kSeedsPerConfig - 2 &&
            f.value("without_twin", -1) == 0,
        std::to_string(kSeedsPerConfig + 2) + " fp32 runs, the " + std::to_string(runs - kSeedsPerConfig - 2) +
            " others with their fp32 twin");
  check(f.value("chart_series", 0) > 0, "the charts draw them");
  check(countIndexes(ws) == runs, "their indexes still current after the open");
  return failures == 0 ? 0 : 1;
}

}  // namespace

int runDriver(const DriverOptions& o) {
  try {
    std::printf("bench_notebook, %s UTC, %s, %s, %d CPUs, load %s\n",
                QDateTime::currentDateTimeUtc().toString("yyyy-MM-dd HH:mm").toUtf8().constData(),
                hostName().c_str(), cpuModel().c_str(), QThread::idealThreadCount(),
                loadAverage().c_str());
    ensureTemplates({o.templates, o.cli, o.work + "/tiny-llama", o.templateSteps});
    if (o.smoke) return smoke(o);
    std::vector<int> sizes = o.sizes;
    if (o.cases.contains("filter")) sizes.push_back(o.filterRuns);
    if (o.cases.contains("latency")) sizes.push_back(o.latencyRuns);
    if (o.cases.contains("export")) sizes.push_back(o.exportRuns);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (int n : sizes) ensureWorkspace(o.templates.toStdString(), workspaceOf(o, n).toStdString(), n);

    std::map<std::string, std::vector<json>> results, failed;  // printed: the children that finished their case
    int round = 0;
    const auto record = [&](json r) {
      const std::string label = r.value("label", "?");
      r["round"] = round;
      (r.value("ok", false) ? results : failed)[label].push_back(r);
      std::fprintf(stderr, "  %-22s %s load %s -> %s\n", label.c_str(), r.value("ok", false) ? "ok" : "FAILED",
                   r.value("load_start", "?").c_str(), r.value("load_end", "?").c_str());
    };
    for (round = 0; round < o.rounds; ++round) {
      std::fprintf(stderr, "round %d/%d\n", round + 1, o.rounds);
      std::vector<int> order = o.sizes;
      if (round % 2 == 1) std::reverse(order.begin(), order.end());
      if (o.cases.contains("open"))
        for (int n : order) record(runChildProcess(o, {"open", n, QString("open %1").arg(n), {}}));
      if (o.cases.contains("unticked"))
        for (int n : order.front() == order.back() ? std::vector<int>{order.front()} : std::vector<int>{order.front(), order.back()}) {
          const fs::path ws = workspaceOf(o, n).toStdString();
          setAllHidden(ws, true);
          record(runChildProcess(o, {"open", n, QString("open %1 unticked").arg(n), {}}));
          setAllHidden(ws, false);
        }
      if (o.cases.contains("cold"))
        for (int n : order) {
          const fs::path ws = workspaceOf(o, n).toStdString();
          const CacheDrop drop = dropFromPageCache(ws);
          const double resident = residentFraction(ws);
          json r = runChildProcess(o, {"open", n, QString("cold %1").arg(n), {}});
          r["cache_drop"] = {{"files", drop.files}, {"mib", static_cast<double>(drop.bytes) / (1 << 20)}, {"resident_after", resident}};
          record(r);
        }
      if (o.cases.contains("unindexed"))
        for (int n : order) {
          if (n < 2) continue;
          const fs::path ws = workspaceOf(o, n).toStdString();
          removeIndexes(ws);
          json r = runChildProcess(o, {"open", n, QString("unindexed %1").arg(n), {}});
          r["indexes_after"] = countIndexes(ws);
          record(r);
          if (countIndexes(ws) != n) {  // the app did not index them all: the generator does
            fs::remove(ws.parent_path() / (ws.filename().string() + ".stamp.json"));
            ensureWorkspace(o.templates.toStdString(), ws, n);
          }
        }
      if (o.cases.contains("filter")) record(runChildProcess(o, {"filter", o.filterRuns, QString("filter %1").arg(o.filterRuns), {}}));
      if (o.cases.contains("latency")) {
        std::vector<Child> latency = {{"idle", o.latencyRuns, QString("idle %1").arg(o.latencyRuns), {}},
                                      {"train", o.latencyRuns, QString("train %1 nice 10").arg(o.latencyRuns), {}},
                                      {"train", o.latencyRuns, QString("train %1 nice 0").arg(o.latencyRuns), {"PLAB_TRAINING_NICE=0"}}};
        if (round % 2 == 1) std::reverse(latency.begin(), latency.end());
        for (const Child& c : latency) record(runChildProcess(o, c));
      }
      if (o.cases.contains("export")) {
        const QString dir = o.work + "/export-out";
        fs::remove_all(dir.toStdString());
        fs::create_directories(dir.toStdString());
        record(runChildProcess(o, {"export", o.exportRuns, QString("export %1").arg(o.exportRuns), {}}, dir));
        fs::remove_all(dir.toStdString());
      }
    }
    // Every child's figures first: a figure missing from a result must not lose the others.
    const fs::path raw = fs::path(o.work.toStdString()) / "last-results.json";
    std::ofstream(raw) << json({{"ok", results}, {"failed", failed}}).dump(1);
    for (const auto& [label, rs] : failed)
      std::printf("FAILED %zu of %d rounds of \"%s\" (left out below): %s\n", rs.size(), o.rounds, label.c_str(),
                  rs.front().value("error", "?").c_str());
    printOpen(results, o);
    for (int n : o.sizes)
      for (const json& r : results["cold " + std::to_string(n)])
        std::printf("  cold %d: %d files (%.0f MiB) dropped from the page cache, %.0f %% of them still resident after\n", n,
                    r["cache_drop"].value("files", 0), r["cache_drop"].value("mib", 0.0), 100 * r["cache_drop"].value("resident_after", -0.01));
    for (int n : o.sizes)
      for (const json& r : results["unindexed " + std::to_string(n)])
        std::printf("  unindexed %d: the app wrote %d of %d indexes again\n", n, r.value("indexes_after", 0), n);
    printFilter(results["filter " + std::to_string(o.filterRuns)]);
    printLatency(results, o.latencyRuns, o.seconds);
    printExport(results["export " + std::to_string(o.exportRuns)]);
    std::printf("\nload average at the end: %s\n", loadAverage().c_str());
    std::printf("every child's figures: %s\n", raw.string().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_notebook: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace plab::bench
