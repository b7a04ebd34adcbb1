/* errors.c -- the error table made from errors.def; see errors.h. */
#include "errors.h"

#include <stdio.h>
#include <string.h>

static const struct err_info table[ERR_COUNT] = {
    [ERR_NONE] = {"NONE", 0, "", ""},
#define ERR(id, st, c, m) [ERR_##id] = {#id, (st), (c), (m)},
#include "errors.def"
#undef ERR
};

const struct err_info *err_info(enum err_id id)
{
    return id > ERR_NONE && id < ERR_COUNT ? &table[id] : NULL;
}

int err_status(enum err_id id)
{
    const struct err_info *e = err_info(id);
    return e ? e->status : 500;
}

const char *err_code(enum err_id id)
{
    const struct err_info *e = err_info(id);
    return e ? e->code : table[ERR_INTERNAL].code;
}

const char *err_message(enum err_id id)
{
    const struct err_info *e = err_info(id);
    return e ? e->message : "";
}

enum err_id err_find(const char *code, int status)
{
    for (int i = ERR_NONE + 1; i < ERR_COUNT; i++)
        if (strcmp(table[i].code, code) == 0 && (!status || table[i].status == status))
            return (enum err_id)i;
    return ERR_NONE;
}

int err_json(enum err_id id, const char *message, char *out, size_t cap)
{
    return snprintf(out, cap, "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}", err_code(id),
                    message);
}
