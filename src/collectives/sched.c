/* The schedule executor and the builders' primitives (sched.h).
 *
 * Remote operations of one instance, per SEND/RECV pair (sender S, receiver
 * R, tags T = tag, Tr = ready_tag of the instance on the step's lane):
 *   nonblocking:  R posts irecv(T) when its round starts; S sends (T) when
 *                 its round starts (early data waits in R's unexpected queue).
 *   persistent:   R posts irecv(T), then sends a zero-byte envelope (Tr) to S;
 *                 S, whose irecv(Tr) was posted one instance ahead, sees it
 *                 complete, posts irecv(Tr) for the next instance, and sends
 *                 (T).  The data's completion (eager copy, or rendezvous pull
 *                 finished) completes both steps. */
#include "collectives/sched.h"
#include "collectives/coll_run.h"
#include "base/error.h"
#include "progress/agent.h"
#include "progress/progress.h"

#include <stdlib.h>
#include <string.h>

/* Library tags of the schedules: below the team-creation tags. */
#define SCHED_TAG_BASE (-16)
#define SCHED_TAG_SPAN (1 << 28)

/* Freed schedules kept for reuse (each with its steps array): a
 * nonblocking collective's schedule then costs no allocation. */
#define SCHED_KEEP 8
#define SCHED_KEEP_STEPS 256
static fmpl_sched *kept;
static int nkept;

/* Freed scratch blocks, kept apart from the schedules: a schedule takes the
 * smallest kept block that fits, whichever schedule had it before (several
 * collectives outstanding at once get their schedules from the kept list in
 * any order). */
#define SCRATCH_KEEP 8
#define SCRATCH_KEEP_BYTES (32u << 20) /* bytes of scratch blocks kept in all */
static struct {
    void *p;
    size_t cap;
} kept_scratch[SCRATCH_KEEP];
static int nkept_scratch;
static size_t kept_scratch_bytes;

static void *scratch_take(size_t bytes, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < nkept_scratch; i++)
        if (kept_scratch[i].cap >= bytes && (best < 0 || kept_scratch[i].cap < kept_scratch[best].cap))
            best = i;
    if (best < 0)
        return NULL;
    void *p = kept_scratch[best].p;
    *cap = kept_scratch[best].cap;
    kept_scratch_bytes -= *cap;
    kept_scratch[best] = kept_scratch[--nkept_scratch];
    return p;
}

static void scratch_give_back(void *p, size_t cap)
{
    if (!p)
        return;
    if (nkept_scratch == SCRATCH_KEEP || kept_scratch_bytes + cap > SCRATCH_KEEP_BYTES) {
        /* Full: keep the larger block, which serves more requests. */
        int smallest = -1;
        for (int i = 0; i < nkept_scratch; i++)
            if (smallest < 0 || kept_scratch[i].cap < kept_scratch[smallest].cap)
                smallest = i;
        if (smallest < 0 || kept_scratch[smallest].cap >= cap ||
            kept_scratch_bytes - kept_scratch[smallest].cap + cap > SCRATCH_KEEP_BYTES) {
            free(p);
            return;
        }
        free(kept_scratch[smallest].p);
        kept_scratch_bytes -= kept_scratch[smallest].cap;
        kept_scratch[smallest] = kept_scratch[--nkept_scratch];
    }
    kept_scratch[nkept_scratch].p = p;
    kept_scratch[nkept_scratch].cap = cap;
    nkept_scratch++;
    kept_scratch_bytes += cap;
}

fmpl_sched *fmpl_sched_new(int kind)
{
    fmpl_sched *s = kept;
    if (!s) {
        if ((s = calloc(1, sizeof(fmpl_sched))))
            s->nonblocking = kind == FMPL_SCHED_NONBLOCKING;
        return s;
    }
    kept = s->next_free;
    nkept--;
    fmpl_step *steps = s->steps;
    int cap = s->cap;
    memset(s, 0, offsetof(fmpl_sched, arena));
    s->steps = steps;
    s->cap = cap;
    s->nonblocking = kind == FMPL_SCHED_NONBLOCKING;
    return s;
}

