/*
 * cidr.h -- lists of address blocks (192.0.2.0/24, 2001:db8::/32, a bare address: its own block)
 * and the client address of a request behind trusted proxies (X-Forwarded-For). Pure: no I/O.
 */
#ifndef RANKD_CIDR_H
#define RANKD_CIDR_H

#include <stddef.h>
#include <stdint.h>

#define CIDR_MAX 32      /**< blocks in a list */
#define CIDR_ADDR_MAX 46 /**< INET6_ADDRSTRLEN: an address as text, with its NUL */

/** One block: an IPv4 address is kept as its IPv4-mapped IPv6 form (::ffff:a.b.c.d/96+bits). */
struct cidr {
    uint8_t addr[16]; /**< the network's bytes (bits past `bits` zero) */
    int bits;         /**< 0..128 */
};

struct cidr_list {
    int n;
    struct cidr items[CIDR_MAX];
};

/** Parse "CIDR[,CIDR...]" ("" is an empty list; spaces around items ignored) into out. 0, or
 *  -EINVAL with the item and the rule in why[0..whylen). */
int cidr_parse_list(const char *text, struct cidr_list *out, char *why, size_t whylen);

/** Parse one address (IPv4 or IPv6 text) into its 16 bytes (IPv4: mapped). 0 or -EINVAL. */
int cidr_addr_parse(const char *text, size_t len, uint8_t out[16]);

/** 1 when address a (16 bytes) is in one of l's blocks. */
int cidr_match(const struct cidr_list *l, const uint8_t a[16]);

/**
 * The client of a request from peer `peer` (its address as text: "192.0.2.7", "::1"):
 * when the peer is in `trusted` and `xff` (the X-Forwarded-For values, comma-separated; NULL:
 * none) names addresses, the right-most one that is not itself trusted (or the left-most when
 * all are), read right to left and stopping at the first entry that is not an address; else
 * the peer. Written NUL-terminated into out[0..CIDR_ADDR_MAX) as the address's canonical text.
 */
void cidr_client(const char *peer, const char *xff, const struct cidr_list *trusted,
                 char out[CIDR_ADDR_MAX]);

#endif
