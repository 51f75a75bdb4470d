// Another rank's settings document as it arrives through the rendezvous
// store (any bytes a peer, or a stranger on MASTER_PORT, could write),
// compared with this rank's as every rank compares them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "distributed/rank_agreement.h"
#include "train/run_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::json mine = rankAgreementDocument(plab::defaultRunConfig());
  const nlohmann::json peer = plab::peerAgreementDocument(std::string(reinterpret_cast<const char*>(data), size));
  (void)plab::rankDisagreement({mine, peer});
  (void)plab::rankDisagreement({peer, mine});
  return 0;
}
