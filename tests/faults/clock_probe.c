/* Test helper: prints every clock the clock shim may touch, one per line as
 * "<name> <nanoseconds since that clock's epoch>". */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static int64_t ns_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  printf("realtime %lld\n", (long long)ns_of(CLOCK_REALTIME));
  printf("realtime_coarse %lld\n", (long long)ns_of(CLOCK_REALTIME_COARSE));
  printf("gettimeofday %lld\n", (long long)tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL);
  printf("time %lld\n", (long long)time(NULL) * 1000000000LL);
  printf("monotonic %lld\n", (long long)ns_of(CLOCK_MONOTONIC));
  return 0;
}
