/*
 * peer_count.h -- open connections per client address, for --max-connections-per-ip: one table
 * for the whole process, shared by the event loops' threads (its own mutex).
 *
 * An address is the peer's IPv4 (4 bytes) or IPv6 (16 bytes) address as accept() gave it; an
 * IPv4-mapped IPv6 peer counts apart from the same address over IPv4 (a listening socket is one
 * family or the other, so a client reaches rankd in one form). Peers of other families (none
 * today) are not counted. An entry lives while its address has a connection open: the table
 * holds at most as many entries as there are open connections.
 */
#ifndef RANKD_PEER_COUNT_H
#define RANKD_PEER_COUNT_H

#include <sys/socket.h>

struct peer_count;

/** A table allowing max connections per address (0: no limit; take always succeeds and nothing
 *  is kept). NULL when out of memory. */
struct peer_count *peer_count_new(int max);

/** Count one more connection from sa's address: 0, or -1 when the address already has max open
 *  (nothing counted) or an entry could not be allocated (refused: the limit is never skipped). */
int peer_count_take(struct peer_count *t, const struct sockaddr *sa);

/** One connection from sa's address closed (one counted by peer_count_take). The entry is freed
 *  when its count reaches 0. */
void peer_count_give(struct peer_count *t, const struct sockaddr *sa);

/** Connections counted for sa's address now (0 when none, or not counted). */
int peer_count_open(struct peer_count *t, const struct sockaddr *sa);

/** Free the table (NULL: nothing). No thread may be using it. */
void peer_count_free(struct peer_count *t);

#endif
