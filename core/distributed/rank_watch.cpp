#include "distributed/rank_watch.h"

#include <sstream>
#include <vector>

namespace plab {
namespace {

std::string beatKey(int rank) { return "plab/beat/" + std::to_string(rank); }

}  // namespace

RankWatch::RankWatch(c10::intrusive_ptr<c10d::Store> store, int rank, int worldSize, std::chrono::milliseconds period)
    : store_(std::move(store)), rank_(rank), worldSize_(worldSize), period_(period) {
  thread_ = std::thread([this] { beatLoop(); });
}

RankWatch::~RankWatch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void RankWatch::beatLoop() {
  int64_t beats = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const std::string value = std::to_string(++beats) + " " + std::to_string(collectives_.load());
    lock.unlock();
    try {
      store_->set(beatKey(rank_), std::vector<uint8_t>(value.begin(), value.end()));
    } catch (...) {
      return;  // the store is gone (rank 0 with it): nobody left to tell
    }
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
}

bool RankWatch::readBeats(std::vector<Beat>& out) {
  out.assign(static_cast<size_t>(worldSize_), Beat{});
  try {
    for (int r = 0; r < worldSize_; ++r) {
      if (!store_->check({beatKey(r)})) continue;
      const std::vector<uint8_t> v = store_->get(beatKey(r));
      std::istringstream in(std::string(v.begin(), v.end()));
      Beat& b = out[static_cast<size_t>(r)];
      b.seen = static_cast<bool>(in >> b.beats >> b.collectives);
    }
    return true;
  } catch (...) {
    return false;
  }
}

std::string RankWatch::whoStopped() {
  std::vector<Beat> before, after;
  if (!readBeats(before)) return rank_ == 0 ? "" : "rank 0 is gone (the rendezvous store it served does not answer)";
  std::this_thread::sleep_for(period_ * 5 / 2);
  if (!readBeats(after)) return rank_ == 0 ? "" : "rank 0 is gone (the rendezvous store it served does not answer)";
  const int64_t mine = collectives_.load();
  std::string out;
  const auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  const std::string quiet = std::to_string(std::chrono::duration<double>(period_ * 5 / 2).count());
  for (int r = 0; r < worldSize_; ++r) {
    if (r == rank_) continue;
    const Beat& a = before[static_cast<size_t>(r)];
    const Beat& b = after[static_cast<size_t>(r)];
    const std::string who = "rank " + std::to_string(r);
    if (!b.seen) add(who + " never sent a heartbeat");
    else if (b.beats == a.beats)
      add(who + " stopped (no heartbeat for " + quiet.substr(0, quiet.find('.') + 2) + " s; at its last one it had entered " +
          std::to_string(b.collectives) + " collectives, this rank " + std::to_string(mine) + ")");
    else if (b.collectives < mine)
      add(who + " is alive but did not reach this collective (it has entered " + std::to_string(b.collectives) +
          ", this rank " + std::to_string(mine) + ")");
  }
  return out;
}

}  // namespace plab
