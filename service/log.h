/* log.h -- one-line log messages on stderr, with a level and a UTC timestamp. Thread-safe. */
#ifndef RANKD_LOG_H
#define RANKD_LOG_H

/** Minimum level printed: 0 debug, 1 info, 2 warn, 3 error. Default 1. */
void log_set_level(int level);

void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
