/* Name publishing (MPI_Publish_name, MPI_Lookup_name) and FMPL's rendezvous
 * queues (MPI_Comm_connect/accept), served for every group of the job:
 *   cmd=publish_name service=S port=P   -> cmd=publish_result rc=0 msg=success
 *                                          (rc=-1 msg=service_S_already_published)
 *   cmd=unpublish_name service=S        -> cmd=unpublish_result rc=0 msg=success
 *                                          (rc=-1 msg=service_S_not_published)
 *   cmd=lookup_name service=S           -> cmd=lookup_result rc=0 msg=success port=P
 *                                          (rc=-1 msg=service_S_not_published)
 *   cmd=fmpl_post queue=Q value=V       -> cmd=fmpl_post_result rc=0
 *   cmd=fmpl_take queue=Q               -> cmd=fmpl_take_result rc=0 value=V
 *                                          (rc=-1 msg=empty, at once: clients poll)
 * The first three as mpiexec.hydra serves them (Hydra also adds info=ok,
 * which old MPICH clients check, and answers failures with rc=1; clients
 * that test rc != 0 read both alike).  A queue is a FIFO: a post appends,
 * a take removes the oldest value.  Nothing waits in the server, so a
 * process that dies holding a name or leaving values blocks nobody. */
#include "fmplrun.h"

#include <stdlib.h>
#include <string.h>

/* Values waiting in all queues together, at most: a bound on the memory a
 * runaway poster can take. */
#define QUEUED_MAX 65536

typedef struct queued {
    struct queued *next;
    char *value;
} queued;

typedef struct queue {
    struct queue *next;
    char *name;
    queued *head, **tail;
} queue;

struct fr_queues {
    queue *list;     /* few queues live at once: a list will do */
    int nqueued;
};

fr_queues *fr_queues_new(void) { return calloc(1, sizeof(fr_queues)); }

static queue **find_queue(fr_queues *q, const char *name)
{
    queue **link = &q->list;
    while (*link && strcmp((*link)->name, name) != 0)
        link = &(*link)->next;
    return link;
}

int fr_queue_post(fr_queues *q, const char *name, const char *value)
{
    if (q->nqueued >= QUEUED_MAX)
        return -1;
    queue **link = find_queue(q, name);
    if (!*link) {
        queue *nq = calloc(1, sizeof *nq);
        if (!nq || !(nq->name = strdup(name))) {
            free(nq);
            return -1;
        }
        nq->tail = &nq->head;
        *link = nq;
    }
    queued *v = malloc(sizeof *v);
    if (!v || !(v->value = strdup(value))) {
        free(v);
        return -1;
    }
    v->next = NULL;
    *(*link)->tail = v;
    (*link)->tail = &v->next;
    q->nqueued++;
    return 0;
}

char *fr_queue_take(fr_queues *q, const char *name)
{
    queue **link = find_queue(q, name);
    queue *qu = *link;
    if (!qu)
        return NULL;
    queued *v = qu->head;
    char *value = v->value;
    qu->head = v->next;
    free(v);
    q->nqueued--;
    if (!qu->head) { /* an empty queue is no queue: forget it */
        *link = qu->next;
        free(qu->name);
        free(qu);
    }
    return value;
}

void fr_queues_free(fr_queues *q)
{
    if (!q)
        return;
    while (q->list)
        free(fr_queue_take(q, q->list->name));
    free(q);
}

int fr_names_handle(fr_job *job, fr_rank *r, const char *cmd, const char *line)
{
    char service[FMPL_PMI1_KEYLEN_MAX * 4], port[FMPL_PMI1_VALLEN_MAX];
    int has_service = fmpl_pmi1_field(line, "service", service, sizeof service) == 0;
    if (strcmp(cmd, "publish_name") == 0) {
        if (!has_service || fmpl_pmi1_field(line, "port", port, sizeof port) != 0)
            fr_pmi_reply(job, r,
                         "cmd=publish_result rc=-1 msg=missing_or_too_long_service_or_port");
        else if (fr_kvs_get(job->names, service))
            fr_pmi_reply(job, r, "cmd=publish_result rc=-1 msg=service_%s_already_published",
                         service);
        else if (fr_kvs_put(job->names, service, port) != 0)
            fr_pmi_reply(job, r, "cmd=publish_result rc=-1 msg=out_of_memory");
        else
            fr_pmi_reply(job, r, "cmd=publish_result rc=0 msg=success");
    } else if (strcmp(cmd, "unpublish_name") == 0) {
        if (!has_service)
            fr_pmi_reply(job, r, "cmd=unpublish_result rc=-1 msg=missing_or_too_long_service");
        else if (fr_kvs_del(job->names, service) != 0)
            fr_pmi_reply(job, r, "cmd=unpublish_result rc=-1 msg=service_%s_not_published",
                         service);
        else
            fr_pmi_reply(job, r, "cmd=unpublish_result rc=0 msg=success");
    } else if (strcmp(cmd, "lookup_name") == 0) {
        const char *found = has_service ? fr_kvs_get(job->names, service) : NULL;
        if (!has_service)
            fr_pmi_reply(job, r, "cmd=lookup_result rc=-1 msg=missing_or_too_long_service");
        else if (!found)
            fr_pmi_reply(job, r, "cmd=lookup_result rc=-1 msg=service_%s_not_published",
                         service);
        else
            fr_pmi_reply(job, r, "cmd=lookup_result rc=0 msg=success port=%s", found);
    } else if (strcmp(cmd, "fmpl_post") == 0) {
        char name[FMPL_PMI1_KEYLEN_MAX * 4], value[FMPL_PMI1_VALLEN_MAX];
        if (fmpl_pmi1_field(line, "queue", name, sizeof name) != 0 ||
            fmpl_pmi1_field(line, "value", value, sizeof value) != 0)
            fr_pmi_reply(job, r,
                         "cmd=fmpl_post_result rc=-1 msg=missing_or_too_long_queue_or_value");
        else if (fr_queue_post(job->queues, name, value) != 0)
            fr_pmi_reply(job, r, "cmd=fmpl_post_result rc=-1 msg=too_many_queued_values");
        else
            fr_pmi_reply(job, r, "cmd=fmpl_post_result rc=0");
    } else if (strcmp(cmd, "fmpl_take") == 0) {
        char name[FMPL_PMI1_KEYLEN_MAX * 4];
        char *value = NULL;
        if (fmpl_pmi1_field(line, "queue", name, sizeof name) != 0)
            fr_pmi_reply(job, r, "cmd=fmpl_take_result rc=-1 msg=missing_or_too_long_queue");
        else if (!(value = fr_queue_take(job->queues, name)))
            fr_pmi_reply(job, r, "cmd=fmpl_take_result rc=-1 msg=empty");
        else
            fr_pmi_reply(job, r, "cmd=fmpl_take_result rc=0 value=%s", value);
        free(value);
    } else {
        return 0;
    }
    return 1;
}
