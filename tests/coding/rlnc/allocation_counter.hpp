#pragma once
// Every allocation of the test program goes through a counting operator new (allocation_counter.cpp),
// so a test can check that some code allocates nothing.
#include <cstddef>

namespace ncast::rlnc::testing {

std::size_t allocations();

}  // namespace ncast::rlnc::testing
