#ifndef WEARFLEET_CSYSTEMD_SHIM_H
#define WEARFLEET_CSYSTEMD_SHIM_H
// We send CODE_FILE/CODE_LINE/CODE_FUNC ourselves (the Swift caller's
// location, not this header's), so libsystemd must not add its own.
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <systemd/sd-journal.h>
#include <systemd/sd-daemon.h>
#include <sys/uio.h>
#endif
