#include "base/wait.h"
#include "base/tunable.h"

FMPL_TUNABLE(tunable_spin, "FMPL_SPIN_COUNT", "2000",
             "polls with the pause instruction before a wait starts yielding the core");

unsigned fmpl_spin_count = 2000;

void fmpl_wait_init(void)
{
    long long v = fmpl_tunable_long(&tunable_spin);
    fmpl_spin_count = v < 0 ? 0 : (unsigned)v;
}
