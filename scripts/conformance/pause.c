/* The conformance suite's pause image: sleeps until SIGINT or SIGTERM and exits 0 then,
 * reaping any children it inherits as PID 1. Built static by scripts/conformance/images.sh. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {.sa_handler = on_stop};
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  if (sigaction(SIGINT, &stop, NULL) || sigaction(SIGTERM, &stop, NULL) ||
      sigaction(SIGCHLD, &child, NULL)) {
    return 1;
  }
  for (;;) {
    pause();
  }
}
