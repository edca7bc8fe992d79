// SPDX-License-Identifier: GPL-2.0
/*
 * Leveled logging to stderr.  Each line goes out in one write(2) so lines
 * of concurrent writers (threads, a forked child) do not interleave.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "tdm_log.h"
#include "tdm_util.h"

#define LOG_LINE_MAX	2048

/* The only mutable global state of the library. */
static struct {
	char ident[32];
	int max_level;
	bool journal;	/* stderr is connected to the journal */
	bool ready;
} log_state = { .max_level = LOG_INFO };

static const char *const level_names[] = {
	"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug",
};

void tdm_log_init(const char *ident, int max_level)
{
	if (!ident || !*ident)
		ident = program_invocation_short_name;
	tdm_strlcpy(log_state.ident, ident, sizeof(log_state.ident));
	tdm_log_set_level(max_level);
	/*
	 * systemd sets JOURNAL_STREAM when stderr is a journal stream; the
	 * journal then takes the "<N>" prefix as the priority and stamps
	 * the time itself.
	 */
	log_state.journal = getenv("JOURNAL_STREAM") != NULL;
	log_state.ready = true;
}

void tdm_log_set_level(int max_level)
{
	if (max_level < LOG_EMERG)
		max_level = LOG_EMERG;
	if (max_level > LOG_DEBUG)
		max_level = LOG_DEBUG;
	log_state.max_level = max_level;
}

int tdm_log_level_parse(const char *s)
{
	static const struct {
		const char *name;
		int level;
	} names[] = {
		{ "err", LOG_ERR }, { "error", LOG_ERR },
		{ "warning", LOG_WARNING }, { "warn", LOG_WARNING },
		{ "notice", LOG_NOTICE }, { "info", LOG_INFO },
		{ "debug", LOG_DEBUG },
	};
	unsigned int i;

	for (i = 0; s && i < TDM_ARRAY_SIZE(names); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].level;
	return -1;
}

static void write_all(const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(STDERR_FILENO, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* nowhere left to report it */
		buf += n;
		len -= (size_t)n;
	}
}

void tdm_log(int level, const char *fmt, ...)
{
	/* Callers may log "%m", or log and then look at errno. */
	int saved_errno = errno;
	char line[LOG_LINE_MAX];
	int64_t now;
	size_t n = 0;
	va_list ap;
	int r;

	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	if (!log_state.ready)
		tdm_log_init(NULL, log_state.max_level);
	if (level > log_state.max_level)
		goto out;

	if (log_state.journal) {
		r = snprintf(line, sizeof(line), "<%d>", level);
	} else {
		now = tdm_mono_ns();
		r = snprintf(line, sizeof(line), "[%5lld.%06lld] %s[%d]: %s: ",
			     (long long)(now / (int64_t)TDM_NSEC_PER_SEC),
			     (long long)(now % (int64_t)TDM_NSEC_PER_SEC / 1000),
			     log_state.ident, (int)getpid(),
			     level_names[level]);
	}
	if (r > 0)
		n = (size_t)r < sizeof(line) ? (size_t)r : sizeof(line) - 1;

	errno = saved_errno;
	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (r > 0 && (size_t)r < sizeof(line) - n)
		n += (size_t)r;
	else if (r > 0)
		n = sizeof(line) - 1;	/* cut: vsnprintf stopped there */

	/* Exactly one newline, even if the message brought its own. */
	while (n && line[n - 1] == '\n')
		n--;
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	write_all(line, n);
out:
	errno = saved_errno;
}
