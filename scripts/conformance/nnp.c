/* The nonewprivs test image's program: installed setuid root, it prints the effective uid,
 * which is 0 only when the container may gain privileges (allowPrivilegeEscalation). */
#include <stdio.h>
#include <unistd.h>

int main(void) {
  printf("Effective uid: %d\n", (int)geteuid());
  return 0;
}
