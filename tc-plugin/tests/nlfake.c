// SPDX-License-Identifier: GPL-2.0
/*
 * nlfake.c	LD_PRELOAD shim that lets stock tc exercise q_tdmwin.so
 *		without the kernel module.
 *
 * TDMWIN_NL_CAPTURE=FILE	append each RTM_NEWQDISC request tc sends to
 *				FILE, then send it on to the kernel as usual
 * TDMWIN_NL_REPLY=FILE		do not send tc's RTM_GETQDISC dump request;
 *				answer it with the netlink messages in FILE
 *				(their seq and pid set to the request's),
 *				followed by NLMSG_DONE
 *
 * Only what tc's libnetlink does is handled: one request per sendmsg(),
 * and rtnl_recvmsg()'s MSG_PEEK|MSG_TRUNC probe before the real read.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

static int reply_fd = -1;	/* socket with a dump to answer */
static __u32 reply_seq;
static char *reply;		/* the answer, built on first read */
static size_t reply_len;

/* The request as one buffer; tc sends a single iovec. */
static const struct nlmsghdr *request(const struct msghdr *msg)
{
	const struct nlmsghdr *n;

	if (msg->msg_iovlen < 1 || msg->msg_iov[0].iov_len < sizeof(*n))
		return NULL;
	n = msg->msg_iov[0].iov_base;
	return n->nlmsg_len <= msg->msg_iov[0].iov_len ? n : NULL;
}

static void capture(const struct nlmsghdr *n)
{
	const char *path = getenv("TDMWIN_NL_CAPTURE");
	FILE *f;

	if (!path || n->nlmsg_type != RTM_NEWQDISC)
		return;
	f = fopen(path, "ab");
	if (!f) {
		perror("nlfake: capture");
		exit(99);
	}
	fwrite(n, 1, NLMSG_ALIGN(n->nlmsg_len), f);
	fclose(f);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);
	const struct nlmsghdr *n = request(msg);

	if (!real)
		real = (ssize_t (*)(int, const struct msghdr *, int))
			dlsym(RTLD_NEXT, "sendmsg");
	if (n) {
		capture(n);
		if (n->nlmsg_type == RTM_GETQDISC &&
		    getenv("TDMWIN_NL_REPLY")) {
			reply_fd = fd;
			reply_seq = n->nlmsg_seq;
			return n->nlmsg_len;
		}
	}
	return real(fd, msg, flags);
}

/* Read the messages of TDMWIN_NL_REPLY, address them to fd, add DONE. */
static void build_reply(int fd)
{
	struct sockaddr_nl self = { 0 };
	socklen_t alen = sizeof(self);
	struct nlmsghdr *n, *done;
	size_t len, off;
	FILE *f;

	f = fopen(getenv("TDMWIN_NL_REPLY"), "rb");
	if (!f || getsockname(fd, (struct sockaddr *)&self, &alen)) {
		perror("nlfake: reply");
		exit(99);
	}
	reply = malloc(1 << 20);
	len = fread(reply, 1, (1 << 20) - NLMSG_SPACE(sizeof(int)), f);
	fclose(f);
	for (off = 0; off + sizeof(*n) <= len;
	     off += NLMSG_ALIGN(n->nlmsg_len)) {
		n = (struct nlmsghdr *)(reply + off);
		if (n->nlmsg_len < sizeof(*n))
			break;
		n->nlmsg_seq = reply_seq;
		n->nlmsg_pid = self.nl_pid;
	}
	done = (struct nlmsghdr *)(reply + off);
	memset(done, 0, NLMSG_SPACE(sizeof(int)));
	done->nlmsg_len = NLMSG_LENGTH(sizeof(int));
	done->nlmsg_type = NLMSG_DONE;
	done->nlmsg_flags = NLM_F_MULTI;
	done->nlmsg_seq = reply_seq;
	done->nlmsg_pid = self.nl_pid;
	reply_len = off + NLMSG_SPACE(sizeof(int));
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	size_t room;

	if (!real)
		real = (ssize_t (*)(int, struct msghdr *, int))
			dlsym(RTLD_NEXT, "recvmsg");
	if (fd != reply_fd)
		return real(fd, msg, flags);
	if (!reply)
		build_reply(fd);

	room = msg->msg_iovlen ? msg->msg_iov[0].iov_len : 0;
	if (room)
		memcpy(msg->msg_iov[0].iov_base, reply,
		       room < reply_len ? room : reply_len);
	if (msg->msg_name && msg->msg_namelen >= sizeof(kernel))
		memcpy(msg->msg_name, &kernel, sizeof(kernel));
	msg->msg_flags = room < reply_len ? MSG_TRUNC : 0;
	if (!(flags & MSG_PEEK))
		reply_fd = -1;	/* answered: back to the real socket */
	return (flags & MSG_TRUNC) || room >= reply_len ? (ssize_t)reply_len :
							   (ssize_t)room;
}
