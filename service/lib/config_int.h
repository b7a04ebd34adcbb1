/*
 * config_int.h -- the configuration's private parts, for service/lib/config*.c only: the value
 * parsers config_values.c lends the option table and its reader in config.c. The design is in
 * config.h.
 */
#ifndef RANKD_CONFIG_INT_H
#define RANKD_CONFIG_INT_H

#include "config.h"

/* Options whose value is not an integer, a number or one of a few words: each parses its own
 * text into cfg, returning 0 or -EINVAL; *why may be pointed at a better message than the help. */
int config_set_listen(struct config *cfg, const char *v, const char **why);
int config_set_redis(struct config *cfg, const char *v, const char **why);
int config_set_cache_redis(struct config *cfg, const char *v, const char **why);
int config_set_token(struct config *cfg, const char *v, const char **why);
int config_set_token_file(struct config *cfg, const char *v, const char **why);
int config_set_prefix(struct config *cfg, const char *v, const char **why);
int config_set_default_board(struct config *cfg, const char *v, const char **why);
int config_set_cors(struct config *cfg, const char *v, const char **why);
int config_set_static_dir(struct config *cfg, const char *v, const char **why);
int config_set_embed_frame_ancestors(struct config *cfg, const char *v, const char **why);
int config_set_admin_listen(struct config *cfg, const char *v, const char **why);
int config_set_trusted_proxies(struct config *cfg, const char *v, const char **why);
int config_set_redis_password_file(struct config *cfg, const char *v, const char **why);

/* s as a decimal integer (or number) within lo..hi into *out: 0, or -EINVAL. */
int config_parse_int(const char *s, int lo, int hi, int *out);
int config_parse_double(const char *s, double lo, double hi, double *out);

#endif
