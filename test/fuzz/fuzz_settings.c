/*
 * fuzz_settings.c -- a PUT /boards/{board} body through parse_body's steps and
 * validate_settings.
 *
 * Properties: accepted settings are inside their documented ranges, each has_ flag is set
 * exactly when its field was sent, and a field not sent keeps the default; a refusal is a 400
 * with a code and a message.
 */
#include <string.h>

#include "board.h"
#include "fuzz.h"
#include "json_doc.h"
#include "period.h"
#include "tzif.h"
#include "validate.h"

static int sent(const cJSON *doc, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(doc, name) != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    cJSON *doc = fuzz_json_doc(data, size);
    if (!doc)
        return 0;
    /* board_settings_default's values (board.c is not a pure module) */
    struct board_settings def = {
        .layout = {SCORE_ORDER_DESC, SCORE_TIEBREAK_FIRST, 0, 0, 0, {0}},
        .period = PERIOD_NONE,
        .retain = 1,
        .page_size = BOARD_PAGE_SIZE_DEFAULT,
        .page_ttl_ms = BOARD_PAGE_TTL_MS_DEFAULT,
    };
    struct board_settings_patch p;
    struct entry_error err = {0};
    if (validate_settings(doc, &def, &p, &err) == 0) {
        const struct board_settings *v = &p.value;
        FUZZ_CHECK(p.has_order == sent(doc, "order") && p.has_tiebreak == sent(doc, "tiebreak") &&
                       p.has_decimals == sent(doc, "score_decimals") &&
                       p.has_page_size == sent(doc, "page_size") &&
                       p.has_page_ttl == sent(doc, "page_ttl_ms") &&
                       p.has_period == sent(doc, "period") && p.has_tz == sent(doc, "timezone") &&
                       p.has_retain == sent(doc, "retain"),
                   "has_ flags");
        FUZZ_CHECK(v->layout.order == SCORE_ORDER_DESC || v->layout.order == SCORE_ORDER_ASC,
                   "order");
        FUZZ_CHECK(v->layout.tiebreak >= SCORE_TIEBREAK_FIRST &&
                       v->layout.tiebreak <= SCORE_TIEBREAK_ID,
                   "tiebreak");
        FUZZ_CHECK(v->layout.decimals >= 0 && v->layout.decimals <= SCORE_DECIMALS_MAX,
                   "decimals %d", v->layout.decimals);
        FUZZ_CHECK(v->page_size >= 1 && v->page_size <= BOARD_PAGE_SIZE_MAX, "page_size %d",
                   v->page_size);
        FUZZ_CHECK(v->page_ttl_ms >= 0 && v->page_ttl_ms <= BOARD_PAGE_TTL_MS_MAX, "ttl %d",
                   v->page_ttl_ms);
        FUZZ_CHECK(v->retain >= 0 && v->retain <= PERIOD_RETAIN_MAX, "retain %d", v->retain);
        FUZZ_CHECK(v->tz.min >= -14 * 60 && v->tz.min <= 14 * 60, "tz %d", v->tz.min);
        FUZZ_CHECK(!v->tz.name[0] || (tzif_name_valid(v->tz.name) && v->tz.min == 0),
                   "tz name '%s'", v->tz.name);
        FUZZ_CHECK(v->period >= PERIOD_NONE && v->period <= PERIOD_MONTHLY, "period %d",
                   (int)v->period);
        if (!p.has_page_size)
            FUZZ_CHECK(v->page_size == def.page_size, "default page_size");
        if (!p.has_retain)
            FUZZ_CHECK(v->retain == def.retain, "default retain");
        if (!p.has_page_ttl)
            FUZZ_CHECK(v->page_ttl_ms == def.page_ttl_ms, "default ttl");
    } else {
        FUZZ_CHECK(err_status(err.id) == 400 && err_code(err.id) && err_code(err.id)[0] &&
                       err.msg[0],
                   "refusal %d", err_status(err.id));
    }
    cJSON_Delete(doc);
    return 0;
}