static void add_lane(fmpl_sched *s, fmpl_team *t, fmpl_team *numbering)
{
    if (s->nlanes == FMPL_SCHED_LANES) {
        if (!s->error)
            s->error = FMPL_ERROR(FMPL_ERR_INTERNAL, "a schedule spans more than %d teams",
                                  FMPL_SCHED_LANES);
        return;
    }
    fmpl_sched_lane *l = &s->lanes[s->nlanes];
    uint64_t seq = fmpl_sched_next_seq(numbering, s->nonblocking) % SCHED_TAG_SPAN;
    l->team = t;
    l->team_id = t->id;
    l->tag = SCHED_TAG_BASE - 2 * (int)seq;
    l->ready_tag = l->tag - 1;
    s->lane = s->nlanes++;
    if (s->lane == 0)
        s->team = t;
}

void fmpl_sched_bind(fmpl_sched *s, fmpl_team *t)
{
    for (int i = 0; i < s->nlanes; i++)
        if (s->lanes[i].team == t) {
            s->lane = i;
            return;
        }
    add_lane(s, t, t);
}

void fmpl_sched_bind_view(fmpl_sched *s, fmpl_team *view, fmpl_team *numbering)
{
    if (s->nlanes == 0)
        add_lane(s, view, numbering);
    s->lane = 0;
}

void fmpl_sched_phase(fmpl_sched *s)
{
    if (s->nsteps)
        s->round_base = s->steps[s->nsteps - 1].round + 1;
}

fmpl_step *fmpl_sched_add(fmpl_sched *s, int kind, int round)
{
    if (s->error)
        return NULL;
    if (kind == FMPL_STEP_PUT) { /* reserved: no executor for it yet */
        s->error = FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "schedule put steps are not implemented");
        return NULL;
    }
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        fmpl_step *p = realloc(s->steps, (size_t)cap * sizeof *p);
        if (!p) {
            s->error = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a collective schedule");
            return NULL;
        }
        s->steps = p;
        s->cap = cap;
    }
    round += s->round_base;
    if (s->nsteps && s->steps[s->nsteps - 1].round > round) {
        s->error = FMPL_ERROR(FMPL_ERR_INTERNAL, "schedule rounds out of order");
        return NULL;
    }
    fmpl_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->round = round;
    return st;
}

static int add_message(fmpl_sched *s, int kind, int round, void *buf, int64_t bytes, int peer)
{
    fmpl_step *st = fmpl_sched_add(s, kind, round);
    if (!st)
        return s->error;
    st->lane = s->lane;
    st->peer = peer;
    st->dst = buf;
    st->src = buf;
    st->bytes = bytes;
    return FMPL_SUCCESS;
}

int fmpl_sched_send(fmpl_sched *s, int round, const void *buf, int64_t bytes, int peer)
{
    return add_message(s, FMPL_STEP_SEND, round, (void *)buf, bytes, peer);
}

int fmpl_sched_recv(fmpl_sched *s, int round, void *buf, int64_t bytes, int peer)
{
    return add_message(s, FMPL_STEP_RECV, round, buf, bytes, peer);
}

int fmpl_sched_copy(fmpl_sched *s, int round, void *dst, const void *src, int64_t bytes)
{
    if (bytes <= 0 || dst == src)
        return s->error;
    fmpl_step *st = fmpl_sched_add(s, FMPL_STEP_COPY, round);
    if (!st)
        return s->error;
    st->dst = dst;
    st->src = src;
    st->bytes = bytes;
    return FMPL_SUCCESS;
}

int fmpl_sched_reduce(fmpl_sched *s, int round, const void *src, void *dst, int64_t count)
{
    if (count <= 0)
        return s->error;
    fmpl_step *st = fmpl_sched_add(s, FMPL_STEP_REDUCE, round);
    if (!st)
        return s->error;
    st->dst = dst;
    st->src = src;
    st->count = count;
    return FMPL_SUCCESS;
}

