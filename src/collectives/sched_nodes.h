/* Node grouping for the hierarchical schedules (sched_nodes.c). */
#ifndef FMPL_COLLECTIVES_SCHED_NODES_H
#define FMPL_COLLECTIVES_SCHED_NODES_H

#include "collectives/sched_coll.h"

typedef struct fmpl_sched_nodes_view {
    int *leaders;        /* one per node, the root's node first (the root leads it) */
    int nleaders;
    int my_leader_index; /* -1: not a leader */
    int *locals;         /* my node's members, its leader first */
    int nlocals;
    int my_local_index;
} fmpl_sched_nodes_view;

/* Arrays from the schedule's memory. */
int fmpl_sched_nodes(fmpl_sched *s, fmpl_team *t, int root, fmpl_sched_nodes_view *v);
/* The binomial tree of sched_bcast_binomial.c over a member list. */
int fmpl_sched_binomial_tree(fmpl_sched *s, const int *members, int n, int v, void *buf,
                             int64_t size, int round);

#endif
