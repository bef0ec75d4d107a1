/*
 * One small C API over libgpiod v1 (1.6, Debian 12 / bookworm) and v2 (2.x, trixie).
 * Which one is compiled is decided by the gpiod.h that pkg-config points at: only v1's
 * header defines GPIOD_LINE_BULK_MAX_LINES. Swift sees this API alone, never gpiod.h,
 * so the rest of the station is the same on both.
 *
 * Nothing here allocates after lineup_gpio_open(): reading edges fills a caller-owned
 * array from buffers made at open time.
 */
#ifndef LINEUP_STATION_SHIM_H
#define LINEUP_STATION_SHIM_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lineup_bias {
    LINEUP_BIAS_AS_IS = 0,
    LINEUP_BIAS_PULL_UP = 1,
    LINEUP_BIAS_PULL_DOWN = 2,
    LINEUP_BIAS_DISABLED = 3,
};

/* One line to request: by name (any chip), or by chip label and offset. */
typedef struct lineup_line_spec {
    const char *name;       /* line name such as "GPIO17", or NULL */
    const char *chip_label; /* used when name is NULL: "pinctrl-bcm2711" */
    unsigned int offset;    /* used when name is NULL */
    int active_low;
    int bias;               /* enum lineup_bias */
    int output;             /* 0: input with both-edge events; 1: output */
    int initial_active;     /* outputs only */
} lineup_line_spec;

/* One edge as the kernel stamped it. */
typedef struct lineup_edge {
    uint64_t timestamp_ns; /* CLOCK_MONOTONIC, taken in the kernel's interrupt handler */
    uint32_t line;         /* index into the specs given to lineup_gpio_open */
    uint32_t active;       /* 1: the line became active (active-low already applied) */
} lineup_edge;

typedef struct lineup_gpio lineup_gpio;

/* "1.6.3 (v1 API)" or "2.3 (v2 API)". */
const char *lineup_gpio_api(void);

/* 1 when the API can tell dropped events (v2 sequence numbers), else 0. */
int lineup_gpio_counts_drops(void);

/*
 * Finds every line and requests it. On failure returns NULL and writes one line,
 * naming the line and what went wrong, into err.
 */
lineup_gpio *lineup_gpio_open(const lineup_line_spec *specs, size_t count, const char *consumer,
                              char *err, size_t err_len);
void lineup_gpio_close(lineup_gpio *gpio);

/*
 * The file descriptors to poll for edges; each is readable when events wait. They are
 * non-blocking (O_NONBLOCK), so a read never waits for the next edge.
 */
size_t lineup_gpio_fd_count(const lineup_gpio *gpio);
int lineup_gpio_fd(const lineup_gpio *gpio, size_t index);
/* The lines (indexes into the specs) whose edges fd number fd_index delivers; returns how many. */
size_t lineup_gpio_fd_lines(const lineup_gpio *gpio, size_t fd_index, uint32_t *out, size_t max);

/*
 * Reads up to max waiting edges from fd number fd_index into out, in the kernel's order.
 * Returns how many, 0 if none waited (EAGAIN, EINTR), or -errno when the read failed.
 */
int lineup_gpio_read_edges(lineup_gpio *gpio, size_t fd_index, lineup_edge *out, size_t max);

/* Events the kernel dropped because its per-line buffer overflowed (v2 only). */
uint64_t lineup_gpio_dropped(const lineup_gpio *gpio);

/* The line's logical value now (1 active), or -errno. */
int lineup_gpio_get(lineup_gpio *gpio, size_t line);
/* Sets an output line active (1) or inactive (0). Returns 0 or -errno. */
int lineup_gpio_set(lineup_gpio *gpio, size_t line, int active);

/* Where a requested line was found: "/dev/gpiochip0 [pinctrl-bcm2711] offset 17 (GPIO17)". */
void lineup_gpio_describe(const lineup_gpio *gpio, size_t line, char *out, size_t out_len);

/*
 * ALSA's library prints its own errors on stderr ("ALSA lib confmisc.c:855:(parse_card)
 * cannot find card '0'", eight lines for one missing card). Once this is called they are
 * kept instead: the last one per thread, and a count, so the station can say what went
 * wrong in one line of its own. Formatting into a fixed per-thread buffer allocates nothing.
 */
void lineup_alsa_keep_errors(void);
/* The last ALSA library message on this thread ("" if none), and clears it. */
void lineup_alsa_take_error(char *out, size_t out_len);
/* Library messages kept since start, all threads. */
uint64_t lineup_alsa_error_count(void);

/* Linux calls Swift's Glibc module does not export (they need _GNU_SOURCE). */

/* A non-blocking, close-on-exec eventfd, or -errno. */
int lineup_eventfd(void);
/* poll with a nanosecond timeout (negative: wait for ever). Returns as poll(2) does. */
int lineup_ppoll(struct pollfd *fds, unsigned long count, int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#endif
