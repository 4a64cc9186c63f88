#include "progress/progress.h"
#include "progress/async.h"
#include "protocols/sender_match.h"
#include "protocols/tag_match.h"

int fmpl_progress(void) { return fmpl_sm_progress() + fmpl_tm_progress() + fmpl_async_progress(); }
