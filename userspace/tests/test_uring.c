// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the user-space producer ring (tdm_uring): records + drops
 * = pushed, exactly, with a reader that stalls (a producer and a reader
 * thread on one ring in shared memory, the reader checking that it gets
 * exactly the records whose push succeeded, in order); frames into
 * records; the end; refusals with their messages; and tdmstat capture
 * --recorder ring:NAME against tdmstat analyze of the same records in a
 * record file: the same rows.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "tdm_pkt.h"
#include "tdm_plan.h"
#include "tdm_uring.h"
#include "tdm_util.h"

#ifndef TDMSTAT_BIN
#define TDMSTAT_BIN "tdmstat"
#endif

extern char **environ;

static char name[64];

static void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void set_name(const char *what)
{
	snprintf(name, sizeof(name), "test-%d-%s", (int)getpid(), what);
}

/* ---- records + drops = pushed under a stalling reader --------------------- */

#define STALL_N		300000
#define STALL_RING	1024

struct stall {
	struct tdm_uring *u;
	uint8_t *ok;			/* per seq: the push succeeded */
	int done;
	uint64_t read, bad_order, missing, extra;
	uint64_t next;			/* the reader: next seq to expect */
};

static void *producer(void *arg)
{
	struct stall *s = arg;
	unsigned int seed = 99;
	uint64_t i;

	for (i = 0; i < STALL_N; i++) {
		struct tdmrx_record r = { .seq = i, .rx_ns = (int64_t)i,
					  .flags = TDMRX_F_SW_TS, .len = 100 };

		s->ok[i] = tdm_uring_push(s->u, &r) == 0;
		if (i % 64 == 63)
			tdm_uring_mark(s->u);
		if (rand_r(&seed) % 5000 == 0)
			nap_us(200);	/* the producer pauses too */
	}
	tdm_uring_close(s->u);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Records must be those pushed, in order, none twice. */
static int check_record(void *ctx, const struct tdmrx_record *r)
{
	struct stall *s = ctx;

	if (r->seq < s->next || r->seq >= STALL_N) {
		s->bad_order++;
		return 0;
	}
	/* Every seq skipped over must have been dropped. */
	for (; s->next < r->seq; s->next++)
		if (s->ok[s->next])
			s->missing++;
	if (!s->ok[r->seq])
		s->extra++;
	s->next = r->seq + 1;
	s->read++;
	return 0;
}

static void test_stalling_reader(void **state)
{
	struct tdm_uring_cfg c = { .records = STALL_RING };
	struct stall s = { 0 };
	struct tdm_urings rd;
	unsigned int seed = 7;
	uint64_t dropped_seen = 0, i;
	pthread_t th;
	char err[256];

	(void)state;
	set_name("stall");
	s.ok = calloc(STALL_N, 1);
	assert_non_null(s.ok);
	s.u = tdm_uring_create(name, &c, err, sizeof(err));
	if (!s.u)
		fail_msg("create: %s", err);
	if (tdm_urings_open(&rd, name, err, sizeof(err)))
		fail_msg("open: %s", err);
	assert_int_equal(rd.n, 1);
	assert_int_equal(pthread_create(&th, NULL, producer, &s), 0);
	while (!tdm_rx_rings_finished(rd.rings, rd.n)) {
		uint64_t d = tdm_rx_rings_dropped(rd.rings, rd.n);

		/* The shared count never goes back, never passes the truth. */
		assert_true(d >= dropped_seen);
		dropped_seen = d;
		tdm_rx_ring_drain(&rd.rings[0], check_record, &s,
				  rand_r(&seed) % 700);
		if (rand_r(&seed) % 50 == 0)
			nap_us(2000 + rand_r(&seed) % 3000);	/* stall */
	}
	pthread_join(th, NULL);
	for (i = s.next; i < STALL_N; i++)
		if (s.ok[i])
			s.missing++;
	assert_int_equal(s.bad_order, 0);
	assert_int_equal(s.missing, 0);
	assert_int_equal(s.extra, 0);
	/* The count: exact, and both sides of it non-trivial. */
	assert_int_equal(s.read + tdm_rx_rings_dropped(rd.rings, rd.n), STALL_N);
	assert_true(s.read > STALL_RING);
	assert_true(tdm_rx_rings_dropped(rd.rings, rd.n) > 0);
	tdm_urings_close(&rd);
	assert_int_equal(tdm_uring_unlink(name, err, sizeof(err)), 0);
	free(s.ok);
}

/* ---- frames, the end, refusals ------------------------------------------ */

static int count(void *ctx, const struct tdmrx_record *r)
{
	(void)r;
	++*(uint64_t *)ctx;
	return 0;
}

static void test_frames(void **state)
{
	struct tdm_uring_cfg c = { .records = 64, .ports = { 8081 },
				   .nports = 1, .cpu = 3 };
	const struct tdm_pkt p = { .sender = 2, .plan_version = 7, .seq = 41,
				   .tx_ns = 123456789 };
	struct tdm_frame_addr a = { .saddr = 0xc6120002, .daddr = 0xc6130001,
				    .sport = 5000, .dport = 8081 };
	struct tdm_urings rd;
	struct tdm_uring *u;
	const struct tdmrx_record *r;
	uint64_t n = 0;
	uint8_t fr[256];
	size_t len;
	char err[256];
	int i;

	(void)state;
	set_name("frames");
	u = tdm_uring_create(name, &c, err, sizeof(err));
	if (!u)
		fail_msg("create: %s", err);
	len = tdm_frame_encode(fr, sizeof(fr), &a, &p, 1000);
	assert_true(len > 0);
	assert_int_equal(tdm_uring_push_frame(u, fr, sizeof(fr), 555,
					      TDMRX_F_HW_TS), 0);
	/* Another port, and no UDP at all: not records, not counted. */
	a.dport = 9000;
	tdm_frame_encode(fr, sizeof(fr), &a, &p, 1000);
	assert_int_equal(tdm_uring_push_frame(u, fr, sizeof(fr), 556,
					      TDMRX_F_HW_TS), 1);
	fr[12] = 0x86;			/* ethertype 0x86dd, an empty IPv6 */
	assert_int_equal(tdm_uring_push_frame(u, fr, 20, 557,
					      TDMRX_F_HW_TS), 1);
	assert_int_equal(tdm_uring_pushed(u), 1);
	/* Full: the rest of 64 in, then drops, counted. */
	for (i = 0; i < 70; i++) {
		struct tdmrx_record x = { .seq = 100 + i };

		assert_int_equal(tdm_uring_push(u, &x), i < 63 ? 0 : -1);
	}
	assert_int_equal(tdm_uring_pushed(u), 71);
	assert_int_equal(tdm_uring_dropped(u), 7);
	if (tdm_urings_open(&rd, name, err, sizeof(err)))
		fail_msg("open: %s", err);
	r = &rd.rings[0].rec[0];
	assert_int_equal(r->sender, 2);
	assert_int_equal(r->plan_version, 7);
	assert_int_equal(r->seq, 41);
	assert_int_equal(r->tx_ns, 123456789);
	assert_int_equal(r->rx_ns, 555);
	assert_int_equal(r->flags, TDMRX_F_HW_TS);
	assert_int_equal(r->len, 1000);
	assert_int_equal(r->saddr, 0xc6120002);
	assert_int_equal(r->dport, 8081);
	assert_int_equal(r->cpu, 3);
	assert_int_equal(tdm_rx_rings_dropped(rd.rings, rd.n), 7);
	assert_false(tdm_rx_rings_finished(rd.rings, rd.n));
	tdm_uring_close(u);
	assert_false(tdm_rx_rings_finished(rd.rings, rd.n));		/* not drained */
	assert_int_equal(tdm_rx_ring_drain(&rd.rings[0], count, &n, 0), 64);
	assert_int_equal(n, 64);
	assert_true(tdm_rx_rings_finished(rd.rings, rd.n));
	tdm_urings_close(&rd);
	assert_int_equal(tdm_uring_unlink(name, err, sizeof(err)), 0);
}

static void expect_err(const char *got, const char *want)
{
	if (!strstr(got, want))
		fail_msg("error '%s' does not say '%s'", got, want);
}

static void test_end(void **state)
{
	struct tdm_uring_cfg c = { 0 };
	struct tdmrx_record x = { .seq = 1 };
	struct tdm_urings rd;
	struct tdm_uring *u, *u2;
	uint64_t n = 0;
	char err[256], list[200];

	(void)state;
	set_name("end");
	u = tdm_uring_create(name, &c, err, sizeof(err));
	if (!u)
		fail_msg("create: %s", err);
	assert_int_equal(tdm_uring_push(u, &x), 0);
	/* One reader per ring: listed twice is refused. */
	snprintf(list, sizeof(list), "%s,%s", name, name);
	assert_int_equal(tdm_urings_open(&rd, list, err, sizeof(err)), -1);
	expect_err(err, "listed twice");
	if (tdm_urings_open(&rd, name, err, sizeof(err)))
		fail_msg("open: %s", err);
	assert_int_equal(rd.n, 1);
	assert_int_equal(rd.rings[0].prod->size, TDMRX_DEFAULT_RING);
	assert_true(rd.rings[0].prod->mark_ns > 0);	/* the create */
	tdm_rx_ring_drain(&rd.rings[0], count, &n, 0);
	assert_false(tdm_rx_rings_finished(rd.rings, rd.n));
	/* A new producer of the name leaves the old ring to its reader,
	 * which ends when its own producer closes it.
	 */
	u2 = tdm_uring_create(name, &c, err, sizeof(err));
	if (!u2)
		fail_msg("create again: %s", err);
	assert_false(tdm_rx_rings_finished(rd.rings, rd.n));
	tdm_uring_close(u);
	assert_true(tdm_rx_rings_finished(rd.rings, rd.n));
	assert_int_equal(n, 1);
	tdm_urings_close(&rd);
	tdm_uring_close(u2);
	assert_int_equal(tdm_uring_unlink(name, err, sizeof(err)), 0);
}

static void test_refusals(void **state)
{
	struct tdm_uring_cfg c = { .records = 1000 };
	char err[256], path[128], list[200];
	struct tdm_urings rd;
	int fd;

	(void)state;
	set_name("bad");
	assert_null(tdm_uring_create(name, &c, err, sizeof(err)));
	expect_err(err, "ring of 1000 records: a power of two from 64 to");
	c.records = 64;
	c.nports = TDMRX_MAX_PORTS + 1;
	assert_null(tdm_uring_create(name, &c, err, sizeof(err)));
	expect_err(err, "at most 16 ports, not 17");
	c.nports = 0;
	assert_null(tdm_uring_create("a/b", &c, err, sizeof(err)));
	expect_err(err, "'a/b' is no ring name");
	assert_null(tdm_uring_create(".x", &c, err, sizeof(err)));
	expect_err(err, "'.x' is no ring name");
	assert_null(tdm_uring_create("", &c, err, sizeof(err)));
	expect_err(err, "'' is no ring name");
	assert_int_equal(tdm_urings_open(&rd, name, err, sizeof(err)), -1);
	expect_err(err, "start its producer first");
	snprintf(list, sizeof(list), "%s,", name);
	assert_int_equal(tdm_urings_open(&rd, list, err, sizeof(err)), -1);
	/* Something else under the name: refused, not read. */
	snprintf(path, sizeof(path), "/%s%s", TDM_URING_PREFIX, name);
	fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 3 * 4096), 0);
	close(fd);
	assert_int_equal(tdm_urings_open(&rd, name, err, sizeof(err)), -1);
	expect_err(err, "is no ring: record size 0, 0 records");
	shm_unlink(path);
	fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tdm_urings_open(&rd, name, err, sizeof(err)), -1);
	expect_err(err, "is no ring: 0 bytes");
	shm_unlink(path);
}

