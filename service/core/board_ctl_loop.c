/*
 * board_ctl_loop.c -- control operations on an event loop: struct ctl_state and the chains of calls
 * (board_ctl_submit) that board_ctl.c prepares and takes.
 * The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include "board_int.h"

/* ---------------------------------------------------------------- control operations on a loop */

/*
 * board_ctl_submit: each operation as a chain of steps, one short command or script each, sent
 * on the loop's connections without waiting; each step's reply starts the next. The calls are
 * the blocking functions' own (the _prepare and _take helpers above).
 */

/* The operation's prepared calls and buffers; freed when the job ends. */
struct ctl_state {
    union {
        struct board_put_call put;
        struct board_delete_call del;
        struct board_reset_call reset;
        struct board_trim_call trim;
        struct board_member_delete_call mdel;
    } u;
    char (*keys)[KEY_MAX];    /* list's sets */
    int n;                    /* how many of them */
    struct board_keys k;      /* list: the registry; records: the records hash */
    size_t cap;               /* list: names allocated */
    struct batch_item *items; /* a batch's sends: each reply knows its index (a cluster's nodes
                               * answer in no order among themselves) */
    char *ghost;              /* list on a cluster: 1 for a name with no board (see registry) */
    char rkey[KEY_MAX];       /* records: the hash of the id */
    int registered;           /* put: the registry has the board (a cluster) */
    int end_rc;               /* delete: the outcome, while the registry is updated after */
    void (*registry_next)(struct board_ctl_job *j, int rc);
};

/* One send of a batch: its job and its index. */
struct batch_item {
    struct board_ctl_job *j;
    int i;
};

static void ctl_end(struct board_ctl_job *j, int rc)
{
    struct ctl_state *s = j->state;
    if (s && j->op == BOARD_CTL_PUT)
        board_put_call_free(&s->u.put);
    if (s && j->op == BOARD_CTL_DELETE)
        board_delete_call_free(&s->u.del);
    if (s) {
        free(s->keys);
        free(s->items);
        free(s->ghost);
        free(s);
    }
    j->state = NULL;
    if (rc == 0 && j->unconfirmed)
        rc = -EREMOTEIO; /* written, not confirmed on --write-replicas replicas: never a 2xx */
    if (rc && j->list) {
        board_list_free(j->list);
        j->list = NULL;
    }
    j->done(j, rc == -ECANCELED ? -EIO : rc); /* may free j */
}

/* The start of every reply: 1 to go on with the replies; 0 when the job ended here (a fault, an
 * error reply) or a read cut by a lost connection was sent once more (j->again). A write step
 * written and not answered may have run: -ETIME. */
static int ctl_ok(struct board_ctl_job *j, int rc, struct store_reply **replies, int n, int write)
{
    if (rc == 0) {
        for (int i = 0; i < n; i++)
            if (replies[i]->type == STORE_REPLY_ERROR) {
                store_note_fault(write ? board_writes_of(j->m) : j->m->store, "control",
                                 replies[i]->str);
                ctl_end(j, store_reply_errno(replies[i])); /* the command did not run */
                return 0;
            }
        if (write && store_async_unreplicated(j->writes, replies, n))
            j->unconfirmed = 1; /* every write step waits (ctl_send_arg, ctl_script) */
        return 1;
    }
    if (!write && (rc == -ECONNRESET || rc == -EIO) && j->again && !j->resent &&
        (!j->deadline_ms || util_now_ms() < j->deadline_ms)) {
        j->resent = 1; /* a read: once more, on the connection dialled again */
        rc = j->again(j);
        if (rc == 0)
            return 0;
    } else if (write && (rc == -ETIMEDOUT || rc == -ECONNRESET)) {
        rc = -ETIME;
    } else if (!write && rc == -ECONNRESET) {
        rc = -EIO;
    }
    ctl_end(j, rc);
    return 0;
}

/* Send one group for a step, with `arg` for fn (NULL: the job); 0 or a negative errno (nothing
 * sent). */
static int ctl_send_arg(struct board_ctl_job *j, int write, int n, const int *argc,
                        const char *const *const *argv, const size_t *const *lens, int64_t deadline,
                        store_async_fn fn, void *arg)
{
    int64_t d = deadline ? deadline : j->deadline_ms;
    /* a write step a client is told of waits for --write-replicas (store_async.h) */
    int rc = write
                 ? store_async_send_replicated(j->writes, n, argc, argv, lens, d, fn, arg ? arg : j)
                 : store_async_send(j->reads, n, argc, argv, lens, d, fn, arg ? arg : j);
    return rc < 0 ? rc : 0;
}

