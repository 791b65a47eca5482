/* A stand-in for busybox's `nmeter` applet, for the busybox test image: Debian's busybox
 * has no such applet, and the node e2e suite's container lifecycle tests time each step
 * with `nmeter -d0 '%3t' | head -n1`. Only what the tests use is here: the time item
 * `%[N]t` (local hh:mm:ss, then N digits of the second's fraction when N > 0), `%%`,
 * literal text, and -d MSEC between lines (0: no pause). A line per interval, until the
 * reader goes away. Any other item is refused by name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void usage(void) {
  fputs("usage: nmeter [-d MSEC] FORMAT (this stand-in knows only %[N]t and %%)\n",
        stderr);
  exit(1);
}

/* Appends the time item with `digits` fraction digits (at most 6). */
static int put_time(char *out, size_t size, int digits) {
  struct timeval tv;
  struct tm tm;
  gettimeofday(&tv, NULL);
  localtime_r(&tv.tv_sec, &tm);
  int n = snprintf(out, size, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (digits > 0) {
    char frac[8];
    snprintf(frac, sizeof frac, "%06ld", (long)tv.tv_usec);
    frac[digits > 6 ? 6 : digits] = '\0';
    n += snprintf(out + n, size - n, ".%s", frac);
  }
  return n;
}

/* Checks the format once, so a wrong item fails before any output. */
static void check_format(const char *f) {
  for (; *f; f++) {
    if (*f != '%') continue;
    f++;
    while (*f >= '0' && *f <= '9') f++;
    if (*f != 't' && *f != '%') {
      fprintf(stderr, "nmeter: unsupported item %%%c in the format\n", *f ? *f : ' ');
      usage();
    }
  }
}

int main(int argc, char **argv) {
  long delay_ms = 1000;
  int opt;
  while ((opt = getopt(argc, argv, "d:")) != -1) {
    if (opt != 'd') usage();
    char *end;
    errno = 0;
    delay_ms = strtol(optarg, &end, 10);
    if (errno || *end || delay_ms < 0) {
      fprintf(stderr, "nmeter: -d %s: use a whole number of milliseconds\n", optarg);
      usage();
    }
  }
  if (optind != argc - 1) usage();
  const char *format = argv[optind];
  check_format(format);
  for (;;) {
    char line[4096];
    size_t n = 0;
    for (const char *f = format; *f && n < sizeof line - 32; f++) {
      if (*f != '%') {
        line[n++] = *f;
        continue;
      }
      f++;
      int digits = 0;
      while (*f >= '0' && *f <= '9') digits = digits * 10 + (*f++ - '0');
      if (*f == '%') line[n++] = '%';
      else n += put_time(line + n, sizeof line - n, digits);
    }
    line[n++] = '\n';
    if (write(1, line, n) != (ssize_t)n) return 0; /* the reader is gone */
    if (delay_ms > 0) usleep((useconds_t)delay_ms * 1000);
  }
}
