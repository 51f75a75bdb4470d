#pragma once
// Mean and sample standard deviation of a figure over seeds: physics tests
// derive their tolerances from the spread they measure.
#include <cmath>
#include <vector>

namespace plab::test {

struct Spread {
  double mean = 0, sd = 0;
};

inline Spread spreadOf(const std::vector<double>& values) {
  Spread s;
  for (double x : values) s.mean += x / double(values.size());
  if (values.size() < 2) return s;
  for (double x : values) s.sd += (x - s.mean) * (x - s.mean) / double(values.size() - 1);
  s.sd = std::sqrt(s.sd);
  return s;
}

}  // namespace plab::test
