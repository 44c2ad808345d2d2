// http_load — a loopback HTTP/1.1 load of known rate for a service under
// `pageblame record` (tests/attach_service.sh, bench/service_overhead.sh):
// GET PATH at RATE requests per second over CONNECTIONS keep-alive
// connections for SECONDS, each request sent on its schedule (or at once when
// behind: then the service is the limit), its latency measured from its
// send to the end of its answer.
//
//   http_load PORT PATH RATE SECONDS [CONNECTIONS]
//
// Prints one line: "requests N errors E rate R p50_us X p99_us Y max_us Z".
// Exit status: 0 if every request got a 200 answer, 1 otherwise, 2 usage.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void SleepUntil(double t) {
  double left = t - Now();
  if (left <= 0) return;
  struct timespec ts = {(time_t)left, (long)((left - (time_t)left) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

static int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, (struct sockaddr*)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The answer being read, and how much of it is there.
struct Answer {
  char buf[65536];
  size_t have;
};

// Reads more of the answer; 0 when the connection failed or the buffer is full.
static int ReadMore(int fd, struct Answer* a) {
  if (a->have == sizeof a->buf - 1) return 0;
  ssize_t n = read(fd, a->buf + a->have, sizeof a->buf - 1 - a->have);
  if (n <= 0) return 0;
  a->have += (size_t)n;
  a->buf[a->have] = '\0';
  return 1;
}

// Reads a chunked body from `at` to its last chunk; 0 if the connection failed.
static int ReadChunks(int fd, struct Answer* a, size_t at) {
  for (;;) {
    char* line_end;
    while ((line_end = strstr(a->buf + at, "\r\n")) == NULL) {
      if (!ReadMore(fd, a)) return 0;
    }
    const long size = strtol(a->buf + at, NULL, 16);
    if (size < 0) return 0;
    const size_t next = (size_t)(line_end + 2 - a->buf) + (size_t)size + 2;  // its data and CRLF
    while (a->have < next) {
      if (!ReadMore(fd, a)) return 0;
    }
    if (size == 0) return 1;  // (no trailers: the CRLF after "0" ends it)
    at = next;
  }
}

// Reads one answer (headers, then a Content-Length or chunked body); 1 for a
// 200, 0 for another status, -1 if the connection failed.
static int ReadAnswer(int fd) {
  static struct Answer a;
  a.have = 0;
  a.buf[0] = '\0';
  char* end;
  while ((end = strstr(a.buf, "\r\n\r\n")) == NULL) {
    if (!ReadMore(fd, &a)) return -1;
  }
  const size_t head = (size_t)(end + 4 - a.buf);
  *end = '\0';  // the headers alone, for the searches below
  const int chunked = strcasestr(a.buf, "\r\ntransfer-encoding: chunked") != NULL;
  const char* cl = strcasestr(a.buf, "\r\ncontent-length:");
  const long body = cl != NULL ? strtol(cl + 17, NULL, 10) : 0;
  const int ok = strncmp(a.buf, "HTTP/1.1 200", 12) == 0;
  *end = '\r';
  if (chunked) return ReadChunks(fd, &a, head) ? ok : -1;
  if (body < 0 || (size_t)body > sizeof a.buf - 1 - head) return -1;
  while (a.have < head + (size_t)body) {
    if (!ReadMore(fd, &a)) return -1;
  }
  return ok;
}

static int CompareDouble(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc < 5 || argc > 6) {
    fprintf(stderr, "usage: http_load PORT PATH RATE SECONDS [CONNECTIONS]\n");
    return 2;
  }
  const int port = atoi(argv[1]);
  const char* path = argv[2];
  const double rate = atof(argv[3]), seconds = atof(argv[4]);
  const int conns = argc == 6 ? atoi(argv[5]) : 1;
  if (port <= 0 || rate <= 0 || seconds <= 0 || conns <= 0 || conns > 64) {
    fprintf(stderr, "http_load: bad arguments\n");
    return 2;
  }
  int fds[64];
  for (int i = 0; i < conns; ++i) {
    if ((fds[i] = Connect(port)) < 0) {
      fprintf(stderr, "http_load: cannot connect to 127.0.0.1:%d: %s\n", port, strerror(errno));
      return 1;
    }
  }
  char request[1024];
  const int len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
  const size_t total = (size_t)(rate * seconds);
  double* latency = calloc(total > 0 ? total : 1, sizeof(double));
  size_t done = 0, errors = 0;
  const double start = Now();
  // One request at a time per connection, round robin: a closed loop per
  // connection, paced by the schedule.
  for (size_t i = 0; i < total; ++i) {
    SleepUntil(start + i / rate);
    int fd = fds[i % (size_t)conns];
    const double sent = Now();
    int ok = write(fd, request, (size_t)len) == len ? ReadAnswer(fd) : -1;
    latency[done++] = (Now() - sent) * 1e6;
    if (ok != 1) ++errors;
    if (ok < 0) {
      close(fd);
      fds[i % (size_t)conns] = Connect(port);
      if (fds[i % (size_t)conns] < 0) break;
    }
  }
  const double took = Now() - start;
  qsort(latency, done, sizeof(double), CompareDouble);
  double p50 = done ? latency[done / 2] : 0, p99 = done ? latency[(size_t)(done * 0.99)] : 0;
  double max = done ? latency[done - 1] : 0;
  printf("requests %zu errors %zu rate %.1f p50_us %.0f p99_us %.0f max_us %.0f\n", done, errors,
         took > 0 ? done / took : 0, p50, p99, max);
  free(latency);
  return errors == 0 && done == total ? 0 : 1;
}
