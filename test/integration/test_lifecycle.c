/* test_lifecycle.c -- placeholder until the suite lands. */
#include "suites.h"

Suite *lifecycle_suite(void)
{
    return suite_create("lifecycle");
}
