// SPDX-License-Identifier: GPL-2.0
/*
 * The user-space producer ring (tdm_uring.h): tdmrx's ring layout and
 * protocol in a POSIX shared memory object.  The producer keeps its own
 * prod and dropped (the shared ones are only ever written from them) and a
 * cached copy of cons, re-read only when the ring looks full, as
 * net/xdp/xsk_queue.h does; the barriers are those of
 * kmod/uapi/linux/tdmrx.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tdm_pkt.h"
#include "tdm_uring.h"
#include "tdm_util.h"

struct tdm_uring {
	struct tdmrx_ring_prod *hdr;	/* shared: prod, dropped, mark */
	struct tdmrx_ring_cons *cons;	/* shared: the reader's */
	struct tdmrx_record *rec;
	void *map;
	size_t len;
	uint64_t prod, dropped, cached_cons;
	uint32_t mask;
	struct tdm_uring_cfg cfg;
};

/* "/tdmrx-ring-NAME" into path; -1 with err if NAME is no ring name. */
static int shm_path(const char *name, char *path, size_t len, char *err,
		    size_t errlen)
{
	size_t i, n = strlen(name);

	if (!n || n > TDM_URING_NAME_MAX || name[0] == '.')
		goto bad;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_' || name[i] == '-' || name[i] == '.'))
			goto bad;
	snprintf(path, len, "/%s%s", TDM_URING_PREFIX, name);
	return 0;
bad:
	errno = EINVAL;
	return tdm_set_err(err, errlen,
			   "'%s' is no ring name (1 to %d letters, digits, '_', '-', '.', not starting with '.')",
			   name, TDM_URING_NAME_MAX);
}

static size_t ring_bytes(uint32_t records)
{
	return TDMRX_RING_DATA_OFF + (size_t)records * sizeof(struct tdmrx_record);
}

struct tdm_uring *tdm_uring_create(const char *name,
				   const struct tdm_uring_cfg *cfg,
				   char *err, size_t errlen)
{
	uint32_t records = cfg->records ? cfg->records : TDMRX_DEFAULT_RING;
	char path[TDM_URING_NAME_MAX + 32];
	struct tdm_uring *u;
	int fd;

	if (shm_path(name, path, sizeof(path), err, errlen))
		return NULL;
	if (records < TDMRX_MIN_RING || records > TDMRX_MAX_RING ||
	    (records & (records - 1))) {
		tdm_set_err(err, errlen,
			    "ring of %u records: a power of two from %u to %u",
			    records, TDMRX_MIN_RING, TDMRX_MAX_RING);
		errno = EINVAL;
		return NULL;
	}
	if (cfg->nports > TDMRX_MAX_PORTS) {
		tdm_set_err(err, errlen, "at most %d ports, not %u",
			    TDMRX_MAX_PORTS, cfg->nports);
		errno = EINVAL;
		return NULL;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		tdm_set_err(err, errlen, "out of memory");
		return NULL;
	}
	u->cfg = *cfg;
	u->len = ring_bytes(records);
	u->mask = records - 1;
	/* A new object: a reader of an old one keeps its own, and sees it
	 * end once its producer closed it.
	 */
	if (shm_unlink(path) && errno != ENOENT) {
		tdm_set_err(err, errlen, "/dev/shm%s: %s", path, strerror(errno));
		goto fail;
	}
	fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		tdm_set_err(err, errlen, "/dev/shm%s: %s", path, strerror(errno));
		goto fail;
	}
	if (ftruncate(fd, (off_t)u->len)) {
		tdm_set_err(err, errlen, "/dev/shm%s: %zu bytes: %s", path,
			    u->len, strerror(errno));
		close(fd);
		shm_unlink(path);
		goto fail;
	}
	u->map = mmap(NULL, u->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (u->map == MAP_FAILED) {
		tdm_set_err(err, errlen, "mmap /dev/shm%s: %s", path,
			    strerror(errno));
		shm_unlink(path);
		goto fail;
	}
	u->hdr = u->map;
	u->cons = (struct tdmrx_ring_cons *)((char *)u->map + TDMRX_PAGE);
	u->rec = (struct tdmrx_record *)((char *)u->map + TDMRX_RING_DATA_OFF);
	u->hdr->size = records;
	u->hdr->rec_size = sizeof(struct tdmrx_record);
	u->hdr->cpu = cfg->cpu;
	u->hdr->session = (uint32_t)getpid();
	/* The attach is the first mark, as tdmrx's. */
	__atomic_store_n(&u->hdr->mark_ns, tdm_mono_ns(), __ATOMIC_RELEASE);
	return u;
fail:
	free(u);
	return NULL;
}

