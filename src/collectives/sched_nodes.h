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

/* The team's shape (computed once, when its collectives connect):
 * FMPL_NODES_HIER when the node-aware schedules apply (several nodes, some
 * with two members or more, FMPL_COLL_NODES not off), with
 * FMPL_NODES_ORDERED when each node's members are consecutive team ranks
 * (so a reduction through node leaders combines in rank order); 0 else. */
enum { FMPL_NODES_HIER = 1, FMPL_NODES_ORDERED = 2 };
int fmpl_sched_nodes_shape(const fmpl_team *t);
/* Arrays from the schedule's memory. */
int fmpl_sched_nodes(fmpl_sched *s, fmpl_team *t, int root, fmpl_sched_nodes_view *v);
/* The binomial tree of sched_bcast_binomial.c over a member list. */
int fmpl_sched_binomial_tree(fmpl_sched *s, const int *members, int n, int v, void *buf,
                             int64_t size, int round);
/* The reduction tree of sched_reduce_binomial.c over a member list in rank
 * order (members[0] receives the result), from phase round 0; work as
 * there.  Returns the round after the member's last step. */
int fmpl_sched_reduce_tree(fmpl_sched *s, const int *members, int n, int v, void *buf,
                           int64_t count, void *work);
/* Allreduce by recursive doubling among n members (a power of two) in rank
 * order (sched_allreduce_exchange.c), from phase round 0; work: one block,
 * or NULL (allocated).  Returns the round after the member's last step. */
int fmpl_sched_allreduce_exchange(fmpl_sched *s, const int *members, int n, int v, void *buf,
                                  int64_t count, void *work);

/* Allreduce through every member of every node (sched_allreduce_split.c):
 * fits when the team is a power-of-two number of nodes of equal size >= 2,
 * node n holding ranks nL..nL+L-1, and count >= L * L; work: count
 * elements, or NULL (allocated). */
int fmpl_sched_allreduce_split_fits(const fmpl_team *t, const fmpl_sched_nodes_view *v,
                                    int64_t count);
int fmpl_sched_allreduce_split(fmpl_sched *s, const fmpl_sched_nodes_view *v, void *buf,
                               int64_t count, void *work);
#endif
