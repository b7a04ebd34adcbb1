/*
 * json_doc.h -- a request body parsed the way handlers_common.c's handlers_parse_body and
 * upload.c's stream_line do it: NUL refused (request_json_has_nul), cJSON_ParseWithLengthOpts
 * requiring the whole text, then json_number_annotate. Shared by the entry and settings targets.
 *
 * Properties checked on the way: annotate never says -EPROTO (its tokens and cJSON's number
 * nodes always pair up), and every literal it gives a node is RFC 8259 and reads (strtod) as the
 * node's double.
 */
#ifndef RANKD_FUZZ_JSON_DOC_H
#define RANKD_FUZZ_JSON_DOC_H

#include <errno.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "json_number.h"
#include "request.h"

static void fuzz_check_literals(const cJSON *node)
{
    for (; node; node = node->next) {
        if (cJSON_IsNumber(node)) {
            const char *lit = json_number_literal(node);
            FUZZ_CHECK(lit != NULL, "number node without its literal");
            struct json_number n;
            FUZZ_CHECK(json_number_parse(lit, strlen(lit), &n) == 0, "literal '%s'", lit);
            double d = strtod(lit, NULL);
            FUZZ_CHECK(d == node->valuedouble || (d != d && node->valuedouble != node->valuedouble),
                       "literal '%s' reads %.17g, cJSON %.17g", lit, d, node->valuedouble);
        }
        fuzz_check_literals(node->child);
    }
}

/** The tree of text[0..len), or NULL when parse_body would refuse it with a 400. */
static cJSON *fuzz_json_doc(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    if (size == 0 || request_json_has_nul(text, size))
        return NULL;
    char *copy = malloc(size + 1); /* cJSON reads one byte past the text: the NUL */
    if (!copy)
        return NULL;
    memcpy(copy, text, size);
    copy[size] = '\0';
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(copy, size + 1, &end, 1);
    size_t at = 0;
    int rc = doc ? json_number_annotate(doc, copy, size, &at) : -EINVAL;
    FUZZ_CHECK(rc != -EPROTO, "annotate: tokens and nodes do not pair up");
    if (rc == 0)
        fuzz_check_literals(doc);
    free(copy);
    if (rc) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

#endif