static int ctl_send(struct board_ctl_job *j, int write, int n, const int *argc,
                    const char *const *const *argv, const size_t *const *lens, int64_t deadline,
                    store_async_fn fn)
{
    return ctl_send_arg(j, write, n, argc, argv, lens, deadline, fn, NULL);
}

/* A batch's items for n sends (replacing the last batch's); 0 or -ENOMEM. */
static int batch_items(struct board_ctl_job *j, int n)
{
    struct ctl_state *s = j->state;
    free(s->items);
    s->items = calloc(n > 0 ? (size_t)n : 1, sizeof(*s->items));
    if (!s->items)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        s->items[i] = (struct batch_item){.j = j, .i = i};
    return 0;
}

static int ctl_script(struct board_ctl_job *j, const struct store_script *sc, int nkeys, int nargs,
                      const char *const *argv, const size_t *lens, int64_t deadline,
                      store_async_fn fn)
{
    int rc = store_async_script(j->writes, sc, nkeys, nargs, argv, lens,
                                deadline ? deadline : j->deadline_ms, fn, j);
    return rc < 0 ? rc : 0;
}

/* A step's send failed: nothing was sent, so its code stands (-ECONNREFUSED, -ETIMEDOUT...). */
static void ctl_step(struct board_ctl_job *j, int rc)
{
    if (rc)
        ctl_end(j, rc);
}

/* ---- the registry on a cluster: its own slot, so its SADD and SREM are calls of their own,
 * around the board's script (before a creation, after a deletion: the registry is never short
 * of a board; a name with no board is what a failure between them leaves, and GET /boards leaves
 * it out) */

static void ctl_registry_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    struct ctl_state *s = j->state;
    if (!rc && replies[0]->type == STORE_REPLY_ERROR) {
        store_note_fault(board_writes_of(j->m), "registry", replies[0]->str);
        rc = store_reply_errno(replies[0]);
    }
    if (!rc && store_async_unreplicated(j->writes, replies, 1))
        j->unconfirmed = 1;
    s->registry_next(j, rc);
}

/* `verb` (SADD, SREM) of the board in the registry, then next(j, rc). 0 or a negative errno
 * (nothing sent). */
static int ctl_registry(struct board_ctl_job *j, const char *verb,
                        void (*next)(struct board_ctl_job *j, int rc))
{
    struct ctl_state *s = j->state;
    struct board_keys k;
    board_make_keys(j->m, j->board, &k);
    s->registry_next = next;
    const char *argv[] = {verb, k.registry, j->board};
    const char *const *av[] = {argv};
    const int argc[] = {3};
    return ctl_send(j, 1, 1, argc, av, NULL, 0, ctl_registry_reply);
}

/* After the SREM of a deletion: the deletion's own outcome (a failed SREM leaves a name with no
 * board: counted, logged, left out of the list). */
static void delete_unregistered(struct board_ctl_job *j, int rc)
{
    struct ctl_state *s = j->state;
    if (rc && rc != -ECANCELED)
        store_note_fault(board_writes_of(j->m), "registry", "a deleted board's name stays listed");
    ctl_end(j, s->end_rc);
}

/* A deletion (or a DELETE of a name with no board) ends with rc: on a cluster after the SREM. */
static void delete_end(struct board_ctl_job *j, int rc)
{
    struct ctl_state *s = j->state;
    s->end_rc = rc;
    if (board_clustered(j->m))
        board_registered_memo(j->m, j->board, 0);
    if ((rc == 0 || rc == -ENOENT) && board_clustered(j->m) &&
        ctl_registry(j, "SREM", delete_unregistered) == 0)
        return;
    ctl_end(j, rc);
}

/* ---- the settings read most operations start with */