int fmpl_sched_call(fmpl_sched *s, int round, void (*fn)(void *), void *arg)
{
    fmpl_step *st = fmpl_sched_add(s, FMPL_STEP_CALL, round);
    if (!st)
        return s->error;
    st->fn = fn;
    st->arg = arg;
    return FMPL_SUCCESS;
}

int fmpl_sched_run_algo(fmpl_sched *s, int round, fmpl_coll_algo *a)
{
    fmpl_step *st = fmpl_sched_add(s, FMPL_STEP_RUN, round);
    if (!st)
        return s->error;
    if (s->nonblocking)
        a->coll = a->team->coll->nbc;
    st->algo = a;
    return FMPL_SUCCESS;
}

void fmpl_sched_set_op(fmpl_sched *s, const fmpl_op *op)
{
    s->op = *op;
}

static fmpl_sched_block *add_block(fmpl_sched *s, size_t bytes)
{
    fmpl_sched_block *b = calloc(1, sizeof *b + bytes);
    if (!b) {
        s->error = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a collective schedule (%zu bytes)",
                              bytes);
        return NULL;
    }
    b->next = s->blocks;
    s->blocks = b;
    return b;
}

void *fmpl_sched_alloc(fmpl_sched *s, size_t bytes)
{
    size_t align = _Alignof(max_align_t);
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded <= sizeof s->arena - s->arena_used) {
        void *p = s->arena + s->arena_used;
        s->arena_used += rounded;
        memset(p, 0, bytes);
        return p;
    }
    fmpl_sched_block *b = add_block(s, bytes);
    return b ? b->data : NULL;
}

void *fmpl_sched_scratch(fmpl_sched *s, size_t bytes)
{
    if (s->scratch)
        return fmpl_sched_alloc(s, bytes);
    if (bytes == 0)
        bytes = 1;
    s->scratch = scratch_take(bytes, &s->scratch_cap);
    if (!s->scratch) {
        if (!(s->scratch = malloc(bytes))) {
            if (!s->error)
                s->error = FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                                      "no memory for a collective schedule (%zu bytes)", bytes);
            return NULL;
        }
        s->scratch_cap = bytes;
    }
    return s->scratch;
}

