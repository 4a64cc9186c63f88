/* Native active messages (fmpl.h): checks, then the protocol
 * (protocols/active_message.c).  The program's sends wait here, with
 * progress, while the target's ring is full; sends from handlers never
 * wait (the protocol queues them). */
#include "api/fmpl/api.h"
#include "progress/progress.h"
#include "protocols/active_message.h"

static int check_message(int id, const uint64_t *args, int nargs, const void *payload,
                         size_t size, const char *func)
{
    if (id < 0 || id > FMPL_AM_MAX_ID)
        return fmpl_error_report(FMPL_ERR_ARG, func, "handler id %d is outside 0 .. %d", id,
                                 FMPL_AM_MAX_ID);
    if (nargs < 0 || nargs > FMPL_AM_MAX_ARGS)
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "%d argument words: an active message carries 0 .. %d", nargs,
                                 FMPL_AM_MAX_ARGS);
    if (nargs > 0 && !args)
        return fmpl_error_report(FMPL_ERR_ARG, func, "args is NULL with nargs %d", nargs);
    size_t max = fmpl_am_payload_max();
    if (size > max)
        return fmpl_error_report(FMPL_ERR_SIZE, func,
                                 "a payload of %zu bytes is above the largest, %zu "
                                 "(fmpl_am_max_payload; FMPL_CHANNEL_SIZE / 2 less headers)",
                                 size, max);
    if (size > 0 && !payload)
        return fmpl_error_report(FMPL_ERR_ARG, func, "payload is NULL with size %zu", size);
    return FMPL_SUCCESS;
}

int fmpl_am_register(int id, fmpl_am_handler handler, void *ctx)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_ready(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (id < 0 || id > FMPL_AM_MAX_ID)
        return FMPL_ERROR(FMPL_ERR_ARG, "handler id %d is outside 0 .. %d", id,
                          FMPL_AM_MAX_ID);
    if (!handler)
        return FMPL_ERROR(FMPL_ERR_ARG, "the handler for id %d is NULL", id);
    fmpl_am_set_handler(id, handler, ctx);
    /* Messages may now arrive at any time: the agent (if on) keeps
     * serving, napping rather than sleeping until rung. */
    static int watching;
    if (!watching) {
        watching = 1;
        fmpl_agent_watch(1);
    }
    return FMPL_SUCCESS;
}

int fmpl_am_send(int dst, int id, const uint64_t *args, int nargs, const void *payload,
                 size_t size, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER_READY(comm, t);
    if (dst < 0 || dst >= t->size)
        return FMPL_ERROR(FMPL_ERR_RANK, "destination %d is outside 0 .. %d", dst,
                          t->size - 1);
    int rc = check_message(id, args, nargs, payload, size, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_am_handler_depth)
        return fmpl_am_send_or_queue(t, dst, id, args, nargs, payload, size, 0);
    FMPL_WAIT_UNTIL(fmpl_am_try_send(t, dst, id, args, nargs, payload, size, 0));
    fmpl_agent_ring(t->world[dst]); /* a target's sleeping agent runs the handler now */
    return FMPL_SUCCESS;
}

int fmpl_am_reply(const fmpl_am_token *token, int id, const uint64_t *args, int nargs,
                  const void *payload, size_t size)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_ready(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!token)
        return FMPL_ERROR(FMPL_ERR_ARG, "token is NULL");
    if (!fmpl_am_handler_depth)
        return FMPL_ERROR(FMPL_ERR_ARG, "called outside an active-message handler (the token "
                                        "is valid while its handler runs; use fmpl_am_send)");
    fmpl_team *t = fmpl_api_team(token->comm, __func__, &rc);
    if (!t)
        return rc;
    if (token->source < 0 || token->source >= t->size)
        return FMPL_ERROR(FMPL_ERR_RANK, "the token's source %d is outside 0 .. %d",
                          token->source, t->size - 1);
    rc = check_message(id, args, nargs, payload, size, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    return fmpl_am_send_or_queue(t, token->source, id, args, nargs, payload, size, 1);
}

size_t fmpl_am_max_payload(void) { FMPL_CORE_GUARD(); return fmpl_am_payload_max(); }

int fmpl_am_poll(int *handled)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_ready(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_am_handler_depth)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "called inside an active-message handler, which runs inside "
                          "progress already (a handler may not progress: return instead)");
    uint64_t before = fmpl_am_handled;
    fmpl_progress();
    if (handled)
        *handled = (int)(fmpl_am_handled - before);
    return FMPL_SUCCESS;
}
