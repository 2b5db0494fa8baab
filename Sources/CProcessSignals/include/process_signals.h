#ifndef PROCESS_SIGNALS_H
#define PROCESS_SIGNALS_H

#include <sys/types.h>

/// SIGINT and SIGTERM without a thread, for a command that has nothing to cancel (a read, and
/// every command before it runs: parsing, help, `--version`): the first one removes the files
/// registered with `process_signals_remove_on_signal` (an output half written) and ends the
/// process with 128 + its number, as sqlite3 or grep stop. Only async-signal-safe calls run in
/// the handler (unlink, _exit). A command that can be cancelled blocks both signals and takes
/// them on a thread of its own instead. See IncidentApp's ProcessSignals.

/// Installs the handler for SIGINT and SIGTERM and unblocks them in the calling thread.
/// Returns 0, or -1 (errno set by sigaction).
int process_signals_install(void);

/// Registers `path` (at most PATH_MAX bytes, NUL-terminated) to be removed should a signal end
/// the process through the handler; at most 2 at a time. Register before creating the file.
/// Returns the slot to pass to `process_signals_forget`, or -1 (none free, or `path` too long).
int process_signals_remove_on_signal(const char *path);

/// Unregisters a slot from `process_signals_remove_on_signal` (once its file is renamed or
/// removed); -1 is ignored.
void process_signals_forget(int slot);

/// Starts the program at `path` (posix_spawn: no PATH search) with `argv` and `envp`
/// (NULL-terminated), `in`, `out` and `err` as its standard input, output and error and every
/// other descriptor closed, in a process group of its own (its pid), with the signals of a
/// freshly started process: none blocked, every action the default. A child otherwise inherits
/// its spawning thread's mask (a Dispatch worker blocks nearly every signal, and a cancellable
/// command blocks SIGINT and SIGTERM in all its threads) and the signals this process ignores,
/// so a watch command's `timeout`, `kill` or `trap` would not work.
/// Returns 0 and sets `*pid`, or an errno value (the program could not be executed: ENOENT, EACCES, ...).
int process_signals_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in, int out, int err);

#endif