int tdm_uring_push(struct tdm_uring *u, const struct tdmrx_record *r)
{
	if (u->prod - u->cached_cons > u->mask) {
		/* (A): the reader is done with the slots it released. */
		u->cached_cons = __atomic_load_n(&u->cons->cons,
						 __ATOMIC_ACQUIRE);
		/* A reader that wrote nonsense only hurts itself. */
		if (u->cached_cons > u->prod ||
		    u->prod - u->cached_cons > (uint64_t)u->mask + 1)
			u->cached_cons = u->prod - u->mask - 1;
		if (u->prod - u->cached_cons > u->mask) {
			u->dropped++;
			__atomic_store_n(&u->hdr->dropped, u->dropped,
					 __ATOMIC_RELAXED);
			return -1;
		}
	}
	u->rec[u->prod & u->mask] = *r;
	u->prod++;
	__atomic_store_n(&u->hdr->prod, u->prod, __ATOMIC_RELEASE);	/* (B) */
	return 0;
}

int tdm_uring_push_frame(struct tdm_uring *u, const void *frame, size_t len,
			 int64_t rx_ns, uint16_t ts_flag)
{
	struct tdmrx_record r;

	memset(&r, 0, sizeof(r));
	switch (tdm_frame_decode(TDM_DLT_EN10MB, frame, len, rx_ns, ts_flag,
				 u->cfg.ports, u->cfg.nports, &r)) {
	case TDM_FRAME_OK:
	case TDM_FRAME_BAD:
		break;
	default:
		return 1;
	}
	r.cpu = u->cfg.cpu;
	return tdm_uring_push(u, &r);
}

void tdm_uring_mark(struct tdm_uring *u)
{
	/* After prod (B): what comes after it is received no earlier. */
	__atomic_store_n(&u->hdr->mark_ns, tdm_mono_ns(), __ATOMIC_RELEASE);
}

uint64_t tdm_uring_pushed(const struct tdm_uring *u)
{
	return u->prod + u->dropped;
}

uint64_t tdm_uring_dropped(const struct tdm_uring *u)
{
	return u->dropped;
}

void tdm_uring_close(struct tdm_uring *u)
{
	if (!u)
		return;
	/* prod is final before detached (the reader acquires detached). */
	__atomic_store_n(&u->hdr->detached, 1, __ATOMIC_RELEASE);
	munmap(u->map, u->len);
	free(u);
}

int tdm_uring_opt_records(struct tdm_uring_cfg *cfg, const char *arg,
			  char *err, size_t errlen)
{
	uint64_t v;

	if (tdm_parse_u64(arg, UINT32_MAX, &v, err, errlen))
		return -1;
	cfg->records = (uint32_t)v;
	return 0;
}

int tdm_uring_opt_port(struct tdm_uring_cfg *cfg, const char *arg,
		       char *err, size_t errlen)
{
	uint64_t v;

	if (tdm_parse_u64(arg, UINT16_MAX, &v, err, errlen) || !v)
		return tdm_set_err(err, errlen, "a port from 1 to 65535");
	if (cfg->nports == TDMRX_MAX_PORTS)
		return tdm_set_err(err, errlen, "at most %d ports",
				   TDMRX_MAX_PORTS);
	cfg->ports[cfg->nports++] = (uint16_t)v;
	return 0;
}

