/*
 * civil.h -- proleptic Gregorian dates as day counts (H. Hinnant, "chrono-Compatible Low-Level
 * Date Algorithms"): what period.c and tzif.c both count calendar days with.
 *
 * A day count is days since 1970-01-01 (negative before). Months are 1..12, days 1..31.
 * Pure functions, thread-safe.
 */
#ifndef RANKD_CIVIL_H
#define RANKD_CIVIL_H

#include <stdint.h>

/** Days since 1970-01-01 of y-m-d (m 1..12, d 1..31; d past the month's end runs on). */
int64_t civil_days(int64_t y, int m, int d);

/** y-m-d of a day count. */
void civil_date(int64_t days, int64_t *y, int *m, int *d);

/** Weekday of a day count, Monday = 0 .. Sunday = 6 (1970-01-01 was a Thursday, 3). */
int civil_weekday(int64_t days);

/** a / b rounded toward negative infinity (b > 0). */
int64_t civil_floor_div(int64_t a, int64_t b);

#endif
