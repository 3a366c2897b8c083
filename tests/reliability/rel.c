// SPDX-License-Identifier: MIT
/* Helpers of the reliability tests. See rel.h. */
#include <elf.h>
#include <execinfo.h>
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

/* ---- hang reports ------------------------------------------------------------------------ */
static void print_file(const char *path, const char *prefix)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "%s%s%s", prefix, line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

/* The executable mappings of process @pid (at most @max), for the stack scan. */
struct code_map {
	uintptr_t lo, hi, off;
	char name[160];
};

static size_t code_maps(int pid, struct code_map *m, size_t max)
{
	char path[64], line[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char perms[8], name[160] = "";

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %159s", &m[n].lo, &m[n].hi, perms,
			   &m[n].off, name) >= 4 && perms[2] == 'x') {
			const char *base = strrchr(name, '/');

			snprintf(m[n].name, sizeof(m[n].name), "%s", base ? base + 1 : name);
			n++;
		}
	}
	fclose(f);
	return n;
}

/*
 * A thread in a system call, from /proc/PID/task/TID/syscall (number, six arguments, stack
 * pointer, program counter): for futex(2), the word at its address and, when the word is a
 * pthread mutex's, the thread that owned it (glibc: __lock, __count, __owner); then a scan of
 * its stack for words that point into code, each as object+offset of the file (for addr2line):
 * a stack without an unwinder (the test VM has no libgcc_s), with stale frames among the live
 * ones, innermost first. Memory read from /proc/PID/mem (root, or the same user).
 */
static void print_syscall_view(int pid, const char *syscall_path)
{
	unsigned long nr, a[6], sp, pc;
	struct code_map maps[64];
	char path[64];
	size_t nmaps, shown = 0;
	FILE *f = fopen(syscall_path, "re");
	int fd, ok;

	if (!f)
		return;
	ok = fscanf(f, "%lu %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2], &a[3],
		    &a[4], &a[5], &sp, &pc) == 9;
	fclose(f);
	if (!ok)
		return;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (nr == 202) {
		int32_t w[3];

		if (pread(fd, w, sizeof(w), (off_t)a[0]) == (ssize_t)sizeof(w))
			fprintf(stderr, "    futex word %d; as a pthread mutex: owner tid %d\n", w[0],
				w[2]);
	}
	nmaps = code_maps(pid, maps, sizeof(maps) / sizeof(maps[0]));
	fprintf(stderr, "    stack scan (code addresses above sp 0x%lx):", sp);
	for (unsigned long at = sp & ~7ul; at < sp + 65536 && shown < 40; at += 4096) {
		uintptr_t words[512];
		ssize_t got = pread(fd, words, sizeof(words), (off_t)at);

		if (got <= 0)
			break;
		for (size_t i = 0; i < (size_t)got / sizeof(words[0]) && shown < 40; i++)
			for (size_t k = 0; k < nmaps; k++)
				if (words[i] >= maps[k].lo && words[i] < maps[k].hi) {
					fprintf(stderr, "%s %s+0x%lx", shown % 4 ? "" : "\n     ",
						maps[k].name,
						(unsigned long)(words[i] - maps[k].lo + maps[k].off));
					shown++;
					break;
				}
	}
	fprintf(stderr, "\n");
	close(fd);
}

/* Each thread of process @pid: its tid and name on one line, or (@waits) where it waits */
static void each_task(int pid, bool waits)
{
	char dir[64], path[384];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "  (no %s)\n", dir);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
		if (!waits) {
			char head[300];

			snprintf(head, sizeof(head), "    tid %s ", de->d_name);
			print_file(path, head);
			continue;
		}
		fprintf(stderr, "  thread %s:\n", de->d_name);
		print_file(path, "    comm: ");
		snprintf(path, sizeof(path), "%s/%s/wchan", dir, de->d_name);
		print_file(path, "    wchan: ");
		snprintf(path, sizeof(path), "%s/%s/syscall", dir, de->d_name);
		print_file(path, "    syscall: ");
		print_syscall_view(pid, path);
		snprintf(path, sizeof(path), "%s/%s/stack", dir, de->d_name);
		print_file(path, "    ");
	}
	closedir(d);
}

void rel_dump_task_waits(int pid)
{
	each_task(pid, true);
}

void rel_list_tasks(int pid)
{
	each_task(pid, false);
}

void rel_dump_code_maps(int pid)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%*s %7s", perms) == 1 && perms[2] == 'x')
			fprintf(stderr, "    %s", line);
	}
	fclose(f);
}

/* async-signal-safe: write(2) only, the unwinder loaded before (rel_install_stack_dump) */
static void say_hex(uintptr_t v)
{
	char b[2 + 16 + 1];
	int i = (int)sizeof(b);

	b[--i] = ' ';
	do {
		b[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v && i > 2);
	b[--i] = 'x';
	b[--i] = '0';
	(void)!write(STDERR_FILENO, b + i, sizeof(b) - (size_t)i);
}

static void stack_handler(int sig)
{
	void *pc[48];
	int n = backtrace(pc, 48);

	(void)sig;
	if (n <= 1) {
		say("  (no unwinder here for the signalled thread's stack: see the stack scan)\n");
		return;
	}
	say("  stack of the signalled thread (return addresses; the code maps follow):\n    ");
	for (int i = 1; i < n; i++)
		say_hex((uintptr_t)pc[i]);
	say("\n");
}

void rel_install_stack_dump(int sig)
{
	struct sigaction sa;
	void *warm[2];

	backtrace(warm, 2); /* loads the unwinder now, not in the handler */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stack_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
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
