// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of tdm_ctl, the client of tdmd's control socket, against a
 * fake tdmd: a child process that takes one connection, checks the
 * request and answers as told.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tdm_ctl.h"

struct fake {
	char dir[64];
	char path[108];
	pid_t pid;
};

/*
 * A fake tdmd at a fresh path: it reads the request to EOF, exits 3 if it
 * is not want, else writes answer (NULL: closes at once; "": sleeps
 * instead of answering) and exits 0.
 */
static void fake_start(struct fake *f, const char *want, const char *answer)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int lfd;

	strcpy(f->dir, "/tmp/test_ctl.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/sock", f->dir);
	strcpy(sun.sun_path, f->path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (!f->pid) {
		char req[4096];
		size_t n = 0;
		ssize_t r;
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			_exit(2);
		while ((r = read(fd, req + n, sizeof(req) - 1 - n)) > 0)
			n += (size_t)r;
		req[n] = '\0';
		if (strcmp(req, want))
			_exit(3);
		if (answer && !*answer)
			sleep(10);
		if (answer && write(fd, answer, strlen(answer)) < 0)
			_exit(4);
		_exit(0);
	}
	close(lfd);
}

static void fake_end(struct fake *f, int want_status)
{
	int st;

	kill(f->pid, SIGTERM);
	assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
	if (want_status >= 0) {
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), want_status);
	}
	unlink(f->path);
	rmdir(f->dir);
}

static void test_ok(void **state)
{
	struct fake f;
	char err[256] = "", *a;

	(void)state;
	fake_start(&f, "plan push x\n[global]\n", "ok\nplan v2 acked\n");
	assert_int_equal(tdm_ctl_request(f.path, "plan push x\n", "[global]\n",
					 5000, &a, err, sizeof(err)), TDM_CTL_OK);
	assert_string_equal(a, "plan v2 acked\n");
	free(a);
	fake_end(&f, 0);

	/* An empty body is an answer too. */
	fake_start(&f, "status\n", "ok\n");
	assert_int_equal(tdm_ctl_request(f.path, "status\n", NULL, 5000, &a,
					 err, sizeof(err)), TDM_CTL_OK);
	assert_string_equal(a, "");
	free(a);
	fake_end(&f, 0);
}

static void test_refused(void **state)
{
	struct fake f;
	char err[256] = "", *a;

	(void)state;
	fake_start(&f, "plan history\n", "error\nthis tdmd is a member\n");
	assert_int_equal(tdm_ctl_request(f.path, "plan history\n", NULL, 5000,
					 &a, err, sizeof(err)), TDM_CTL_REFUSED);
	assert_string_equal(a, "this tdmd is a member\n");
	free(a);
	fake_end(&f, 0);
}

static void test_bad_answers(void **state)
{
	struct fake f;
	char err[256] = "", *a = (char *)1;

	(void)state;
	fake_start(&f, "status\n", "yes\n");
	assert_int_equal(tdm_ctl_request(f.path, "status\n", NULL, 5000, &a,
					 err, sizeof(err)), TDM_CTL_FAILED);
	assert_null(a);
	assert_string_equal(err, "malformed answer from tdmd");
	fake_end(&f, 0);

	fake_start(&f, "status\n", NULL);
	assert_int_equal(tdm_ctl_request(f.path, "status\n", NULL, 5000, &a,
					 err, sizeof(err)), TDM_CTL_UNREACHABLE);
	assert_null(a);
	assert_string_equal(err, "tdmd closed the connection without an answer");
	fake_end(&f, 0);

	fake_start(&f, "status\n", "");
	assert_int_equal(tdm_ctl_request(f.path, "status\n", NULL, 200, &a,
					 err, sizeof(err)), TDM_CTL_UNREACHABLE);
	assert_null(a);
	assert_string_equal(err, "no answer from tdmd within 1 s");
	fake_end(&f, -1);
}

static void test_unreachable(void **state)
{
	char err[256] = "", *a = (char *)1, path[200];

	(void)state;
	assert_int_equal(tdm_ctl_request("/nonexistent/tdmd.sock", "status\n",
					 NULL, 1000, &a, err, sizeof(err)),
			 TDM_CTL_UNREACHABLE);
	assert_null(a);
	assert_string_equal(err, "cannot reach tdmd at /nonexistent/tdmd.sock: No such file or directory");
	memset(path, 'x', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(tdm_ctl_request(path, "status\n", NULL, 1000, &a, err,
					 sizeof(err)), TDM_CTL_BAD_PATH);
	assert_null(a);
	assert_non_null(strstr(err, "socket path too long: xxx"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_bad_answers),
		cmocka_unit_test(test_unreachable),
	};

	return cmocka_run_group_tests_name("tdm_ctl client", tests, NULL, NULL);
}
