#include "process_signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { LINE_CAPACITY = 1024, TIME_LENGTH = 20 };

struct prepared_line {
    char bytes[LINE_CAPACITY];
    size_t length;
    size_t time_offset;
};

static struct prepared_line lines[2];  /* SIGINT, SIGTERM */
static int first_signal;               /* read and set with atomic builtins only */

static struct prepared_line *line_for(int signal) {
    return signal == SIGINT ? &lines[0] : signal == SIGTERM ? &lines[1] : NULL;
}

void process_signals_set_line(int signal, const char *line, size_t length, size_t time_offset) {
    struct prepared_line *prepared = line_for(signal);
    if (prepared == NULL || length > LINE_CAPACITY || time_offset + TIME_LENGTH > length) return;
    memcpy(prepared->bytes, line, length);
    prepared->length = length;
    prepared->time_offset = time_offset;
}

int process_signals_record(int signal) {
    int expected = 0;
    return __atomic_compare_exchange_n(&first_signal, &expected, signal, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

int process_signals_first(void) {
    return __atomic_load_n(&first_signal, __ATOMIC_SEQ_CST);
}

static void put_digits(char *out, long value, int count) {
    for (int i = count - 1; i >= 0; i--) {
        out[i] = (char)('0' + value % 10);
        value /= 10;
    }
}

/* `seconds` since 1970 as YYYY-MM-DDTHH:MM:SSZ (UTC; days to a civil date as in
   H. Hinnant's chrono algorithms, valid for every year of four digits). */
static void format_time(char *out, long long seconds) {
    long long days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
    long second_of_day = (long)(seconds - days * 86400);
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long day_of_era = z - era * 146097;
    long long year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    long long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    long long mp = (5 * day_of_year + 2) / 153;
    long day = (long)(day_of_year - (153 * mp + 2) / 5 + 1);
    long month = (long)(mp < 10 ? mp + 3 : mp - 9);
    long year = (long)(year_of_era + era * 400 + (month <= 2));
    put_digits(out, year, 4);
    out[4] = '-';
    put_digits(out + 5, month, 2);
    out[7] = '-';
    put_digits(out + 8, day, 2);
    out[10] = 'T';
    put_digits(out + 11, second_of_day / 3600, 2);
    out[13] = ':';
    put_digits(out + 14, second_of_day / 60 % 60, 2);
    out[16] = ':';
    put_digits(out + 17, second_of_day % 60, 2);
    out[19] = 'Z';
}

static void on_signal(int signal) {
    if (!process_signals_record(signal)) _exit(128 + signal);
    const struct prepared_line *prepared = line_for(signal);
    if (prepared == NULL || prepared->length == 0) return;
    int saved = errno;
    char out[LINE_CAPACITY];
    for (size_t i = 0; i < prepared->length; i++) out[i] = prepared->bytes[i];
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) == 0) format_time(out + prepared->time_offset, (long long)now.tv_sec);
    size_t written = 0;
    while (written < prepared->length) {
        ssize_t n = write(STDERR_FILENO, out + written, prepared->length - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        written += (size_t)n;
    }
    errno = saved;
}

int process_signals_install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    /* While one runs, the other waits: a second signal then finds the first recorded. */
    sigaddset(&action.sa_mask, SIGINT);
    sigaddset(&action.sa_mask, SIGTERM);
    if (sigaction(SIGINT, &action, NULL) != 0) return -1;
    if (sigaction(SIGTERM, &action, NULL) != 0) return -1;
    /* A parent may have started this process with them blocked (a child inherits its
       spawning thread's mask: Foundation's Process from a Dispatch worker, for one). */
    return pthread_sigmask(SIG_UNBLOCK, &action.sa_mask, NULL) == 0 ? 0 : -1;
}
