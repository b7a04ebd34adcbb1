/* test_page_cache.c -- placeholder until the suite lands. */
#include "suites.h"

Suite *page_cache_suite(void)
{
    return suite_create("page_cache");
}