static void ctl_settings_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (!ctl_ok(j, rc, replies, 1, 0))
        return;
    if (replies[0]->type != STORE_REPLY_ARRAY) {
        ctl_end(j, -EIO);
        return;
    }
    board_settings_from_reply(replies[0], &j->cur);
    j->exists = replies[0]->elements > 0;
    board_view_put(j->m, j->board, &j->cur, j->exists);
    j->again = NULL;
    j->resent = 0;
    if (j->op != BOARD_CTL_PUT && !j->exists) {
        if (j->op == BOARD_CTL_DELETE)
            delete_end(j, -ENOENT); /* a cluster: a name the registry kept goes */
        else
            ctl_end(j, -ENOENT);
        return;
    }
    rc = board_where_resolve(j->m, j->board, j->cur.period, &j->cur.tz, j->cur.retain, NULL, &j->w);
    if (rc)
        ctl_end(j, rc);
    else
        j->then(j);
}

static int ctl_settings_send(struct board_ctl_job *j)
{
    struct board_keys k;
    board_make_keys(j->m, j->board, &k);
    const char *argv[] = {"HGETALL", k.meta};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    return ctl_send(j, 0, 1, argc, av, NULL, 0, ctl_settings_reply);
}

/* Read the settings (HGETALL, remembered as the board's view), then then(j) with j->cur,
 * j->exists and j->w (where the current members are); -ENOENT ends the job before then(j)
 * unless it is a PUT. */
static int ctl_with_settings(struct board_ctl_job *j, void (*then)(struct board_ctl_job *j))
{
    j->then = then;
    j->again = ctl_settings_send;
    return ctl_settings_send(j);
}

/* ---- GET /boards/{board}: settings, then ZCARD */

static void info_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (!ctl_ok(j, rc, replies, 1, 0))
        return;
    j->info.settings = j->cur;
    board_info_take(replies[0], &j->w, &j->info);
    ctl_end(j, 0);
}

static int info_send(struct board_ctl_job *j)
{
    const char *argv[] = {"ZCARD", j->w.z};
    const char *const *av[] = {argv};
    const int argc[] = {2};
    return ctl_send(j, 0, 1, argc, av, NULL, 0, info_reply);
}

static void info_then(struct board_ctl_job *j)
{
    j->again = info_send;
    ctl_step(j, info_send(j));
}

/* ---- a batch of one-key commands, pipelined (a PUT's follow-ups, the list's totals): each
 * reply is taken with its index (on a cluster they come from several nodes), then `after` runs
 * once every one is in */

static void batch_next(struct board_ctl_job *j);

static void batch_reply(void *arg, int rc, struct store_reply **replies)
{
    struct batch_item *it = arg;
    struct board_ctl_job *j = it->j;
    j->batch_at = it->i;
    if (!j->failed) {
        if (rc)
            j->failed = j->batch_write && (rc == -ETIMEDOUT || rc == -ECONNRESET) ? -ETIME
                        : rc == -ECONNRESET                                       ? -EIO
                                                                                  : rc;
        else if (replies[0]->type == STORE_REPLY_ERROR)
            j->failed = store_reply_errno(replies[0]);
        else if (j->batch_take)
            j->batch_take(j, j->batch_at, replies[0]);
    }
    if (--j->outstanding > 0)
        return;
    if (j->failed)
        ctl_end(j, j->failed);
    else
        batch_next(j);
}

/* Send verb keys[i] [args[i]] for i in 0..n, on the writes (write) or reads connection. Ends
 * the job on a failed send once the replies already due are in. */
static void batch_send(struct board_ctl_job *j, const char *verb, char (*keys)[KEY_MAX],
                       char (*args)[32], int n, int write,
                       void (*take)(struct board_ctl_job *j, int i, const struct store_reply *r),
                       void (*after)(struct board_ctl_job *j))
{
    j->batch_write = write;
    j->batch_take = take;
    j->batch_after = after;
    j->batch_at = 0;
    j->failed = batch_items(j, n);
    j->outstanding = 0;
    for (int i = 0; !j->failed && i < n; i++) {
        const char *argv[] = {verb, keys[i], args ? args[i] : NULL};
        const char *const *av[] = {argv};
        const int argc[] = {args ? 3 : 2};
        int rc = ctl_send_arg(j, write, 1, argc, av, NULL, 0, batch_reply,
                              &((struct ctl_state *)j->state)->items[i]);
        if (rc) {
            j->failed = rc;
            break;
        }
        j->outstanding++;
    }
    if (j->outstanding == 0) { /* nothing in flight: go on (or end) now */
        if (j->failed)
            ctl_end(j, j->failed);
        else
            batch_next(j);
    }
}

static void batch_next(struct board_ctl_job *j)
{
    void (*after)(struct board_ctl_job *) = j->batch_after;
    j->batch_after = NULL;
    after(j);
}

