#include "progress/progress.h"
#include "protocols/sender_match.h"

int fmpl_progress(void) { return fmpl_sm_progress(); }
