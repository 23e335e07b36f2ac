#pragma once
// The commands of ncast-rlnc, each in its own file.
#include <span>

#include "cli/subcommands.hpp"

namespace ncast::rlnc_tool {

using cli::kExitOk;
using cli::UsageError;

int run_roundtrip(int argc, char** argv);
int run_coefficients(int argc, char** argv);

std::span<const cli::Subcommand> commands();

}  // namespace ncast::rlnc_tool
