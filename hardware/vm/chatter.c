/*
 * chatter: a bouncing contact for the scripted dog (dog.sh), faster than a shell can be under
 * emulation. Writes "pull-down" then "pull-up" to a gpio-sim `pull` attribute N times, each
 * write US microseconds (CLOCK_MONOTONIC, absolute deadlines) after the one before, and prints
 * each write's CLOCK_MONOTONIC time in ns, one a line, for the dog's log.
 *
 *   chatter /sys/devices/platform/gpio-sim.0/gpiochip0/sim_gpio17/pull N US
 *
 * Built by hardware/vm/run.sh into .build-vm/ (never committed).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s PULL_ATTRIBUTE N US\n", argv[0]);
		return 64;
	}
	int fd = open(argv[1], O_WRONLY);
	if (fd < 0) { perror(argv[1]); return 1; }
	long n = strtol(argv[2], NULL, 10), us = strtol(argv[3], NULL, 10);
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (long i = 0; i < 2 * n; i++) {
		const char *v = (i % 2 == 0) ? "pull-down" : "pull-up";
		if (i > 0) {
			t.tv_nsec += us * 1000;
			while (t.tv_nsec >= 1000000000) { t.tv_nsec -= 1000000000; t.tv_sec++; }
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
		}
		if (lseek(fd, 0, SEEK_SET) < 0 || write(fd, v, (size_t)(i % 2 == 0 ? 9 : 7)) < 0) {
			perror("write");
			return 1;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		printf("%lld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
	}
	close(fd);
	return 0;
}
