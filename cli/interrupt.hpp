#pragma once
// Ctrl-C and SIGTERM noted instead of ending the process at once, so that a program can end its work
// its own way: remove its temporary files, write what it has as a partial report. A second signal
// ends the process at once, as the user then means it.
namespace ncast::cli {

// Installs the SIGINT and SIGTERM handlers.
void catch_interrupts();
// The signal that arrived (SIGINT or SIGTERM); 0 while none has.
int interrupt_signal();

}  // namespace ncast::cli
