/* SPDX-License-Identifier: MIT */
/* Fault injection at the syscall seam (sysio.c). Compiled in only with -DDMAIO_FAULT_INJECTION
 * (the meson option fault_injection builds a separate static library for tests). Each guarded
 * call increments a counter; the call whose number equals dmaio_fault_nth fails with
 * dmaio_fault_err (a positive errno), or, for data calls with dmaio_fault_err == 0, moves only
 * half of what it was asked (a short count). */
#ifndef DMAIO_FAULT_H
#define DMAIO_FAULT_H

#ifdef DMAIO_FAULT_INJECTION
#include <errno.h>
extern unsigned long dmaio_fault_calls; /* calls seen so far */
extern unsigned long dmaio_fault_nth;   /* 0: never fail */
extern int dmaio_fault_err;             /* errno to inject, 0: short count */
int dmaio_fault_hit(void);
#define FAULT_HIT() dmaio_fault_hit()
static inline int fault_errno(void)
{
	return dmaio_fault_err ? dmaio_fault_err : EIO;
}
static inline int fault_short_or_errno(int res)
{
	return dmaio_fault_err ? -dmaio_fault_err : (res > 1 ? res / 2 : res);
}
#define FAULT_CALL()                                                                              \
	do {                                                                                      \
		if (dmaio_fault_hit()) {                                                          \
			errno = fault_errno();                                                    \
			return -1;                                                                \
		}                                                                                 \
	} while (0)
/* data calls: an errno, or a short count (n halved, at least 1) */
#define FAULT_RW(n)                                                                               \
	do {                                                                                      \
		if (dmaio_fault_hit()) {                                                          \
			if (dmaio_fault_err) {                                                    \
				errno = dmaio_fault_err;                                          \
				return -1;                                                        \
			}                                                                         \
			if ((n) > 1)                                                              \
				(n) /= 2;                                                         \
		}                                                                                 \
	} while (0)
#else
#define FAULT_HIT() 0
#define FAULT_CALL() do { } while (0)
#define FAULT_RW(n) do { } while (0)
static inline int fault_errno(void) { return 5; }
static inline int fault_short_or_errno(int res) { return res; }
#endif

#endif
