/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the reliability tests (tests/reliability): process accounting (fds, mappings,
 * RSS), a watchdog, the scenario label printed on a crash or a hang, and symbol names of code
 * addresses (read from the test's own ELF symbol table: the fault-injection library is linked
 * statically, so its internal functions are there too).
 */
#ifndef DMAIO_TEST_REL_H
#define DMAIO_TEST_REL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* VmRSS of the process in KiB, -1 if unknown. */
long rel_rss_kib(void);

/* Lines of /proc/self/maps whose text contains @needle. */
int rel_count_maps(const char *needle);

/* Mappings the library may create: memfd, dma-buf, udmabuf and io_uring regions. */
int rel_count_lib_maps(void);

/* Print the open fds (number, flags, link target) to stderr, one line each. */
void rel_dump_fds(const char *why);

/*
 * The current scenario, printed to stderr when the process gets SIGSEGV/SIGBUS/SIGABRT (then the
 * signal goes on to the previous handler: a sanitizer's, or the default action) or when the
 * watchdog fires (then the process exits 1).
 */
void rel_set_label(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rel_install_crash_label(void);
/*
 * Arm (secs > 0) or disarm (0) a SIGALRM watchdog: a hang is a failure. @secs is for the host;
 * it is multiplied by 10 in the test VM (DMAIO_TEST_VM=1: an emulated CPU) and under
 * DMAIO_TEST_QUICK=1 (valgrind, sanitizers).
 */
void rel_watchdog(unsigned secs);

/*
 * A hang's report where no debugger is (the test VM): print to stderr, for every thread of
 * process @pid, its name, the kernel function it sleeps in (/proc wchan), its system call with
 * its arguments (/proc syscall) and its kernel stack (/proc stack, root only).
 */
void rel_dump_task_waits(int pid);

/* Print the threads of process @pid to stderr, one line each: tid and name. */
void rel_list_tasks(int pid);

/* Print the executable mappings of process @pid to stderr (for the addresses of a stack). */
void rel_dump_code_maps(int pid);

/*
 * Make @sig print the stack of the thread it interrupts to stderr: its return addresses
 * (with rel_dump_code_maps' lines, an address's object and offset, for addr2line). Installed in a process that may hang, the signal sent by the one that watches it.
 */
void rel_install_stack_dump(int sig);

/* Symbol of a code address of this executable: the name, or NULL; *@off gets the offset. */
const char *rel_sym(const void *addr, unsigned long *off);

#endif