/* ---- PUT /boards/{board}: settings, then create_board.lua or put_board.lua (again, from the
 * settings, when the board changed under it) */

static void put_then(struct board_ctl_job *j);

static void put_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    struct ctl_state *s = j->state;
    int create = s->u.put.create;
    if (create && rc == 0) /* how Redis answered a write that grows memory (/readyz, /metrics) */
        store_note_write(store_reply_errno(replies[0]));
    if (!ctl_ok(j, rc, replies, 1, 1))
        return;
    board_put_call_free(&s->u.put);
    rc = board_put_take(j->m, j->board, create, replies[0], &j->field, &j->info);
    if (rc == PUT_AGAIN) {
        if (++j->attempts >= WRITE_RETRIES) {
            ctl_end(j, -EAGAIN); /* the board keeps changing under us */
            return;
        }
        j->resent = 0;
        ctl_step(j, ctl_with_settings(j, put_then));
        return;
    }
    if (rc == 0)
        j->created = create;
    ctl_end(j, rc);
}

static int put_send(struct board_ctl_job *j)
{
    struct board_put_call *c = &((struct ctl_state *)j->state)->u.put;
    return ctl_script(j, board_script(c->create ? SCRIPT_CREATE_BOARD : SCRIPT_PUT_BOARD), c->nkeys,
                      c->nargs, c->argv, NULL, 0, put_reply);
}

/* A cluster's creation, after the registry's SADD: the board itself. */
static void put_registered(struct board_ctl_job *j, int rc)
{
    if (rc) { /* nothing of the board was written */
        ctl_end(j, rc == -ETIMEDOUT || rc == -ECONNRESET ? -EIO : rc);
        return;
    }
    board_registered_memo(j->m, j->board, 1);
    ctl_step(j, put_send(j));
}

static void put_then(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    struct board_put_call *c = &s->u.put;
    board_put_call_free(c);
    memset(c, 0, sizeof(*c));
    int rc = j->exists ? board_put_update_prepare(j->m, j->board, &j->cur, j->patch, c)
                       : board_put_create_prepare(j->m, j->board, j->patch, c);
    if (!rc && c->create && board_clustered(j->m) && !s->registered) {
        s->registered = 1; /* the registry first (see the registry above) */
        rc = ctl_registry(j, "SADD", put_registered);
    } else if (!rc) {
        rc = put_send(j);
    }
    ctl_step(j, rc);
}

/* ---- DELETE /boards/{board}, POST reset: settings, then one script */

static void delete_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (ctl_ok(j, rc, replies, 1, 1))
        delete_end(j, board_delete_take(j->m, j->board, replies[0]));
}

static void delete_then(struct board_ctl_job *j)
{
    struct board_delete_call *c = &((struct ctl_state *)j->state)->u.del;
    int rc = board_delete_prepare(j->m, j->board, &j->cur, c);
    if (!rc)
        rc = ctl_script(j, board_script(SCRIPT_DELETE_BOARD), c->nkeys, 1, c->argv, NULL, 0,
                        delete_reply);
    ctl_step(j, rc);
}

static void reset_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (ctl_ok(j, rc, replies, 1, 1))
        ctl_end(j, board_one_or_enoent(replies[0]));
}

static void reset_then(struct board_ctl_job *j)
{
    struct board_reset_call *c = &((struct ctl_state *)j->state)->u.reset;
    board_reset_prepare(j->m, j->board, &j->w, c);
    ctl_step(j,
             ctl_script(j, board_script(SCRIPT_RESET_BOARD), 5, 1, c->argv, NULL, 0, reset_reply));
}

/* ---- DELETE /boards/{board}/members?keep|below: settings, then trim.lua chunks */

static int trim_send(struct board_ctl_job *j);

static void trim_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (!ctl_ok(j, rc, replies, 1, 1))
        return;
    long long n = board_trim_take(replies[0]);
    j->removed += n;
    if (n < TRIM_CHUNK)
        ctl_end(j, 0);
    else
        ctl_step(j, trim_send(j)); /* the next chunk: other clients ran in between */
}

static int trim_send(struct board_ctl_job *j)
{
    struct board_trim_call *c = &((struct ctl_state *)j->state)->u.trim;
    /* each chunk has the request's time from its send: a trim's work grows with what it
     * removes, like an upload's (each chunk stays short in Redis) */
    int64_t deadline = j->chunk_timeout_ms ? util_now_ms() + j->chunk_timeout_ms : 0;
    return ctl_script(j, board_script(SCRIPT_TRIM), 5, 3, c->argv, NULL, deadline, trim_reply);
}