int fmpl_sched_on_free(fmpl_sched *s, void (*release)(void *), void *arg)
{
    fmpl_sched_release *r = fmpl_sched_alloc(s, sizeof *r);
    if (!r)
        return s->error;
    r->fn = release;
    r->arg = arg;
    r->next = s->releases;
    s->releases = r;
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------ execution */

static char no_bytes; /* the zero-byte messages' buffer */

/* A prepared message of a persistent schedule (sched_prepared.c moves it). */
static int prepared_message(const fmpl_sched *s, const fmpl_step *st)
{
    return s->persistent && st->prep != FMPL_PREP_NONE &&
           (st->kind == FMPL_STEP_SEND || st->kind == FMPL_STEP_RECV);
}

void fmpl_sched_token_expect(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    fmpl_tm_irecv(&st->ready, l->team, &no_bytes, 0, st->peer, l->ready_tag);
}

void fmpl_sched_token_send(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    fmpl_tm_send_eager(l->team, &no_bytes, 0, st->peer, l->ready_tag);
}

void fmpl_sched_prepare(fmpl_sched *s)
{
    s->persistent = 1;
    int messages = 0, tokens = 0;
    s->direct = 0;
    for (int i = 0; i < s->nsteps; i++) {
        fmpl_step *st = &s->steps[i];
        st->prep = FMPL_PREP_NONE;
        if (st->kind == FMPL_STEP_SEND || st->kind == FMPL_STEP_RECV) {
            st->prep = fmpl_sched_prepared_mode(s, st);
            s->direct |= st->prep == FMPL_PREP_DIRECT;
            messages = 1;
            tokens |= st->prep == FMPL_PREP_NONE;
        }
    }
    s->prepared = messages && !tokens;
    for (int i = 0; i < s->nsteps; i++) {
        fmpl_step *st = &s->steps[i];
        if (prepared_message(s, st))
            fmpl_sched_prepared_setup(s, st);
        else if (st->kind == FMPL_STEP_SEND)
            fmpl_sched_token_expect(s, st);
        if (st->kind == FMPL_STEP_RUN && st->algo->prepare)
            st->algo->prepare(st->algo);
    }
}

static void keep_error(fmpl_sched *s, int rc)
{
    if (rc != FMPL_SUCCESS && s->error == FMPL_SUCCESS)
        s->error = rc;
}

static void issue(fmpl_sched *s, fmpl_step *st)
{
    const fmpl_sched_lane *l = &s->lanes[st->lane];
    fmpl_team *t = l->team;
    if (prepared_message(s, st)) {
        fmpl_sched_prepared_issue(s, st); /* put or taken by step_done */
        return;
    }
    switch (st->kind) {
    case FMPL_STEP_SEND:
        if (s->persistent) {
            st->waiting_ready = 1; /* sent once the token is in (poll_send) */
            st->req.complete = 0;
            return;
        }
        keep_error(s, fmpl_tm_isend(&st->req, t, st->src, st->bytes, st->peer, l->tag,
                                    FMPL_TM_MODE_STANDARD));
        return;
    case FMPL_STEP_RECV:
        keep_error(s, fmpl_tm_irecv(&st->req, t, st->dst, st->bytes, st->peer, l->tag));
        if (s->persistent)
            fmpl_sched_token_send(s, st);
        return;
    case FMPL_STEP_COPY:
        memmove(st->dst, st->src, (size_t)st->bytes);
        return;
    case FMPL_STEP_REDUCE:
        fmpl_op_apply(&s->op, st->src, st->dst, (long)st->count);
        return;
    case FMPL_STEP_CALL:
        st->fn(st->arg);
        return;
    }
}

/* A step issued in this round: finished? */
static int step_done(fmpl_sched *s, fmpl_step *st)
{
    if (st->kind == FMPL_STEP_RUN) {
        int rc = fmpl_coll_algo_poll(st->algo);
        if (rc == FMPL_RUN_PENDING)
            return 0;
        keep_error(s, rc);
        return 1;
    }
    if (st->kind != FMPL_STEP_SEND && st->kind != FMPL_STEP_RECV)
        return 1;
    if (prepared_message(s, st)) {
        int err;
        if (!fmpl_sched_prepared_poll(s, st, &err))
            return 0;
        keep_error(s, err);
        return 1;
    }
    if (st->waiting_ready) {
        if (!st->ready.complete)
            return 0;
        st->waiting_ready = 0;
        fmpl_sched_token_expect(s, st); /* the next instance's token */
        const fmpl_sched_lane *l = &s->lanes[st->lane];
        keep_error(s, fmpl_tm_isend(&st->req, l->team, st->src, st->bytes, st->peer, l->tag,
                                    FMPL_TM_MODE_STANDARD));
    }
    if (!st->req.complete)
        return 0;
    if (st->kind == FMPL_STEP_RECV && st->req.st_error != FMPL_SUCCESS)
        keep_error(s, st->req.st_error);
    else if (st->kind == FMPL_STEP_RECV && st->req.st_bytes != st->bytes)
        /* Every receive of a schedule is posted for exactly the bytes its
         * sender sends, when the members' arguments agree, as MPI demands:
         * a shorter message means they did not (an erroneous program),
         * which a point-to-point receive would take without a word. */
        keep_error(s, FMPL_ERROR(FMPL_ERR_ARG,
                                 "a collective's message of %lld bytes from rank %d, where %lld "
                                 "were expected (the members' counts and datatypes must match)",
                                 (long long)st->req.st_bytes, st->peer, (long long)st->bytes));
    return 1;
}

/* The executor: advance as far as possible; nonzero once finished. */
static int sched_poll(fmpl_async *a)
{
    fmpl_sched *s = (fmpl_sched *)a;
    while (s->cur < s->nsteps) {
        int round = s->steps[s->cur].round, end = s->cur;
        while (end < s->nsteps && s->steps[end].round == round)
            end++;
        if (!s->issued) {
            for (int i = s->cur; i < end; i++)
                issue(s, &s->steps[i]);
            s->issued = 1;
        }
        int all = 1;
        for (int i = s->cur; i < end; i++)
            all &= step_done(s, &s->steps[i]);
        if (!all)
            return 0;
        s->cur = end;
        s->issued = 0;
    }
    s->active = 0;
    return 1;
}

void fmpl_sched_start(fmpl_sched *s)
{
    /* The instance's place in its teams' order of shared-memory runs:
     * taken now, in start order, whichever round the runs are in. */
    int messages = 0;
    for (int i = 0; i < s->nsteps; i++) {
        if (s->steps[i].kind == FMPL_STEP_RUN)
            fmpl_coll_algo_enqueue(s->steps[i].algo);
        messages |= s->steps[i].kind == FMPL_STEP_SEND || s->steps[i].kind == FMPL_STEP_RECV;
    }
    s->cur = 0;
    s->issued = 0;
    s->active = 1;
    s->error = FMPL_SUCCESS;
    /* A prepared run of its own (one unordered RUN step), or a schedule of
     * prepared messages, that finishes at once never enters the engine's
     * list: the root of a prepared broadcast, or a member whose data is
     * already there.  Not a schedule with direct puts while the agent runs:
     * its first round's local steps (the copy of a 1 MiB allreduce's vector,
     * a reduction) would run on the caller's time, as fmpl_async_start
     * avoids too: across the namespace hosts MPI_Start then took 108-118 us
     * of CPU and the allreduce overlapped 84-89% while the rank slept. */
    if (((s->nsteps == 1 && s->steps[0].kind == FMPL_STEP_RUN && s->steps[0].algo->unordered) ||
         (s->prepared && !(s->direct && fmpl_agent_on))) &&
        sched_poll(&s->async)) {
        s->async.done = 1;
        s->async.next = NULL;
        return;
    }
    fmpl_async_start(&s->async, sched_poll);
    /* Without messages only its own polls advance it (its shared-memory
     * runs): a wait for it may poll it alone. */
    s->async.self_driven = !messages;
}

int fmpl_sched_run(fmpl_sched *s)
{
    fmpl_sched_start(s);
    /* The caller waits at once: the first poll that fmpl_async_start leaves
     * to the agent (so that a nonblocking start returns to the caller's
     * compute) is the caller's own here.  Left to the wait's first pass, it
     * made an 8-byte MPI_Bcast across the namespace hosts 7.3 us instead of
     * 5.3 with the agent on (6.3 off). */
    if (!s->async.done && fmpl_agent_on)
        fmpl_async_progress();
    fmpl_async_wait(&s->async);
    return s->error;
}

void fmpl_sched_free(fmpl_sched *s)
{
    if (!s)
        return;
    for (int i = 0; s->persistent && i < s->nsteps; i++) {
        fmpl_step *st = &s->steps[i];
        const fmpl_sched_lane *l = &s->lanes[st->lane];
        if (prepared_message(s, st))
            fmpl_sched_prepared_free(s, st);
        else if (st->kind == FMPL_STEP_SEND && fmpl_teams[l->team_id] == l->team)
            fmpl_tm_cancel_recv(&st->ready);
    }
    /* Latest first, as before: a release may depend on an earlier one's
     * object still being there. */
    for (fmpl_sched_release *r = s->releases; r; r = r->next)
        r->fn(r->arg);
    s->releases = NULL;
    while (s->blocks) {
        fmpl_sched_block *b = s->blocks;
        s->blocks = b->next;
        free(b);
    }
    scratch_give_back(s->scratch, s->scratch_cap);
    s->scratch = NULL;
    s->scratch_cap = 0;
    if (nkept < SCHED_KEEP && s->cap <= SCHED_KEEP_STEPS) {
        s->next_free = kept;
        kept = s;
        nkept++;
        return;
    }
    free(s->steps);
    free(s);
}

uint64_t fmpl_sched_next_seq(fmpl_team *t, int nonblocking)
{
    /* SCHED_TAG_SPAN is even: the parity survives the wrap-around. */
    fmpl_coll_team *c = nonblocking ? t->coll->nbc : t->coll;
    return 2 * c->sched_seq++ + (nonblocking ? 1 : 0);
}
