/*
 * The pod sandbox's "pause" process for the test cluster (scripts/kube-up.sh): it holds the pod's
 * namespaces, reaps orphans, and exits on SIGINT/SIGTERM. No registry is reachable here to pull
 * registry.k8s.io/pause, so the cluster gets this one, built static and imported into containerd.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction term = {.sa_handler = stop};
  struct sigaction child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &term, NULL);
  sigaction(SIGTERM, &term, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}
