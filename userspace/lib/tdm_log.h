/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logging to stderr with levels.  Under systemd (JOURNAL_STREAM set) each
 * line carries a "<N>" syslog priority prefix so the journal keeps levels;
 * otherwise lines are "tdmd[pid]: level: message" with a monotonic stamp.
 */
#ifndef TDM_LOG_H
#define TDM_LOG_H

#include <syslog.h>	/* LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG */

void tdm_log_init(const char *ident, int max_level);
void tdm_log_set_level(int max_level);
/* "err", "warning", "notice", "info", "debug" -> LOG_*; -1 if unknown. */
int tdm_log_level_parse(const char *s);
void tdm_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)	tdm_log(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	tdm_log(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	tdm_log(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	tdm_log(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	tdm_log(LOG_DEBUG, __VA_ARGS__)

#endif
