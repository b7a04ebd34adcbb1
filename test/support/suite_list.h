/*
 * suite_list.h -- test support shared by the unit and the integration runner (test/unit/main.c,
 * test/integration/main.c): which suites a run selects.
 */
#ifndef RANKD_TEST_SUITE_LIST_H
#define RANKD_TEST_SUITE_LIST_H

/** 1 when `name` is in the comma-separated list `list` (NULL or empty: every suite), else 0. */
int suite_listed(const char *list, const char *name);

#endif
