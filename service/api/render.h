/*
 * render.h -- JSON bodies of the API (schema/openapi.yaml), built with cJSON.
 *
 * Every function returns a new NUL-terminated JSON string owned by the caller (free() it, or
 * hand it to http_reply_json), or NULL when out of memory. Records are stored as validated JSON
 * and inserted verbatim (cJSON raw), never re-parsed. Scores are doubles holding exact values
 * (score_codec.h), printed by render_number_text (up to 17 significant digits, integers as plain
 * digits), so they read back exactly.
 */
#ifndef RANKD_RENDER_H
#define RANKD_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "board.h"

/** {"board","page","size","total","pages","next","prev","items":[{"rank","id","score","record"}]}:
 *  next and prev the cursors (cursor.h) of the last and first items (p->period and the
 *  generation in p->settings), null at the board's ends (or the score range's: p->first,
 *  p->end). */
char *render_page(const char *board, int64_t page, const struct board_page *p);

/** A page body with its `with` members (GET .../rank?with=): page_body (len bytes, a JSON
 *  object as render_page makes it) with ,"with":[{"rank","id","score","page","record"}...] (in
 *  rank order; page: the page holding the member at `size`) and ,"missing":[id...] (in the
 *  order asked) before its closing brace. render_page adds the same when p->with is set. A new
 *  string, or NULL on ENOMEM. */
char *render_page_with(const char *page_body, size_t len, const struct board_lookup *l, int size);

/** The same for a walk (walk.lua: a score range and/or a cursor); "total" is the members in the
 *  range when one was asked (p->ranged); "page" is `page`, or with 0 the page (at p->size) of
 *  the first item's place in the range. */
char *render_walk(const char *board, int64_t page, const struct board_page *p);

/** The same shape for entries around a member or a score; "page" is the page of the first
 *  entry's position. */
char *render_around(const char *board, const struct board_page *p);

/** The same shape for top.lua's members, with "count" (the uncapped number) after "pages";
 *  "page" is 1 and "size" the entries sent. */
char *render_top(const char *board, const struct board_page *p);

/** {"id","score","rank","page","percentile","record"}: rank of the type read, page (at `size`)
 *  and percentile (rank_percentile_cents, two decimals) of the member's position. */
char *render_member(const char *id, const struct board_member *mb, int size);

/** {"board","items":[{"rank","id","score","record"}...],"missing":[id...]}: items in rank
 *  order, missing in the order asked. */
char *render_lookup(const char *board, const struct board_lookup *l);

/** {"p","rank","id","score"}: p the percentile asked (the text of a JSON number); rank, id and
 *  score null on an empty board. */
char *render_percentile(const char *p, const struct board_percentile *pc);

/** {"id","boards":[{"board","rank","score","percentile"}...]} for boards[0..n) and what each said
 *  (on[0..n)): rank, score and percentile null where the board or the member is absent;
 *  "subscores" after "score" where a board with sub-scores holds the member. */
char *render_member_boards(const char *id, const char *const *boards,
                           const struct board_on_board *on, size_t n);

/** {"board", settings..., "total", "score_range":{"min","max"}} and, for a periodic board,
 *  "current_period" and "periods" (the readable ones, newest first: periods[0..nperiods)). */
char *render_board(const char *board, const struct board_info *info,
                   const char (*periods)[PERIOD_ID_MAX], int nperiods);

/** {"boards":[{"board","total"}]} */
char *render_board_list(const struct board_list *l);

/** {"id","score","rank","updated","prev_score","prev_rank","version"}: rank null when the member
 *  is not on the board after the write (max_members), prev_* null when it was not on it before.
 *  On a board with sub-scores (o->nsub > 0) "subscores" after "score" and "prev_subscores" after
 *  "prev_score": the tuple stored after the write and before it (here and below). */
char *render_write(const char *id, const struct board_outcome *o, int64_t version);

/** {"applied":n,"rejected":[],"results":[{"score","rank","updated"}...],"version"}: o[0..n) in
 *  entry order ("subscores" after "score" on a board with them). */
char *render_batch(const struct board_outcome *o, size_t n, int64_t version);

/** {"id","boards":[{"board","score","rank","updated","prev_score","prev_rank","version"}...]}:
 *  board i's outcome o[i] and version versions[i], for i in 0..n. */
char *render_boards_write(const char *id, const char *const *boards,
                          const struct board_outcome *const *o, const int64_t *versions, size_t n);

/** NDJSON lines {"rank","id","score","record"} of items[0..n), one a line ('\n' after each),
 *  with "subscores" on a sub-score board and "updated_at" (null for -1) when `updated_at`: a
 *  new string of *len bytes (free()), or NULL on ENOMEM. */
char *render_export_rows(const struct board_item *items, size_t n, int updated_at, size_t *len);

/** The shortest decimal text that reads back as exactly `d` (at most 17 significant digits);
 *  an integer within 2^53 in magnitude is its plain digits (1000000000000000, never 1e+15). */
void render_number_text(double d, char *out, size_t len);

/** A cJSON node printing `d` exactly (render_number_text), or null when not finite. NULL on ENOMEM.
 *  Free it with its tree. */
cJSON *render_number(double d);

/** Number of pages holding `total` entries at `size` per page (0 for an empty board). */
int64_t render_pages(int64_t total, int size);

#endif
