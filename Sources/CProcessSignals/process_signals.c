#define _GNU_SOURCE
#include "process_signals.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <unistd.h>

enum { SLOTS = 2, FREE = 0, FILLING = 1, SET = 2 };

/* A slot is claimed (FREE -> FILLING), filled, then SET; the handler removes only SET paths,
   so it never reads one half copied. States are read and set with atomic builtins only. */
static struct {
    int state;
    char path[PATH_MAX];
} removals[SLOTS];

int process_signals_remove_on_signal(const char *path) {
    size_t length = strlen(path);
    if (length >= PATH_MAX) return -1;
    for (int slot = 0; slot < SLOTS; slot++) {
        int expected = FREE;
        if (!__atomic_compare_exchange_n(&removals[slot].state, &expected, FILLING, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) continue;
        memcpy(removals[slot].path, path, length + 1);
        __atomic_store_n(&removals[slot].state, SET, __ATOMIC_SEQ_CST);
        return slot;
    }
    return -1;
}

void process_signals_forget(int slot) {
    if (slot >= 0 && slot < SLOTS) __atomic_store_n(&removals[slot].state, FREE, __ATOMIC_SEQ_CST);
}

static void on_signal(int signal) {
    for (int slot = 0; slot < SLOTS; slot++) {
        if (__atomic_load_n(&removals[slot].state, __ATOMIC_SEQ_CST) == SET) unlink(removals[slot].path);
    }
    _exit(128 + signal);
}

int process_signals_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    /* While one runs, the other waits (both would only exit). */
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    if (sigaction(SIGINT, &action, NULL) != 0) return -1;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    /* A parent may have started this process with them blocked (a child inherits its
       spawning thread's mask: Foundation's Process from a Dispatch worker, for one). */
    return pthread_sigmask(SIG_UNBLOCK, &action.sa_mask, NULL) == 0 ? 0 : -1;
}

int process_signals_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int in, int out, int err) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if ((result = posix_spawn_file_actions_adddup2(&actions, in, STDIN_FILENO)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, out, STDOUT_FILENO)) == 0 &&
        (result = posix_spawn_file_actions_adddup2(&actions, err, STDERR_FILENO)) == 0 &&
        (result = posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1)) == 0 &&
        (result = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
        (result = posix_spawnattr_setsigdefault(&attributes, &all)) == 0 &&
        (result = posix_spawnattr_setpgroup(&attributes, 0)) == 0 &&
        (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)) == 0) {
        result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    }
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}