static void trim_then(struct board_ctl_job *j)
{
    board_trim_prepare(j->m, j->board, &j->cur, &j->w, j->keep, j->below_key,
                       &((struct ctl_state *)j->state)->u.trim);
    j->removed = 0;
    ctl_step(j, trim_send(j));
}

/* ---- DELETE /boards/{board}/members/{id}: settings, then delete_member.lua */

static void member_delete_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    if (ctl_ok(j, rc, replies, 1, 1))
        ctl_end(j, board_member_delete_take(replies[0]));
}

static void member_delete_then(struct board_ctl_job *j)
{
    struct board_member_delete_call *c = &((struct ctl_state *)j->state)->u.mdel;
    board_member_delete_prepare(j->m, j->board, &j->w, j->id, j->id_len, c);
    ctl_step(j, ctl_script(j, board_script(SCRIPT_DELETE_MEMBER), 5, 1, c->argv, c->lens, 0,
                           member_delete_reply));
}

/* ---- GET /boards: SSCAN steps, then HMGET and ZCARD batches */

static int list_send(struct board_ctl_job *j);

static void list_count(struct board_ctl_job *j, int i, const struct store_reply *r)
{
    j->list->totals[i] = r->type == STORE_REPLY_INTEGER ? r->integer : 0;
}

/* The list is complete; on a cluster, the names with no board are left out: what a failure
 * between the registry's SADD and the board's creation (or the board's deletion and the
 * registry's SREM) leaves, which a DELETE of the name removes. */
static void list_done(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    struct board_list *l = j->list;
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (s->ghost && s->ghost[i]) {
            free(l->names[i]);
            continue;
        }
        l->names[kept] = l->names[i];
        l->totals[kept++] = l->totals[i];
    }
    l->n = kept;
    ctl_end(j, 0);
}

static void list_placed(struct board_ctl_job *j, int i, const struct store_reply *r)
{
    struct ctl_state *s = j->state;
    board_list_where(j->m, j->list->names[i], r, s->keys[i]);
    if (s->ghost && r->type == STORE_REPLY_ARRAY && r->elements == 4 && !r->element[3]->str)
        s->ghost[i] = 1;
}

static void list_totals_async(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    batch_send(j, "ZCARD", s->keys, NULL, s->n, 0, list_count, list_done);
}

static void list_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    struct ctl_state *s = j->state;
    if (!ctl_ok(j, rc, replies, 1, 0))
        return;
    uint64_t cursor = 0;
    rc = board_list_take(j->list, &s->cap, replies[0], &cursor);
    j->cursor = cursor;
    j->resent = 0;
    if (!rc && cursor != 0 && j->list->n < (size_t)j->count) {
        ctl_step(j, list_send(j));
        return;
    }
    struct board_list *l = j->list;
    if (!rc) {
        board_list_sort_unique(l);
        l->next_cursor = cursor;
        l->totals = calloc(l->n ? l->n : 1, sizeof(*l->totals));
        s->keys = calloc(l->n ? l->n : 1, sizeof(*s->keys));
        rc = l->totals && s->keys ? 0 : -ENOMEM;
    }
    if (rc) {
        ctl_end(j, rc);
        return;
    }
    /* first each board's period settings, then the size of its current set */
    s->n = (int)l->n;
    for (int i = 0; i < s->n; i++) {
        struct board_keys k;
        board_make_keys(j->m, l->names[i], &k);
        util_copy(s->keys[i], KEY_MAX, k.meta);
    }
    j->again = NULL;
    /* HMGET meta period timezone retain, as one batch: the keys are the settings hashes */
    j->batch_write = 0;
    j->batch_take = list_placed;
    j->batch_after = list_totals_async;
    j->batch_at = 0;
    j->failed = batch_items(j, s->n);
    j->outstanding = 0;
    if (!j->failed && board_clustered(j->m) && !(s->ghost = calloc(l->n ? l->n : 1, 1)))
        j->failed = -ENOMEM;
    for (int i = 0; !j->failed && i < s->n; i++) {
        /* order: set on every board (no board: a name the registry kept, see registry) */
        const char *hm[] = {"HMGET", s->keys[i], "period", "timezone", "retain", "order"};
        const char *const *av[] = {hm};
        const int argc[] = {6};
        rc = ctl_send_arg(j, 0, 1, argc, av, NULL, 0, batch_reply, &s->items[i]);
        if (rc) {
            j->failed = rc;
            break;
        }
        j->outstanding++;
    }
    if (j->outstanding == 0) {
        if (j->failed)
            ctl_end(j, j->failed);
        else
            batch_next(j);
    }
}

