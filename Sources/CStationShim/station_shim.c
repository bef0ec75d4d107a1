/*
 * libgpiod v1 / v2 behind one API (see include/station_shim.h).
 *
 * Both versions share the chip search: every /dev/gpiochip* is opened and matched by its
 * label or by a line's name, never by its number, because the Pi 5's header chip has
 * been renumbered by kernel updates. Only requesting and reading differ.
 */
#define _GNU_SOURCE
#include "station_shim.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <alsa/asoundlib.h>
#include <gpiod.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define LINEUP_GPIOD_V1 1
#else
#define LINEUP_GPIOD_V2 1
#endif

#define MAX_CHIPS 16
#define MAX_LINES 64
#define EVENT_BATCH 64

struct chip_entry {
    char path[64];
    char label[64];
    unsigned int num_lines;
    struct gpiod_chip *chip;
};

struct line_entry {
    int chip;
    unsigned int offset;
    char name[40];
    int output;
    int request; /* index into requests */
#ifdef LINEUP_GPIOD_V1
    struct gpiod_line *line;
#else
    unsigned long last_seqno;
#endif
};

struct request_entry {
    int fd;
    int input;
    size_t lines[MAX_LINES]; /* spec indexes served by this request */
    size_t line_count;
#ifdef LINEUP_GPIOD_V2
    struct gpiod_line_request *request;
#endif
};

struct lineup_gpio {
    struct chip_entry chips[MAX_CHIPS];
    size_t chip_count;
    struct line_entry lines[MAX_LINES];
    size_t line_count;
    struct request_entry requests[MAX_LINES];
    size_t request_count;
    size_t input_requests[MAX_LINES]; /* request indexes, in fd order */
    size_t input_request_count;
    uint64_t dropped;
#ifdef LINEUP_GPIOD_V1
    struct gpiod_line_event events[EVENT_BATCH];
#else
    struct gpiod_edge_event_buffer *events;
#endif
};

