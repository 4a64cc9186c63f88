/* Active messages (seed 004's AM framework): a handler id, up to
 * FMPL_AM_MAX_ARGS argument words and a payload, carried by one channel
 * record and run by the handler registered for the id at the target, inside
 * its progress.  The sequence is in active_message.c. */
#ifndef FMPL_PROTOCOLS_ACTIVE_MESSAGE_H
#define FMPL_PROTOCOLS_ACTIVE_MESSAGE_H

#include "base/hidden.h"
#include <stddef.h>
#include <stdint.h>

#include "fmpl.h"
#include "protocols/team.h"

/* After the channels are connected: installs the record type's handler. */
int fmpl_am_init(void);
void fmpl_am_finalize(void);

void fmpl_am_set_handler(int id, fmpl_am_handler fn, void *ctx);
/* The largest payload (fmpl.h: fmpl_am_max_payload); 0 before start-up. */
size_t fmpl_am_payload_max(void);

/* Arguments arrive checked.  `dst` is a rank of t; `reply` marks an
 * fmpl_am_reply.
 * try_send: the message is in the ring (1), or there is no room for it now
 *   or older queued messages to the same target still wait (0, nothing
 *   sent: the caller progresses and tries again).  For the program's sends.
 * send_or_queue: never waits; when try_send would return 0 the message is
 *   copied to the tail of the target's queue.  For sends from handlers.
 *   FMPL_ERR_NO_MEMORY when the queue cannot grow. */
int fmpl_am_try_send(fmpl_team *t, int dst, int id, const uint64_t *args, int nargs,
                     const void *payload, size_t size, int reply);
int fmpl_am_send_or_queue(fmpl_team *t, int dst, int id, const uint64_t *args, int nargs,
                          const void *payload, size_t size, int reply);

/* Messages queued by handlers and not yet sent: progress calls
 * fmpl_am_progress only while this is nonzero. */
extern FMPL_HIDDEN uint64_t fmpl_am_queued;
/* Send queued messages the targets have room for; returns how many. */
int fmpl_am_progress(void);

/* Nonzero while a handler runs.  Handlers run inside progress, which runs
 * under the core lock when the agent is on, so whichever thread looks at
 * this from inside the library sees its own state: a plain int. */
extern int fmpl_am_handler_depth;
/* Handlers run so far (fmpl_am_poll's count). */
extern uint64_t fmpl_am_handled;

#endif
