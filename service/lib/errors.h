/*
 * errors.h -- rankd's error ids: one per error a client can be sent, made from errors.def, with
 * the HTTP status, the code and the default message of each.
 *
 * Everything that refuses a request names the error by its id (ERR_BOARD_NOT_FOUND): the
 * validators (validate.c, upload.c) fill an id and a message, never a status; the handlers and
 * the HTTP exchange reply with an id (http_reply_error); the access log states the id's code.
 * The status and the code a client sees come from this table alone, and scripts/check-errors.sh
 * holds it against schema/openapi.yaml and docs/api.md. Pure and constant: safe from any thread.
 */
#ifndef RANKD_ERRORS_H
#define RANKD_ERRORS_H

#include <stddef.h>

enum err_id {
    ERR_NONE = 0, /**< no error (a reply that is not one) */
#define ERR(id, status, code, message) ERR_##id,
#include "errors.def"
#undef ERR
    ERR_COUNT /**< one past the last id */
};

struct err_info {
    const char *name;    /**< the id's name without ERR_ ("BOARD_NOT_FOUND") */
    int status;          /**< the HTTP status, 400..599 */
    const char *code;    /**< the snake_case code the reply carries */
    const char *message; /**< the default message (a template: errors.def) */
};

/** The row of `id`; NULL for ERR_NONE and anything outside 1..ERR_COUNT-1. */
const struct err_info *err_info(enum err_id id);

/** The status of `id`; 500 for an id outside the table. */
int err_status(enum err_id id);

/** The code of `id` (static); "internal" for an id outside the table. */
const char *err_code(enum err_id id);

/** The default message of `id` (static); "" for an id outside the table. */
const char *err_message(enum err_id id);

/** The id whose code is `code` and status is `status` (a status 0: the first with the code);
 *  ERR_NONE when there is none. O(ERR_COUNT): for tests and start-up, not for requests. */
enum err_id err_find(const char *code, int status);

/**
 * The JSON error body {"error":{"code":"<code of id>","message":"<message>"}} into out[0..cap)
 * for replies written without cJSON (a refusal at accept, a late header's 408): `message` must
 * need no JSON escaping (no '"', '\\' nor control characters). Returns snprintf's count: the
 * length it needed (the body is cut when that is >= cap).
 */
int err_json(enum err_id id, const char *message, char *out, size_t cap);

#endif
