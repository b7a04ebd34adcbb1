/*
 * names.h -- the names clients give rankd: a board's name and an entry's id, their syntax and
 * their limits.
 *
 * A leaf, so that every layer judges a name the same way: the configuration (--default-board),
 * the query decoder (request.h's request_id_valid), the handlers and the board model (board.h
 * includes this header). The limits keep the BOARD_ spelling of the model they bound; the Lua
 * scripts get them too, as locals of the generated defaults prelude (scripts/lua-defaults.awk
 * reads this file before board.h).
 */
#ifndef RANKD_NAMES_H
#define RANKD_NAMES_H

#include <stddef.h>

#define BOARD_NAME_LEN_MAX 64 /**< bytes, [A-Za-z0-9._-] */
#define BOARD_ID_LEN_MAX 128  /**< bytes of UTF-8 */

/** 1 when `name` is a valid board name ([A-Za-z0-9._-], 1..64 bytes), else 0. Pure. */
int board_name_valid(const char *name, size_t len);

#endif
