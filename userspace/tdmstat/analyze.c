// SPDX-License-Identifier: GPL-2.0
/*
 * tdmstat analyze FILE: a record file (tdmstat capture -w, synth) or a
 * pcap/pcapng file with ns stamps, turned into records for the engine.
 * The payloads are tdmgen's, or with --input-format original the original
 * udp_send's (lib/tdm_pkt.h: tdm_orig_decode), counted as whole datagrams:
 * IP fragments are counted and make the run fail (no reassembly).
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <string.h>

#include "tdm_merge.h"
#include "tdm_pkt.h"
#include "tdm_util.h"
#include "tdmstat.h"

static void to_engine(void *ctx, const struct tdmrx_record *r)
{
	struct tdmstat *t = ctx;

	tdm_stats_push(t->st, r);
}

/*
 * A record file holds the records as capture drained the rings, ring after
 * ring, and no watermarks: they go back into stamp order through the merge
 * with its hold limit alone (--grace + --reorder-bound behind the newest
 * stamp), which is what capture's frontier gives under ordinary delays.
 */
static int analyze_records(struct tdmstat *t, FILE *f)
{
	const struct tdm_stats_cfg *sc = tdm_stats_cfg(t->st);
	struct tdm_merge_cfg mc = {
		.nsrc = 1,
		.bound_ns = (int64_t)t->reorder_bound_ns,
		.hold_ns = sc->grace_ns + (int64_t)t->reorder_bound_ns,
		.clock = sc,
		.emit = to_engine,
		.ctx = t,
	};
	struct tdmrx_record buf[4096];
	struct tdm_merge *m = tdm_merge_new(&mc);
	size_t n, i;
	int64_t fr;

	if (!m) {
		errno = ENOMEM;
		return -1;
	}
	while (!tdm_stop &&
	       (n = fread(buf, sizeof(buf[0]), TDM_ARRAY_SIZE(buf), f))) {
		for (i = 0; i < n; i++)
			tdm_merge_add(m, 0, &buf[i]);
		fr = tdm_merge_release(m);
		if (fr != INT64_MIN)
			tdm_stats_advance(t->st, fr);
		t->records_in += n;
		tdmstat_progress(t, false);
	}
	tdm_merge_flush(m);
	tdm_stats_behind(t->st, tdm_merge_behind(m));
	tdm_merge_free(m);
	return ferror(f) ? -1 : 0;
}

static int analyze_pcap(struct tdmstat *t)
{
	char perr[PCAP_ERRBUF_SIZE];
	uint16_t flags = !strcmp(t->pcap_ts, "hw") ? TDMRX_F_HW_TS : TDMRX_F_SW_TS;
	struct pcap_pkthdr *h;
	const u_char *data;
	struct tdmrx_record r;
	pcap_t *pc;
	int lt, rc = 0;	/* stopped before the first packet */

	pc = pcap_open_offline_with_tstamp_precision(t->input,
						     PCAP_TSTAMP_PRECISION_NANO,
						     perr);
	if (!pc) {
		fprintf(stderr, "tdmstat: %s\n", perr);
		return -1;
	}
	lt = pcap_datalink(pc);
	while (!tdm_stop && (rc = pcap_next_ex(pc, &h, &data)) == 1) {
		int64_t rx = (int64_t)h->ts.tv_sec * (int64_t)TDM_NSEC_PER_SEC +
			     h->ts.tv_usec;	/* ns with PRECISION_NANO */
		enum tdm_frame_res fr = tdm_frame_decode_as(t->input_fmt, lt,
							    data, h->caplen,
							    rx, flags,
							    t->ports,
							    t->nports, &r);

		t->frames++;
		if (fr == TDM_FRAME_FRAGMENT)
			t->fragments++;
		/* For the message of a run without data: the original's size. */
		if ((fr == TDM_FRAME_PORT || fr == TDM_FRAME_BAD) &&
		    (r.flags & TDMRX_F_BAD_MAGIC) &&
		    r.len == TDM_ORIG_PAYLOAD_LEN)
			t->bad_4096++;

		if (fr == TDM_FRAME_LINKTYPE) {
			fprintf(stderr, "tdmstat: %s: link type %s is not supported\n",
				t->input, pcap_datalink_val_to_name(lt));
			pcap_close(pc);
			return -1;
		}
		if (fr == TDM_FRAME_OK || fr == TDM_FRAME_BAD) {
			tdm_stats_push(t->st, &r);
			if (!(++t->records_in & 0xffff))
				tdmstat_progress(t, false);
		}
	}
	if (rc == -1)
		fprintf(stderr, "tdmstat: %s: %s\n", t->input, pcap_geterr(pc));
	pcap_close(pc);
	if (t->fragments && t->input_fmt == TDM_PAYLOAD_ORIG) {
		fprintf(stderr, "tdmstat: %s: %llu IP fragments: the original's 4096-byte datagrams were fragmented (path MTU below 4124 for IPv4); tdmstat counts only whole datagrams and does not reassemble: capture with an MTU of at least 4124 on the path\n",
			t->input, (unsigned long long)t->fragments);
		return -1;
	}
	return rc == -1 ? -1 : 0;
}

int tdmstat_analyze(struct tdmstat *t)
{
	uint8_t hdr[TDM_REC_FILE_HDR_LEN];
	char err[512];
	FILE *f;
	int rc;
	bool recfile;

	f = fopen(t->input, "rb");
	if (!f) {
		fprintf(stderr, "tdmstat: %s: %s\n", t->input, strerror(errno));
		return 1;
	}
	recfile = fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) &&
		  !memcmp(hdr, TDM_REC_FILE_MAGIC, 8);
	/* The original sender paces by its TX clock: windows by TX time. */
	if (t->input_fmt == TDM_PAYLOAD_ORIG && !t->assign_set)
		t->assign_tx = true;
	if (recfile && t->input_fmt == TDM_PAYLOAD_ORIG) {
		fprintf(stderr, "tdmstat: %s: a record file holds records, not the original's packets: drop --input-format original\n",
			t->input);
		fclose(f);
		return 1;
	}
	if (recfile && tdm_rec_file_check(hdr, sizeof(hdr), err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s: %s\n", t->input, err);
		fclose(f);
		return 1;
	}
	if (tdmstat_load_plans(t, err, sizeof(err)) ||
	    tdmstat_open_outputs(t, err, sizeof(err))) {
		fprintf(stderr, "tdmstat: %s\n", err);
		fclose(f);
		return 1;
	}
	if (recfile) {
		setvbuf(f, NULL, _IOFBF, 1 << 20);
		rc = analyze_records(t, f);
		if (rc)
			fprintf(stderr, "tdmstat: %s: %s\n", t->input, strerror(errno));
		fclose(f);
	} else {
		fclose(f);
		rc = analyze_pcap(t);
	}
	if (tdmstat_finish(t))
		rc = -1;
	return rc ? 1 : 0;
}
