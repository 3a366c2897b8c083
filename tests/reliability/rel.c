// SPDX-License-Identifier: MIT
/* Helpers of the reliability tests. See rel.h. */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "rel.h"

long rel_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

int rel_count_maps(const char *needle)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

int rel_count_lib_maps(void)
{
	static const char *const needles[] = { "memfd:", "dmabuf", "udmabuf", "io_uring" };
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; i < sizeof(needles) / sizeof(needles[0]); i++)
			if (strstr(line, needles[i])) {
				n++;
				break;
			}
	fclose(f);
	return n;
}

void rel_dump_fds(const char *why)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return;
	fprintf(stderr, "  open fds (%s):\n", why);
	while ((de = readdir(d))) {
		char link[64], target[256];
		ssize_t l;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = atoi(de->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		l = readlink(link, target, sizeof(target) - 1);
		target[l > 0 ? l : 0] = 0;
		fprintf(stderr, "    %3d%s %s\n", fd, (fcntl(fd, F_GETFD) & FD_CLOEXEC) ? " cloexec" : "",
			target);
	}
	closedir(d);
}

/* ---- label, crash and hang reports ------------------------------------------------------- */
static char label[600];
static struct sigaction old_segv, old_bus, old_abrt;

void rel_set_label(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
}

static void say(const char *s)
{
	(void)!write(STDERR_FILENO, s, strlen(s));
}

static void crash_handler(int sig)
{
	say("\n*** fatal signal ");
	say(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : "SIGABRT");
	say(" during: ");
	say(label);
	say("\n");
	/* hand the signal on: the faulting instruction runs again, abort() raises again */
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGABRT, &old_abrt, NULL);
}

void rel_install_crash_label(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGABRT, &sa, &old_abrt);
}

static void alarm_handler(int sig)
{
	(void)sig;
	say("\n*** TIMEOUT: no progress (hang) during: ");
	say(label);
	say("\n");
	_exit(1);
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

void rel_watchdog(unsigned secs)
{
	static bool installed;

	if (env_on("DMAIO_TEST_VM") || env_on("DMAIO_TEST_QUICK"))
		secs *= 10;

	if (!installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = alarm_handler;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		installed = true;
	}
	alarm(secs);
}

/* ---- symbols ------------------------------------------------------------------------------ */
struct sym {
	uintptr_t addr;
	size_t size;
	const char *name;
};

static struct sym *syms;
static size_t nsyms;
static bool sym_tried;

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = (uintptr_t)info->dlpi_addr;
	return 1; /* the first object is the executable */
}

static void sym_load(void)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	uintptr_t bias = 0;
	struct stat st;
	const char *base;
	int fd;

	sym_tried = true;
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return;
	eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > (uint64_t)st.st_size)
		return;
	dl_iterate_phdr(bias_cb, &bias);
	sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *s;
		const char *str;
		size_t n;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		s = (const Elf64_Sym *)(base + sh[i].sh_offset);
		str = base + sh[sh[i].sh_link].sh_offset;
		n = sh[i].sh_size / sizeof(*s);
		syms = calloc(n, sizeof(*syms));
		if (!syms)
			return;
		for (size_t k = 0; k < n; k++) {
			if (ELF64_ST_TYPE(s[k].st_info) != STT_FUNC || !s[k].st_value)
				continue;
			syms[nsyms].addr = (uintptr_t)s[k].st_value + bias;
			syms[nsyms].size = s[k].st_size;
			syms[nsyms].name = str + s[k].st_name;
			nsyms++;
		}
		qsort(syms, nsyms, sizeof(*syms), sym_cmp);
		break;
	}
	/* the mapping stays: the names point into it */
}

const char *rel_sym(const void *addr, unsigned long *off)
{
	uintptr_t a = (uintptr_t)addr;
	size_t lo = 0, hi;

	if (!sym_tried)
		sym_load();
	hi = nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	if (syms[lo].size && a >= syms[lo].addr + syms[lo].size)
		return NULL;
	if (off)
		*off = (unsigned long)(a - syms[lo].addr);
	return syms[lo].name;
}
