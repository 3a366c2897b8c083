/* SPDX-License-Identifier: MIT */
/* Counters of the fault-injection build (see fault.h). */
#include "fault.h"

unsigned long dmaio_fault_calls;
unsigned long dmaio_fault_nth;
int dmaio_fault_err;

int dmaio_fault_hit(void)
{
	unsigned long n = __atomic_add_fetch(&dmaio_fault_calls, 1, __ATOMIC_RELAXED);

	return dmaio_fault_nth && n == dmaio_fault_nth;
}