int tdm_uring_unlink(const char *name, char *err, size_t errlen)
{
	char path[TDM_URING_NAME_MAX + 32];

	if (shm_path(name, path, sizeof(path), err, errlen))
		return -1;
	if (shm_unlink(path))
		return tdm_set_err(err, errlen, "/dev/shm%s: %s", path,
				   strerror(errno));
	return 0;
}

/* ---- the reader ---------------------------------------------------------- */

/* Map the ring name into u's slot i. */
static int reader_map(struct tdm_urings *u, unsigned int i, const char *name,
		      char *err, size_t errlen)
{
	char path[TDM_URING_NAME_MAX + 32];
	const struct tdmrx_ring_prod *h;
	struct stat st;
	uint32_t size, rec_size;
	void *map;
	int fd;

	if (shm_path(name, path, sizeof(path), err, errlen))
		return -1;
	fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0) {
		if (errno == ENOENT)
			return tdm_set_err(err, errlen,
					   "no ring '%s' (/dev/shm%s): start its producer first",
					   name, path);
		return tdm_set_err(err, errlen, "/dev/shm%s: %s", path,
				   strerror(errno));
	}
	if (fstat(fd, &st) || st.st_size < (off_t)ring_bytes(TDMRX_MIN_RING)) {
		close(fd);
		return tdm_set_err(err, errlen,
				   "/dev/shm%s is no ring: %lld bytes", path,
				   (long long)st.st_size);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return tdm_set_err(err, errlen, "mmap /dev/shm%s: %s", path,
				   strerror(errno));
	h = map;
	size = h->size;
	rec_size = h->rec_size;
	if (rec_size != sizeof(struct tdmrx_record) ||
	    size < TDMRX_MIN_RING || size > TDMRX_MAX_RING ||
	    (size & (size - 1)) || (size_t)st.st_size != ring_bytes(size)) {
		munmap(map, (size_t)st.st_size);
		return tdm_set_err(err, errlen,
				   "/dev/shm%s is no ring: record size %u, %u records, %lld bytes",
				   path, rec_size, size, (long long)st.st_size);
	}
	u->maps[i] = map;
	u->lens[i] = (size_t)st.st_size;
	tdm_rx_ring_init(&u->rings[i], map);
	return 0;
}

/* Whether name is one of the comma-separated names in list. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *c = list;

	for (;;) {
		if (!strncmp(c, name, n) && (c[n] == ',' || !c[n]))
			return true;
		c = strchr(c, ',');
		if (!c)
			return false;
		c++;
	}
}

int tdm_urings_open(struct tdm_urings *u, const char *list, char *err,
		    size_t errlen)
{
	char *names = strdup(list), *name, *save = NULL;
	unsigned int n = 1, i;
	const char *c;

	memset(u, 0, sizeof(*u));
	for (c = list; *c; c++)
		n += *c == ',';
	u->rings = calloc(n, sizeof(*u->rings));
	u->maps = calloc(n, sizeof(*u->maps));
	u->lens = calloc(n, sizeof(*u->lens));
	if (!names || !u->rings || !u->maps || !u->lens) {
		free(names);
		tdm_urings_close(u);
		return tdm_set_err(err, errlen, "out of memory");
	}
	/* strtok_r would pass over an empty name: count them as bad. */
	for (i = 0, name = names; i < n; i++, name = save) {
		save = strchr(name, ',');
		if (save)
			*save++ = '\0';
		/* Two readers of one ring would share its cons. */
		if (save && listed(save, name)) {
			tdm_set_err(err, errlen, "ring '%s' listed twice", name);
			break;
		}
		if (reader_map(u, i, name, err, errlen))
			break;
		u->n = i + 1;
	}
	free(names);
	if (u->n != n) {
		tdm_urings_close(u);
		return -1;
	}
	return 0;
}

void tdm_urings_close(struct tdm_urings *u)
{
	unsigned int i;

	for (i = 0; i < u->n; i++)
		munmap(u->maps[i], u->lens[i]);
	free(u->rings);
	free(u->maps);
	free(u->lens);
	memset(u, 0, sizeof(*u));
}
