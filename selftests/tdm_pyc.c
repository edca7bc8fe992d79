// SPDX-License-Identifier: GPL-2.0
/*
 * tdm_pyc: run a tdmwin_util.py command in the selftests' python server
 * (tdmwin_util.py serve, started by run.sh), or in a python of its own
 * when there is no server.
 *
 *   tdm_pyc COMMAND [ARG...]      as tdmwin_util.py COMMAND [ARG...]
 *
 * Under TCG a python start takes seconds (the interpreter and argparse's
 * imports), and the suite starts hundreds.  The server has them loaded
 * and forks a child per request: the child takes this process's standard
 * input, output and error and its network namespace (passed here with
 * SCM_RIGHTS), its working folder and arguments, runs the command and
 * sends back its exit status, which becomes ours.  So `ip netns exec NS
 * tdm_pyc nl ...` acts in NS as tdmwin_util.py would.
 *
 * The server's socket is $TDM_PYSERV.  Without it, or when it does not
 * answer, this runs $TDM_PY -S $TDM_UTIL itself: the result is the same,
 * only slower.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define REQ_MAX 65536

static void run_direct(char **argv)
{
	const char *py = getenv("TDM_PY"), *util = getenv("TDM_UTIL");
	char **args;
	int n = 0, i;

	if (!py || !util) {
		fprintf(stderr, "tdm_pyc: no server and no TDM_PY/TDM_UTIL to run\n");
		exit(127);
	}
	while (argv[n])
		n++;
	args = calloc(n + 4, sizeof(*args));
	if (!args)
		exit(127);
	args[0] = (char *)py;
	args[1] = "-S";
	args[2] = (char *)util;
	for (i = 0; i < n; i++)
		args[3 + i] = argv[i];
	execv(py, args);
	fprintf(stderr, "tdm_pyc: exec %s: %s\n", py, strerror(errno));
	exit(127);
}

/* The request: cwd, then the arguments, each NUL-terminated. */
static size_t build_request(char *buf, char **argv)
{
	size_t len = 0, l;

	if (!getcwd(buf, REQ_MAX / 2))
		strcpy(buf, "/");
	len = strlen(buf) + 1;
	for (; *argv; argv++) {
		l = strlen(*argv) + 1;
		if (len + l > REQ_MAX)
			return 0;
		memcpy(buf + len, *argv, l);
		len += l;
	}
	return len;
}

static int send_request(int s, const char *buf, size_t len, int netns)
{
	int fds[4] = { 0, 1, 2, netns };
	char ctl[CMSG_SPACE(sizeof(fds))];
	uint32_t hdr = (uint32_t)len;
	struct iovec iov = { .iov_base = &hdr, .iov_len = sizeof(hdr) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c;
	size_t off = 0;
	ssize_t n;

	memset(ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (sendmsg(s, &mh, 0) != sizeof(hdr))
		return -1;
	while (off < len) {
		n = write(s, buf + off, len - off);
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = getenv("TDM_PYSERV");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static char buf[REQ_MAX];
	int32_t status;
	size_t len, got = 0;
	ssize_t n;
	int s, netns;

	if (argc < 2) {
		fprintf(stderr, "usage: tdm_pyc COMMAND [ARG...] (tdmwin_util.py's commands)\n");
		return 2;
	}
	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path))
		run_direct(argv + 1);
	strcpy(sa.sun_path, path);
	len = build_request(buf, argv + 1);
	netns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!len || netns < 0 || s < 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		run_direct(argv + 1);	/* nothing sent yet: the same result */
	if (send_request(s, buf, len, netns)) {
		fprintf(stderr, "tdm_pyc: sending the request to %s: %s\n", path,
			strerror(errno));
		return 125;
	}
	close(netns);
	while (got < sizeof(status)) {
		n = read(s, (char *)&status + got, sizeof(status) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "tdm_pyc: the server ended the request without an exit status\n");
			return 125;
		}
		got += (size_t)n;
	}
	return status;
}
