/* Remote copies with notification over symmetric memory (seed 004, NICAM's
 * bcopy family): put, get and third-party copies, each followed by a
 * notification (a word set to a value, or a counter counted up) at the
 * rank whose memory received the data.  The sequence is in remote_copy.c.
 *
 * Addresses are arena offsets (fabric/symmetric.h) and world ranks; the API
 * layer has checked them against this rank's blocks. */
#ifndef FMPL_PROTOCOLS_REMOTE_COPY_H
#define FMPL_PROTOCOLS_REMOTE_COPY_H

#include <stddef.h>
#include <stdint.h>

/* A notification: kind is FMPL_NOTIFY_* (fmpl.h); word_off the arena offset
 * of the word at the notified rank. */
typedef struct fmpl_rc_note {
    int kind;
    uint64_t word_off;
    uint64_t value;
} fmpl_rc_note;

/* Start-up (registers the channel record handler, takes the
 * acknowledgement lines from the heap) and shut-down. */
int fmpl_rc_init(void);
void fmpl_rc_finalize(void);

/* src (local memory, size bytes) -> dst_w's arena at dst_off, then the
 * note at dst_w.  Returns when src may be reused. */
int fmpl_rc_put(const void *src, size_t size, int dst_w, uint64_t dst_off,
                const fmpl_rc_note *note);
/* src_w's arena at src_off -> dst (local memory), then the note here.
 * Returns with the data in place. */
int fmpl_rc_get(void *dst, size_t size, int src_w, uint64_t src_off, const fmpl_rc_note *note);
/* Ask src_w (not this rank) to put its arena's [src_off, + size) into
 * dst_w's arena at dst_off and notify dst_w; returns once asked. */
int fmpl_rc_forward(int src_w, uint64_t src_off, int dst_w, uint64_t dst_off, size_t size,
                    const fmpl_rc_note *note);

/* Every copy this rank forwarded to one of world[0 .. n) has been carried
 * out (data and note placed at their destination) and acknowledged.  The
 * caller waits for this with progress, then fmpl_rc_sync_finish. */
int fmpl_rc_acked(const int *world, int n);
/* After fmpl_rc_acked: flush this rank's own puts and notes, and report
 * forwarded copies that the source refused since the last sync. */
int fmpl_rc_sync_finish(const int *world, int n);

#endif
