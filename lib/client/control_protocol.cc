#include "peerbloom/client/control_protocol.h"

namespace peerbloom::client {

std::string ControlOpList() {
  std::string list;
  for (std::string_view op : kControlOps) {
    if (!list.empty()) list += ", ";
    list += op;
  }
  return list;
}

}  // namespace peerbloom::client