static int list_send(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    char cur[24], cnt[16];
    const char *argv[5];
    board_list_sscan(&s->k, j->cursor, j->count - (int)j->list->n, cur, cnt, argv);
    const char *const *av[] = {argv};
    const int argc[] = {5};
    return ctl_send(j, 0, 1, argc, av, NULL, 0, list_reply);
}

/* ---- records: one command */

static void record_reply(void *arg, int rc, struct store_reply **replies)
{
    struct board_ctl_job *j = arg;
    int write = j->op != BOARD_CTL_RECORD_GET;
    if (!ctl_ok(j, rc, replies, 1, write))
        return;
    const struct store_reply *r = replies[0];
    if (j->op == BOARD_CTL_RECORD_GET)
        rc = board_record_take(r, &j->record);
    else if (j->op == BOARD_CTL_RECORD_DELETE)
        rc = r->type == STORE_REPLY_INTEGER && r->integer > 0 ? 0 : -ENODATA;
    ctl_end(j, rc);
}

static int record_send(struct board_ctl_job *j)
{
    struct ctl_state *s = j->state;
    static const char *const verbs[] = {[BOARD_CTL_RECORD_GET] = "HGET",
                                        [BOARD_CTL_RECORD_PUT] = "HSET",
                                        [BOARD_CTL_RECORD_DELETE] = "HDEL"};
    const char *argv[] = {verbs[j->op], s->rkey, j->id, j->json};
    const size_t len[] = {4, strlen(s->rkey), j->id_len, j->json_len};
    const char *const *av[] = {argv};
    const size_t *const lv[] = {len};
    const int argc[] = {j->op == BOARD_CTL_RECORD_PUT ? 4 : 3};
    return ctl_send(j, j->op != BOARD_CTL_RECORD_GET, 1, argc, av, lv, 0, record_reply);
}

int board_ctl_submit(struct board_model *m, struct store_async *reads, struct store_async *writes,
                     enum board_ctl op, struct board_ctl_job *j)
{
    if (!reads || !writes)
        return -ECONNREFUSED;
    struct ctl_state *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    j->m = m;
    j->reads = reads;
    j->writes = writes;
    j->op = op;
    j->state = s;
    j->resent = 0;
    j->again = NULL;
    j->list = NULL;
    j->record = NULL;
    j->removed = 0;
    j->created = 0;
    j->attempts = 0;
    j->unconfirmed = 0;
    j->field = NULL;
    int rc = 0;
    switch (op) {
    case BOARD_CTL_INFO:
        rc = ctl_with_settings(j, info_then);
        break;
    case BOARD_CTL_PUT:
        rc = ctl_with_settings(j, put_then);
        break;
    case BOARD_CTL_DELETE:
        rc = ctl_with_settings(j, delete_then);
        break;
    case BOARD_CTL_RESET:
        rc = ctl_with_settings(j, reset_then);
        break;
    case BOARD_CTL_TRIM:
        rc = ctl_with_settings(j, trim_then);
        break;
    case BOARD_CTL_MEMBER_DELETE:
        rc = ctl_with_settings(j, member_delete_then);
        break;
    case BOARD_CTL_LIST:
        board_make_keys(m, NULL, &s->k);
        j->list = calloc(1, sizeof(*j->list));
        j->again = list_send;
        rc = j->list ? list_send(j) : -ENOMEM;
        break;
    case BOARD_CTL_RECORD_GET:
    case BOARD_CTL_RECORD_PUT:
    case BOARD_CTL_RECORD_DELETE:
        records_key(m->prefix, board_clustered(m), j->id, j->id_len, s->rkey, sizeof(s->rkey));
        j->again = op == BOARD_CTL_RECORD_GET ? record_send : NULL;
        rc = record_send(j);
        break;
    }
    if (rc) { /* nothing sent: the job is the caller's again, done is not called */
        board_list_free(j->list);
        j->list = NULL;
        free(s);
        j->state = NULL;
    }
    return rc;
}