/* ---- tdmstat capture --recorder ring: against analyze -------------------- */

static int run(char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	*len = (size_t)n;
	fclose(f);
	return buf;
}

static void same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = slurp(a, &la), *y = slurp(b, &lb);

	assert_non_null(x);
	assert_non_null(y);
	assert_true(la > 200);
	assert_string_equal(x, y);
	free(x);
	free(y);
}

static void test_capture(void **state)
{
	char dir[] = "/tmp/test_uring.XXXXXX", rec[100], rec2[100], plan[100];
	char cap[100], ana[100], rl[100], a1[200], a2[200], err[256];
	struct tdm_uring_cfg c = { .records = 65536 };
	struct tdmrx_record *all;
	struct tdm_uring *u;
	struct tdm_plan p;
	size_t len, n, i;
	int64_t shift, cycles;
	uint8_t *raw;
	pid_t pid;
	FILE *f;
	int st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(rec, sizeof(rec), "%s/a.rec", dir);
	snprintf(rec2, sizeof(rec2), "%s/b.rec", dir);
	snprintf(plan, sizeof(plan), "%s/a.rec.plan", dir);
	snprintf(cap, sizeof(cap), "%s/cap", dir);
	snprintf(ana, sizeof(ana), "%s/ana", dir);
	{
		char *argv[] = { TDMSTAT_BIN, "synth", "-q", "-n", "30000",
				 "-S", "3", "-o", rec, NULL };

		assert_int_equal(run(argv), 0);
	}
	tdm_plan_init(&p);
	if (tdm_plan_load(plan, &p, err, sizeof(err)))
		fail_msg("%s: %s", plan, err);
	raw = (uint8_t *)slurp(rec, &len);
	assert_non_null(raw);
	n = (len - TDM_REC_FILE_HDR_LEN) / sizeof(*all);
	all = (struct tdmrx_record *)(void *)(raw + TDM_REC_FILE_HDR_LEN);
	/*
	 * Into the future by whole cycles (the same windows of the same
	 * plan): keys ahead of the marks, so that capture's merge holds
	 * them all until the end as analyze's does, and neither calls any
	 * behind.
	 */
	cycles = (tdm_clock_ns(CLOCK_TAI) + 20 * (int64_t)TDM_NSEC_PER_SEC -
		  all[0].rx_ns) / (int64_t)p.cycle_ns + 1;
	shift = cycles * (int64_t)p.cycle_ns;
	for (i = 0; i < n; i++) {
		if (all[i].flags & TDMRX_F_END)
			continue;
		all[i].rx_ns += shift;
		all[i].tx_ns += shift;
	}
	f = fopen(rec2, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(raw, 1, len, f), len);
	assert_int_equal(fclose(f), 0);

	set_name("capture");
	u = tdm_uring_create(name, &c, err, sizeof(err));
	if (!u)
		fail_msg("create: %s", err);
	snprintf(rl, sizeof(rl), "ring:%s", name);
	snprintf(a1, sizeof(a1), "%s", plan);
	{
		char *argv[] = { TDMSTAT_BIN, "capture", "-q", "-d", "30s",
				 "--recorder", rl,
				 "-p", a1, "--rt-offset", "0", "-o", cap,
				 NULL };

		assert_int_equal(posix_spawn(&pid, argv[0], NULL, NULL, argv,
					     environ), 0);
	}
	nap_us(300000);			/* capture maps the ring */
	for (i = 0; i < n; i++) {
		assert_int_equal(tdm_uring_push(u, &all[i]), 0);
		if (i % 64 == 63) {
			tdm_uring_mark(u);
			if (i % 4096 == 4095)
				nap_us(2000);
		}
	}
	tdm_uring_mark(u);
	assert_int_equal(tdm_uring_dropped(u), 0);
	tdm_uring_close(u);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	{
		char *argv[] = { TDMSTAT_BIN, "analyze", "-q", "-p", a1,
				 "--rt-offset", "0", "-o", ana, rec2, NULL };

		assert_int_equal(run(argv), 0);
	}
	snprintf(a1, sizeof(a1), "%s-windows.csv", cap);
	snprintf(a2, sizeof(a2), "%s-windows.csv", ana);
	same_file(a1, a2);
	snprintf(a1, sizeof(a1), "%s-senders.csv", cap);
	snprintf(a2, sizeof(a2), "%s-senders.csv", ana);
	same_file(a1, a2);
	tdm_uring_unlink(name, err, sizeof(err));
	tdm_plan_free(&p);
	free(raw);
	{
		char *argv[] = { "/bin/rm", "-rf", dir, NULL };

		run(argv);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stalling_reader),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_end),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_capture),
	};

	return cmocka_run_group_tests_name("tdm_uring", tests, NULL, NULL);
}
