#ifndef PROCESS_SIGNALS_H
#define PROCESS_SIGNALS_H

#include <stddef.h>

/// SIGINT and SIGTERM without a thread, for a command that has nothing to cancel (a read that
/// never suspends): the first one writes its prepared line to stderr, the time in it set to
/// now, and is recorded; a second one ends the process at once with 128 + its number. Only
/// async-signal-safe calls run in the handler (clock_gettime, write, _exit).
/// See IncidentApp's ProcessSignals.

/// Sets the line written on a first `signal` (SIGINT or SIGTERM): `length` bytes (newline
/// included, at most 1024), with a 20-byte RFC 3339 UTC time (`1970-01-01T00:00:00Z`) at
/// `time_offset` that the handler replaces with the time of the signal. Call before
/// `process_signals_install`.
void process_signals_set_line(int signal, const char *line, size_t length, size_t time_offset);

/// Installs the handler for SIGINT and SIGTERM (SA_RESTART: an interrupted read or write goes
/// on) and unblocks them in the calling thread. Returns 0, or -1 (errno set by sigaction).
int process_signals_install(void);

/// Records `signal` as the first one received; returns 1 when it is, 0 when one was already
/// recorded (by the handler or by an earlier call).
int process_signals_record(int signal);

/// The first signal received, 0 when none.
int process_signals_first(void);

#endif
