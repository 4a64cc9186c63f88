/* The file to remove on an outside end.  See exit_cleanup.h. */
#include "base/exit_cleanup.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static char cleanup_path[256];
/* 1 while cleanup_path holds a complete path: another thread reads it. */
static atomic_int cleanup_armed;

/* The signals a process manager ends a job with.  While the path is armed
 * and the program has not chosen a disposition of its own, a handler
 * removes the file, then lets the signal end the process as it would have. */
static const int ending_signals[] = {SIGTERM, SIGINT, SIGHUP};
#define N_ENDING (sizeof ending_signals / sizeof ending_signals[0])
static int handler_installed[N_ENDING];

static void on_ending_signal(int sig)
{
    fmpl_exit_cleanup_now();
    signal(sig, SIG_DFL);
    raise(sig);
}

void fmpl_exit_cleanup_set(const char *path)
{
    atomic_store(&cleanup_armed, 0);
    int n = snprintf(cleanup_path, sizeof cleanup_path, "%s", path);
    if (n <= 0 || (size_t)n >= sizeof cleanup_path)
        return;
    atomic_store(&cleanup_armed, 1);
    for (size_t i = 0; i < N_ENDING; i++) {
        struct sigaction old, sa = {0};
        if (handler_installed[i] || sigaction(ending_signals[i], NULL, &old) != 0 ||
            old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
            continue;
        sa.sa_handler = on_ending_signal;
        sigemptyset(&sa.sa_mask);
        handler_installed[i] = sigaction(ending_signals[i], &sa, NULL) == 0;
    }
}

void fmpl_exit_cleanup_clear(void)
{
    atomic_store(&cleanup_armed, 0);
    for (size_t i = 0; i < N_ENDING; i++) {
        struct sigaction cur;
        /* Put SIG_DFL back only if the handler is still ours (the program
         * may have installed its own since). */
        if (handler_installed[i] && sigaction(ending_signals[i], NULL, &cur) == 0 &&
            cur.sa_handler == on_ending_signal)
            signal(ending_signals[i], SIG_DFL);
        handler_installed[i] = 0;
    }
}

void fmpl_exit_cleanup_now(void)
{
    if (atomic_exchange(&cleanup_armed, 0))
        unlink(cleanup_path);
}