static void fail(char *err, size_t len, const char *fmt, ...) {
    if (!err || len == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

const char *lineup_gpio_api(void) {
    static char text[48];
#ifdef LINEUP_GPIOD_V1
    snprintf(text, sizeof text, "%s (v1 API)", gpiod_version_string());
#else
    snprintf(text, sizeof text, "%s (v2 API)", gpiod_api_version());
#endif
    return text;
}

int lineup_gpio_counts_drops(void) {
#ifdef LINEUP_GPIOD_V1
    return 0;
#else
    return 1;
#endif
}

static int compare_paths(const void *a, const void *b) {
    const struct chip_entry *x = a, *y = b;
    size_t lx = strlen(x->path), ly = strlen(y->path);
    if (lx != ly) return lx < ly ? -1 : 1; /* gpiochip2 before gpiochip10 */
    return strcmp(x->path, y->path);
}

/* Opens every GPIO chip and reads its label; chips that cannot be opened are skipped. */
static void find_chips(lineup_gpio *g) {
    DIR *dir = opendir("/dev");
    if (!dir) return;
    struct dirent *entry;
    while ((entry = readdir(dir)) && g->chip_count < MAX_CHIPS) {
        if (strncmp(entry->d_name, "gpiochip", 8) != 0) continue;
        struct chip_entry *c = &g->chips[g->chip_count];
        snprintf(c->path, sizeof c->path, "/dev/%s", entry->d_name);
        c->chip = gpiod_chip_open(c->path);
        if (!c->chip) continue;
#ifdef LINEUP_GPIOD_V1
        snprintf(c->label, sizeof c->label, "%s", gpiod_chip_label(c->chip));
        c->num_lines = gpiod_chip_num_lines(c->chip);
#else
        struct gpiod_chip_info *info = gpiod_chip_get_info(c->chip);
        if (!info) {
            gpiod_chip_close(c->chip);
            continue;
        }
        snprintf(c->label, sizeof c->label, "%s", gpiod_chip_info_get_label(info));
        c->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
        gpiod_chip_info_free(info);
#endif
        g->chip_count++;
    }
    closedir(dir);
    qsort(g->chips, g->chip_count, sizeof g->chips[0], compare_paths);
}

static void list_chips(const lineup_gpio *g, char *out, size_t len) {
    size_t used = 0;
    out[0] = 0;
    for (size_t i = 0; i < g->chip_count && used + 1 < len; i++) {
        int n = snprintf(out + used, len - used, "%s%s [%s]", i ? ", " : "", g->chips[i].path,
                         g->chips[i].label);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (g->chip_count == 0) snprintf(out, len, "none: no /dev/gpiochip* could be opened");
}

/* Finds the chip and offset of one spec. Returns 0, or -1 with err filled. */
static int resolve(lineup_gpio *g, const lineup_line_spec *spec, struct line_entry *out, char *err,
                   size_t err_len) {
    char chips[512];
    if (spec->name) {
        for (size_t i = 0; i < g->chip_count; i++) {
#ifdef LINEUP_GPIOD_V1
            struct gpiod_line *line = gpiod_chip_find_line(g->chips[i].chip, spec->name);
            if (!line) continue;
            out->offset = gpiod_line_offset(line);
#else
            int offset = gpiod_chip_get_line_offset_from_name(g->chips[i].chip, spec->name);
            if (offset < 0) continue;
            out->offset = (unsigned int)offset;
#endif
            out->chip = (int)i;
            snprintf(out->name, sizeof out->name, "%s", spec->name);
            return 0;
        }
        list_chips(g, chips, sizeof chips);
        fail(err, err_len, "no GPIO line is named \"%s\" (chips found: %s)", spec->name, chips);
        return -1;
    }
    const char *label = spec->chip_label ? spec->chip_label : "";
    for (size_t i = 0; i < g->chip_count; i++) {
        if (strcmp(g->chips[i].label, label) != 0) continue;
        if (spec->offset >= g->chips[i].num_lines) {
            fail(err, err_len, "chip \"%s\" (%s) has %u lines: offset %u does not exist", label,
                 g->chips[i].path, g->chips[i].num_lines, spec->offset);
            return -1;
        }
        out->chip = (int)i;
        out->offset = spec->offset;
        out->name[0] = 0;
#ifdef LINEUP_GPIOD_V1
        struct gpiod_line *line = gpiod_chip_get_line(g->chips[i].chip, spec->offset);
        if (line && gpiod_line_name(line))
            snprintf(out->name, sizeof out->name, "%s", gpiod_line_name(line));
#else
        struct gpiod_line_info *info = gpiod_chip_get_line_info(g->chips[i].chip, spec->offset);
        if (info) {
            const char *name = gpiod_line_info_get_name(info);
            if (name) snprintf(out->name, sizeof out->name, "%s", name);
            gpiod_line_info_free(info);
        }
#endif
        return 0;
    }
    list_chips(g, chips, sizeof chips);
    fail(err, err_len, "no GPIO chip is labelled \"%s\" (chips found: %s)", label, chips);
    return -1;
}

/*
 * Edge fds are made non-blocking: libgpiod's reads then fail with EAGAIN when nothing waits
 * (read as "no more") instead of blocking the hot thread until the next edge. v2's kernel
 * buffer holds exactly one batch (EVENT_BATCH), so a full batch says nothing about what is left.
 */
static int set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static const char *spec_text(const lineup_line_spec *s, char *buf, size_t len) {
    if (s->name)
        snprintf(buf, len, "%s", s->name);
    else
        snprintf(buf, len, "%s:%u", s->chip_label ? s->chip_label : "?", s->offset);
    return buf;
}

#ifdef LINEUP_GPIOD_V1
static int request_lines(lineup_gpio *g, const lineup_line_spec *specs, const char *consumer, char *err,
                         size_t err_len) {
    /* uAPI v1 gives each line its own event file, so each line is its own request. */
    for (size_t i = 0; i < g->line_count; i++) {
        struct line_entry *l = &g->lines[i];
        const lineup_line_spec *s = &specs[i];
        struct chip_entry *c = &g->chips[l->chip];
        char what[80];
        l->line = gpiod_chip_get_line(c->chip, l->offset);
        if (!l->line) {
            fail(err, err_len, "%s: cannot get offset %u of %s: %s", spec_text(s, what, sizeof what),
                 l->offset, c->path, strerror(errno));
            return -1;
        }
        int flags = s->active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
        switch (s->bias) {
        case LINEUP_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
        case LINEUP_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
        case LINEUP_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
        default: break;
        }
        struct gpiod_line_request_config config = {
            .consumer = consumer,
            .request_type = s->output ? GPIOD_LINE_REQUEST_DIRECTION_OUTPUT
                                      : GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES,
            .flags = flags,
        };
        if (gpiod_line_request(l->line, &config, s->output ? s->initial_active : 0) < 0) {
            fail(err, err_len, "%s: requesting offset %u of %s [%s] failed: %s%s",
                 spec_text(s, what, sizeof what), l->offset, c->path, c->label, strerror(errno),
                 errno == EBUSY ? " (another program holds the line: gpioinfo shows which)" : "");
            return -1;
        }
        struct request_entry *r = &g->requests[g->request_count];
        r->input = !s->output;
        r->fd = r->input ? gpiod_line_event_get_fd(l->line) : -1;
        if (r->input && (r->fd < 0 || set_nonblocking(r->fd) < 0)) {
            fail(err, err_len, "%s: cannot make the event descriptor of offset %u of %s non-blocking: %s",
                 spec_text(s, what, sizeof what), l->offset, c->path, strerror(errno));
            gpiod_line_release(l->line);
            return -1;
        }
        r->lines[0] = i;
        r->line_count = 1;
        l->request = (int)g->request_count;
        if (r->input) g->input_requests[g->input_request_count++] = g->request_count;
        g->request_count++;
    }
    return 0;
}
#else
static int settings_for(const lineup_line_spec *s, struct gpiod_line_settings *settings) {
    int rc = 0;
    if (s->output) {
        rc |= gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
        rc |= gpiod_line_settings_set_output_value(
            settings, s->initial_active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
    } else {
        rc |= gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_INPUT);
        rc |= gpiod_line_settings_set_edge_detection(settings, GPIOD_LINE_EDGE_BOTH);
        rc |= gpiod_line_settings_set_event_clock(settings, GPIOD_LINE_CLOCK_MONOTONIC);
        enum gpiod_line_bias bias = GPIOD_LINE_BIAS_AS_IS;
        if (s->bias == LINEUP_BIAS_PULL_UP) bias = GPIOD_LINE_BIAS_PULL_UP;
        if (s->bias == LINEUP_BIAS_PULL_DOWN) bias = GPIOD_LINE_BIAS_PULL_DOWN;
        if (s->bias == LINEUP_BIAS_DISABLED) bias = GPIOD_LINE_BIAS_DISABLED;
        rc |= gpiod_line_settings_set_bias(settings, bias);
    }
    gpiod_line_settings_set_active_low(settings, s->active_low != 0);
    return rc;
}

static int request_lines(lineup_gpio *g, const lineup_line_spec *specs, const char *consumer, char *err,
                         size_t err_len) {
    /*
     * One request per chip for the inputs, so one read returns a batch across all
     * stations; one request per output line, since outputs are few and set one by one.
     */
    for (int pass = 0; pass < 2; pass++) {
        int want_input = pass == 0;
        for (size_t c = 0; c < g->chip_count; c++) {
            size_t members[MAX_LINES], count = 0;
            for (size_t i = 0; i < g->line_count; i++)
                if (g->lines[i].chip == (int)c && (!specs[i].output) == want_input) members[count++] = i;
            size_t groups = want_input ? (count ? 1 : 0) : count;
            for (size_t k = 0; k < groups; k++) {
                size_t first = want_input ? 0 : k, last = want_input ? count : k + 1;
                struct gpiod_line_config *line_config = gpiod_line_config_new();
                struct gpiod_request_config *request_config = gpiod_request_config_new();
                int ok = line_config && request_config;
                for (size_t m = first; ok && m < last; m++) {
                    struct gpiod_line_settings *settings = gpiod_line_settings_new();
                    unsigned int offset = g->lines[members[m]].offset;
                    ok = settings && settings_for(&specs[members[m]], settings) == 0 &&
                         gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) == 0;
                    if (settings) gpiod_line_settings_free(settings);
                }
                struct gpiod_line_request *request = NULL;
                if (ok) {
                    gpiod_request_config_set_consumer(request_config, consumer);
                    gpiod_request_config_set_event_buffer_size(request_config, EVENT_BATCH);
                    request = gpiod_chip_request_lines(g->chips[c].chip, request_config, line_config);
                }
                int saved = errno;
                if (line_config) gpiod_line_config_free(line_config);
                if (request_config) gpiod_request_config_free(request_config);
                if (!request) {
                    char what[80];
                    fail(err, err_len, "%s: requesting %s on %s [%s] failed: %s%s",
                         spec_text(&specs[members[first]], what, sizeof what),
                         want_input ? "the input lines" : "the output line", g->chips[c].path,
                         g->chips[c].label, strerror(saved),
                         saved == EBUSY ? " (another program holds a line: gpioinfo shows which)" : "");
                    return -1;
                }
                struct request_entry *r = &g->requests[g->request_count];
                r->request = request;
                r->input = want_input;
                r->fd = want_input ? gpiod_line_request_get_fd(request) : -1;
                if (want_input && (r->fd < 0 || set_nonblocking(r->fd) < 0)) {
                    char what[80];
                    fail(err, err_len, "%s: cannot make the edge descriptor of %s [%s] non-blocking: %s",
                         spec_text(&specs[members[first]], what, sizeof what), g->chips[c].path,
                         g->chips[c].label, strerror(errno));
                    gpiod_line_request_release(request);
                    return -1;
                }
                r->line_count = 0;
                for (size_t m = first; m < last; m++) {
                    r->lines[r->line_count++] = members[m];
                    g->lines[members[m]].request = (int)g->request_count;
                }
                if (want_input) g->input_requests[g->input_request_count++] = g->request_count;
                g->request_count++;
            }
        }
    }
    return 0;
}
#endif

lineup_gpio *lineup_gpio_open(const lineup_line_spec *specs, size_t count, const char *consumer,
                              char *err, size_t err_len) {
    if (count > MAX_LINES) {
        fail(err, err_len, "%zu lines asked for; at most %d are supported", count, MAX_LINES);
        return NULL;
    }
    lineup_gpio *g = calloc(1, sizeof *g);
    if (!g) {
        fail(err, err_len, "out of memory");
        return NULL;
    }
#ifdef LINEUP_GPIOD_V2
    g->events = gpiod_edge_event_buffer_new(EVENT_BATCH);
    if (!g->events) {
        fail(err, err_len, "cannot make the edge event buffer: %s", strerror(errno));
        free(g);
        return NULL;
    }
#endif
    find_chips(g);
    for (size_t i = 0; i < count; i++) {
        char what[80], why[600];
        if (resolve(g, &specs[i], &g->lines[i], why, sizeof why) < 0) {
            fail(err, err_len, "%s: %s", spec_text(&specs[i], what, sizeof what), why);
            g->line_count = i;
            lineup_gpio_close(g);
            return NULL;
        }
        g->lines[i].output = specs[i].output;
        g->line_count = i + 1;
    }
    if (request_lines(g, specs, consumer, err, err_len) < 0) {
        lineup_gpio_close(g);
        return NULL;
    }
    return g;
}

void lineup_gpio_close(lineup_gpio *g) {
    if (!g) return;
#ifdef LINEUP_GPIOD_V1
    for (size_t i = 0; i < g->line_count; i++)
        if (g->lines[i].line && gpiod_line_is_requested(g->lines[i].line)) gpiod_line_release(g->lines[i].line);
#else
    for (size_t i = 0; i < g->request_count; i++)
        if (g->requests[i].request) gpiod_line_request_release(g->requests[i].request);
    if (g->events) gpiod_edge_event_buffer_free(g->events);
#endif
    for (size_t i = 0; i < g->chip_count; i++)
        if (g->chips[i].chip) gpiod_chip_close(g->chips[i].chip);
    free(g);
}

size_t lineup_gpio_fd_count(const lineup_gpio *g) { return g ? g->input_request_count : 0; }

int lineup_gpio_fd(const lineup_gpio *g, size_t index) {
    if (!g || index >= g->input_request_count) return -1;
    return g->requests[g->input_requests[index]].fd;
}

size_t lineup_gpio_fd_lines(const lineup_gpio *g, size_t fd_index, uint32_t *out, size_t max) {
    if (!g || fd_index >= g->input_request_count) return 0;
    const struct request_entry *r = &g->requests[g->input_requests[fd_index]];
    size_t n = 0;
    for (size_t k = 0; k < r->line_count && n < max; k++) out[n++] = (uint32_t)r->lines[k];
    return n;
}

/* A failed read's result: nothing waiting (the fd is non-blocking) is 0 edges, not an error. */
static int read_error(void) {
    int e = errno;
    return (e == EAGAIN || e == EWOULDBLOCK || e == EINTR) ? 0 : -(e ? e : EIO);
}

int lineup_gpio_read_edges(lineup_gpio *g, size_t fd_index, lineup_edge *out, size_t max) {
    if (!g || fd_index >= g->input_request_count) return -EINVAL;
    struct request_entry *r = &g->requests[g->input_requests[fd_index]];
    if (max > EVENT_BATCH) max = EVENT_BATCH;
#ifdef LINEUP_GPIOD_V1
    int n = gpiod_line_event_read_fd_multiple(r->fd, g->events, (unsigned int)max);
    if (n < 0) return read_error();
    for (int i = 0; i < n; i++) {
        out[i].timestamp_ns = (uint64_t)g->events[i].ts.tv_sec * 1000000000ull + (uint64_t)g->events[i].ts.tv_nsec;
        out[i].line = (uint32_t)r->lines[0];
        out[i].active = g->events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
    }
    return n;
#else
    int n = gpiod_line_request_read_edge_events(r->request, g->events, max);
    if (n < 0) return read_error();
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(g->events, (unsigned long)i);
        unsigned int offset = gpiod_edge_event_get_line_offset(e);
        size_t line = r->lines[0];
        for (size_t k = 0; k < r->line_count; k++)
            if (g->lines[r->lines[k]].offset == offset) line = r->lines[k];
        /* Sequence numbers run without gaps unless the kernel's buffer overflowed. */
        unsigned long seqno = gpiod_edge_event_get_line_seqno(e);
        struct line_entry *l = &g->lines[line];
        if (l->last_seqno && seqno > l->last_seqno + 1) g->dropped += seqno - l->last_seqno - 1;
        l->last_seqno = seqno;
        out[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(e);
        out[i].line = (uint32_t)line;
        out[i].active = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE;
    }
    return n;
#endif
}

uint64_t lineup_gpio_dropped(const lineup_gpio *g) { return g ? g->dropped : 0; }

int lineup_gpio_get(lineup_gpio *g, size_t line) {
    if (!g || line >= g->line_count) return -EINVAL;
#ifdef LINEUP_GPIOD_V1
    int v = gpiod_line_get_value(g->lines[line].line);
    return v < 0 ? -errno : v;
#else
    struct line_entry *l = &g->lines[line];
    enum gpiod_line_value v = gpiod_line_request_get_value(g->requests[l->request].request, l->offset);
    return v == GPIOD_LINE_VALUE_ERROR ? -errno : (v == GPIOD_LINE_VALUE_ACTIVE);
#endif
}

int lineup_gpio_set(lineup_gpio *g, size_t line, int active) {
    if (!g || line >= g->line_count || !g->lines[line].output) return -EINVAL;
#ifdef LINEUP_GPIOD_V1
    return gpiod_line_set_value(g->lines[line].line, active ? 1 : 0) < 0 ? -errno : 0;
#else
    struct line_entry *l = &g->lines[line];
    return gpiod_line_request_set_value(g->requests[l->request].request, l->offset,
                                        active ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) < 0
               ? -errno
               : 0;
#endif
}

void lineup_gpio_describe(const lineup_gpio *g, size_t line, char *out, size_t out_len) {
    if (!g || line >= g->line_count || out_len == 0) return;
    const struct line_entry *l = &g->lines[line];
    const struct chip_entry *c = &g->chips[l->chip];
    snprintf(out, out_len, "%s [%s] offset %u%s%s%s", c->path, c->label, l->offset, l->name[0] ? " (" : "",
             l->name, l->name[0] ? ")" : "");
}

int lineup_eventfd(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int lineup_ppoll(struct pollfd *fds, unsigned long count, int64_t timeout_ns) {
    if (timeout_ns < 0) return ppoll(fds, (nfds_t)count, NULL, NULL);
    struct timespec ts = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
    return ppoll(fds, (nfds_t)count, &ts, NULL);
}

/* ALSA's error handler (see the header). */
static __thread char alsa_last_error[256];
static uint64_t alsa_errors;

static void lineup_alsa_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file;
    (void)line;
    (void)function;
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(alsa_last_error, sizeof alsa_last_error, fmt, args);
    va_end(args);
    if (err && n >= 0 && (size_t)n < sizeof alsa_last_error - 4) {
        snprintf(alsa_last_error + n, sizeof alsa_last_error - (size_t)n, ": %s", snd_strerror(err));
    }
    __atomic_add_fetch(&alsa_errors, 1, __ATOMIC_RELAXED);
}

void lineup_alsa_keep_errors(void) { snd_lib_error_set_handler(lineup_alsa_error); }

void lineup_alsa_take_error(char *out, size_t out_len) {
    if (out_len == 0) return;
    snprintf(out, out_len, "%s", alsa_last_error);
    alsa_last_error[0] = 0;
}

uint64_t lineup_alsa_error_count(void) { return __atomic_load_n(&alsa_errors, __ATOMIC_RELAXED); }
