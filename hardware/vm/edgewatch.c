/*
 * edgewatch: the v2-API counterpart of `gpiomon -B pull-up -F '%o %e %s %n'` for the VM tier.
 * Debian 12's gpiomon is libgpiod 1.6 (the kernel's v1 uAPI); this tool is built by
 * hardware/vm/ci.sh against libgpiod 2.x (PyPI gpiod sdist, .ci/libgpiod2.sh), so the v2 run
 * sees the dog's edges through the kernel's v2 uAPI and libgpiod 2.x, as lineupd will there.
 *
 *   edgewatch /dev/gpiochipN OFFSET...
 *
 * Requests the lines as inputs, pull-up, both edges, CLOCK_MONOTONIC timestamps; prints each
 * edge as "OFFSET RISING(1|0) SECONDS NANOSECONDS GLOBAL_SEQNO" until SIGINT or SIGTERM; says
 * "ready" on stderr once the lines are held.
 */
#include <errno.h>
#include <gpiod.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s /dev/gpiochipN OFFSET...\n", argv[0]);
		return 64;
	}
	size_t n = (size_t)argc - 2;
	unsigned int offsets[64];
	if (n > 64) return 64;
	for (size_t i = 0; i < n; i++) offsets[i] = (unsigned int)strtoul(argv[i + 2], NULL, 10);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct gpiod_chip *chip = gpiod_chip_open(argv[1]);
	if (!chip) { perror(argv[1]); return 1; }
	struct gpiod_line_settings *s = gpiod_line_settings_new();
	gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT);
	gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH);
	gpiod_line_settings_set_bias(s, GPIOD_LINE_BIAS_PULL_UP);
	gpiod_line_settings_set_event_clock(s, GPIOD_LINE_CLOCK_MONOTONIC);
	struct gpiod_line_config *lc = gpiod_line_config_new();
	if (gpiod_line_config_add_line_settings(lc, offsets, n, s)) { perror("line config"); return 1; }
	struct gpiod_request_config *rc = gpiod_request_config_new();
	gpiod_request_config_set_consumer(rc, "vm-edgewatch");
	struct gpiod_line_request *req = gpiod_chip_request_lines(chip, rc, lc);
	if (!req) { perror("request lines"); return 1; }
	struct gpiod_edge_event_buffer *buf = gpiod_edge_event_buffer_new(64);
	fprintf(stderr, "ready\n");

	while (!stop) {
		int r = gpiod_line_request_wait_edge_events(req, 100000000);
		if (r < 0) {
			if (errno == EINTR) continue;
			perror("wait");
			return 1;
		}
		if (r == 0) continue;
		int got = gpiod_line_request_read_edge_events(req, buf, 64);
		if (got < 0) { perror("read"); return 1; }
		for (int i = 0; i < got; i++) {
			struct gpiod_edge_event *ev = gpiod_edge_event_buffer_get_event(buf, (unsigned long)i);
			unsigned long long ts = gpiod_edge_event_get_timestamp_ns(ev);
			printf("%u %d %llu %llu %lu\n", gpiod_edge_event_get_line_offset(ev),
			       gpiod_edge_event_get_event_type(ev) == GPIOD_EDGE_EVENT_RISING_EDGE,
			       ts / 1000000000ULL, ts % 1000000000ULL,
			       gpiod_edge_event_get_global_seqno(ev));
		}
		fflush(stdout);
	}
	gpiod_line_request_release(req);
	gpiod_chip_close(chip);
	return 0;
}
