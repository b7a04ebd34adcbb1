/*
 * store_preflight.h -- the start-up check that the Redis user may run what the store does.
 *
 * A store module (it dials on its own, before any store exists): every board read and write is
 * one Lua script (service/lua/), which the store loads with SCRIPT LOAD on its first dial and
 * runs with EVALSHA, and EVAL sends one again after a SCRIPT FLUSH or a failover (store.h). An ACL
 * user without one of these (ACL SETUSER ... -script, -evalsha, -eval) could answer nothing but
 * /healthz and /metrics, and every other route would be a 503 "connection refused" with the reason
 * only in the log. So rankd asks once, before it listens, with probes that change nothing in Redis
 * (a script that does not compile, an EVALSHA of a SHA that is not loaded: the ACL check comes
 * before either is looked at), and refuses to start with one line that names what is missing, what
 * would still work and the ACL rule that fixes it. A Redis that refuses the URL's user or password
 * (WRONGPASS, NOAUTH: a password needed and none given) or its database is bad configuration the
 * same way: every dial would fail alike, so rankd says so in one line instead of starting.
 */
#ifndef RANKD_STORE_PREFLIGHT_H
#define RANKD_STORE_PREFLIGHT_H

#include <stddef.h>

#include "config.h"

/**
 * Probe the Redis of `u` (`what` names it in the message: "Redis", "the cache Redis"), and with
 * `read_replicas` (--read-from-replicas) EVALSHA_RO and EVAL_RO too (the primary's ACL: a
 * replica's is the same user's, as a rule; a replica that refuses them anyway is a replica that
 * fails reads, which go to the primary).
 * Returns 0 when the user may run SCRIPT LOAD, EVALSHA and EVAL, or when Redis cannot be reached
 * or asked now (a connection refused, a timeout, LOADING: rankd starts, dials again and says so in
 * its log); -EACCES with one line in msg[0..len) when Redis refuses any of them (NOPERM), refuses
 * AUTH (WRONGPASS, or an error for a password it does not have), asks for a password the URL does
 * not give (NOAUTH), or refuses SELECT of the URL's database.
 */
int store_preflight_scripts(const struct redis_url *u, const char *what, int read_replicas,
                            int connect_timeout_ms, int timeout_ms, char *msg, size_t len);

/** 0 when the Redis of `u` answers PING now (after AUTH with the URL's user and password);
 *  -EAGAIN when it cannot be reached or refuses. For sd_notify's READY (main.c). */
int store_preflight_ping(const struct redis_url *u, int connect_timeout_ms, int timeout_ms);

#endif
