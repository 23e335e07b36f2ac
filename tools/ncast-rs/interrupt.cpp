#include "tools/ncast-rs/interrupt.hpp"

#include "cli/interrupt.hpp"

namespace ncast::tools {

void check_interrupted() {
  if (cli::interrupt_signal() != 0) throw Interrupted();
}

}  // namespace ncast::tools
