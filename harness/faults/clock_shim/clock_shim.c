/* An LD_PRELOAD library that moves a process's wall clock by an offset the
 * lab controls, for redis-server and any other child (libfaketime hangs
 * Debian's redis-server: its dlsym allocates, jemalloc asks the time, and the
 * lookup recurses).
 *
 * Overrides clock_gettime (CLOCK_REALTIME, CLOCK_REALTIME_COARSE; every other
 * clock passes through unchanged), gettimeofday and time. The real clock is
 * read with the raw syscall, so nothing here allocates or looks symbols up.
 *
 * The offset is one int64 (ns, native byte order) at the start of the file
 * named by LOCKLAB_CLOCK_FILE, mapped shared: the lab writes it, every call
 * here reads it, so a jump takes effect at the next reading. No variable, no
 * file, or a file shorter than 8 bytes means offset 0.
 *
 * On a run's virtual time (harness/core/virtual_time.h), LOCKLAB_VIRTUAL_CLOCK_FILE
 * names one more such word, the run's wall time (ns since the epoch), which
 * the lab moves when its clock advances: the readings here are then that
 * word plus the offset, and stand still between two advances. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { UNMAPPED, MAPPING, MAPPED };

static int map_state = UNMAPPED;
static const int64_t* offset_word = NULL;
static const int64_t* virtual_wall_word = NULL;

/* The first int64 of the file named by `variable`, mapped shared, or NULL. */
static const int64_t* map_word(const char* variable) {
  const char* path = getenv(variable);
  if (!path || !*path) return NULL;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  const int64_t* word = NULL;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(int64_t)) {
    void* p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) word = p;
  }
  close(fd);
  return word;
}

static void map_offset_file(void) {
  offset_word = map_word("LOCKLAB_CLOCK_FILE");
  virtual_wall_word = map_word("LOCKLAB_VIRTUAL_CLOCK_FILE");
}

/* The first caller maps the file; a thread that asks while another is mapping
 * sees offset 0 for that one reading rather than waiting inside a clock call. */
static int64_t offset_ns(void) {
  int state = __atomic_load_n(&map_state, __ATOMIC_ACQUIRE);
  if (state == UNMAPPED) {
    int expected = UNMAPPED;
    if (__atomic_compare_exchange_n(&map_state, &expected, MAPPING, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      map_offset_file();
      __atomic_store_n(&map_state, MAPPED, __ATOMIC_RELEASE);
      state = MAPPED;
    }
  }
  if (state != MAPPED || !offset_word) return 0;
  return __atomic_load_n(offset_word, __ATOMIC_RELAXED);
}

/* The run's virtual wall time, or -1 off virtual time. Read after offset_ns(),
 * which maps both words. */
static int64_t virtual_wall_ns(void) {
  if (__atomic_load_n(&map_state, __ATOMIC_ACQUIRE) != MAPPED || !virtual_wall_word) return -1;
  return __atomic_load_n(virtual_wall_word, __ATOMIC_ACQUIRE);
}

static void add_offset(struct timespec* ts) {
  const int64_t offset = offset_ns();
  const int64_t virtual_wall = virtual_wall_ns();
  int64_t ns = virtual_wall >= 0 ? virtual_wall + offset
                                 : (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + offset;
  int64_t sec = ns / 1000000000;
  int64_t rem = ns % 1000000000;
  if (rem < 0) {
    rem += 1000000000;
    sec -= 1;
  }
  ts->tv_sec = (time_t)sec;
  ts->tv_nsec = (long)rem;
}

static int real_clock_gettime(clockid_t clock, struct timespec* ts) {
  return (int)syscall(SYS_clock_gettime, clock, ts);
}

__attribute__((constructor)) static void map_at_load(void) {
  (void)offset_ns();
}

int clock_gettime(clockid_t clock, struct timespec* ts) {
  int rc = real_clock_gettime(clock, ts);
  if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) add_offset(ts);
  return rc;
}

int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  if (tz) {
    struct timezone* zone = tz;
    zone->tz_minuteswest = 0;
    zone->tz_dsttime = 0;
  }
  struct timespec ts;
  int rc = real_clock_gettime(CLOCK_REALTIME, &ts);
  if (rc != 0) return rc;
  add_offset(&ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t* out) {
  struct timespec ts;
  if (real_clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  add_offset(&ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
