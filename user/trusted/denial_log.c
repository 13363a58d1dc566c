/* B explains and counts refusals (docs/design/trusted-process.md, "--log=denials").
 * Every refusal reaches B: the paths B refuses itself, and those the
 * entry or T's rules make, which U's entry reports (SANDPIT_NR_DENIED).
 * What decided comes from the model (policy/explain.c), the caller from
 * /proc/P/maps and the module's dynamic symbols, read from its file with
 * user/patch/elf_read.c: nothing here is read from U but the report's values.
 * A leaf of B: it calls nothing of B's other files, which hand it the
 * configuration and, at the end, which slots ran. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <Zydis/Zydis.h>
#include <seccomp.h>

#include "policy/policy.h"
#include "user/layout/denial_report.h"
#include "user/trusted/denial_log.h"
#include "user/patch/elf_read.h"
#include "user/untrusted/runtime.h"

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static struct denial_report report;

/* ---- the call, decoded ---- */

static void put_open_flags(FILE *f, long flags)
{
	static const struct { long bit; const char *name; } fl[] = {
		{ O_CREAT, "O_CREAT" }, { O_EXCL, "O_EXCL" }, { O_NOCTTY, "O_NOCTTY" },
		{ O_TRUNC, "O_TRUNC" }, { O_APPEND, "O_APPEND" }, { O_NONBLOCK, "O_NONBLOCK" },
		{ O_DIRECTORY, "O_DIRECTORY" }, { O_NOFOLLOW, "O_NOFOLLOW" }, { O_CLOEXEC, "O_CLOEXEC" },
		{ O_PATH, "O_PATH" }, { __O_TMPFILE, "O_TMPFILE" },
	};
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE" };
	fputs(acc[flags & O_ACCMODE], f);
	flags &= ~(long)O_ACCMODE;
	for (size_t i = 0; i < sizeof(fl) / sizeof(fl[0]); i++)
		if ((flags & fl[i].bit) == fl[i].bit) {
			fprintf(f, "|%s", fl[i].name);
			flags &= ~fl[i].bit;
		}
	if (flags)
		fprintf(f, "|%#lo", flags);
}

/* U chose the path: no byte of it reaches the terminal unescaped (and in
 * JSON, nothing but printable ASCII and escapes) */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	put_escaped(f, s);
	fputc('"', f);
}

/* Argument i as text: the path B checked, names for AT_FDCWD and open
 * flags, else the number. */
static void put_arg(FILE *f, const struct denial *d, int i)
{
	const struct policy_proc_arg *pa = d->pa;
	long v = (long)d->args[i];
	if (pa && i == pa->path_arg && d->path)
		put_quoted(f, d->path);
	else if (pa && i == pa->dirfd_arg && (int)v == AT_FDCWD)
		fputs("AT_FDCWD", f);
	else if (pa && i == pa->flags_arg && pa->access == PA_OPEN)
		put_open_flags(f, v);
	else if (pa && i == pa->flags_arg + 1 && pa->access == PA_OPEN)
		fprintf(f, "%#lo", v);
	else if (v > -4096 && v < 4096)
		fprintf(f, "%ld", v);
	else
		fprintf(f, "%#lx", (unsigned long)v);
}

static int nargs(const struct denial *d)
{
	const struct syscall_kinds *k = syscall_kinds(d->nr);
	int n = 0;
	for (int i = 0; k && i < 6; i++)
		if (k->arg[i] != SK_NONE)
			n = i + 1;
	if (d->pa && d->pa->access == PA_OPEN && d->pa->flags_arg + 2 > n)
		n = d->pa->flags_arg + 2;
	return k ? n : 6;
}

/* ---- the caller ---- */

struct caller {
	char module[PATH_MAX]; /* "" if unknown */
	uint64_t offset;       /* from the module's load address (its link address) */
	char symbol[128];      /* "name+0x12", "" if none */
};

/* The mapping of P that holds a: its path ("" for anonymous memory), the
 * address of its file's first mapping (offset 0) and its start/offset. */
static int find_mapping(pid_t pid, uint64_t a, char *path, size_t n, uint64_t *base)
{
	char name[64];
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return -errno;
	char line[PATH_MAX + 128];
	uint64_t first = 0;
	char first_path[PATH_MAX] = "";
	int found = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		int at = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s%n", &lo, &hi, &off, &at) < 3)
			continue;
		char *p = line + at;
		while (*p == ' ')
			p++;
		p[strcspn(p, "\n")] = 0;
		if (off == 0 && *p == '/') {
			first = lo;
			snprintf(first_path, sizeof(first_path), "%s", p);
		}
		if (a >= lo && a < hi) {
			snprintf(path, n, "%s", *p == '/' ? p : "");
			*base = *p == '/' && !strcmp(first_path, p) ? first : lo - off;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

/* A trampoline (anonymous memory sandpit wrote) ends with a jmp back to
 * the patched site: the address after it is where the call returns to. */
static uint64_t through_trampoline(pid_t pid, uint64_t a)
{
	uint8_t code[96];
	struct iovec local = { code, sizeof(code) }, remote = { (void *)(uintptr_t)a, sizeof(code) };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got <= 0)
		return 0;
	ZydisDecoder dec;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (size_t at = 0; at < (size_t)got;) {
		ZydisDecodedInstruction in;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, code + at,
								(size_t)got - at, &in)))
			return 0;
		if (in.mnemonic == ZYDIS_MNEMONIC_JMP && in.raw.imm[0].is_relative)
			return a + at + in.length + (uint64_t)in.raw.imm[0].value.s;
		if (in.meta.branch_type != ZYDIS_BRANCH_TYPE_NONE)
			return 0; /* not a trampoline's straight line */
		at += in.length;
	}
	return 0;
}

/* The function covering link address `off` in the module's dynamic
 * symbols, read from its file (never from P) through elf_read.c. */
static void symbol_of(const char *path, uint64_t off, char *out, size_t n)
{
	out[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr) ||
	    st.st_size > (off_t)1 << 30) {
		close(fd);
		return;
	}
	size_t len = (size_t)st.st_size;
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	struct elf_view v;
	uintptr_t phdr, m = (uintptr_t)map;
	unsigned phnum;
	elf_view_init(&v, map, len);
	Elf64_Phdr ph, load = { 0 }, dyn = { 0 };
	int have_load = 0;
	if (elf_mapped_phdrs(&v, m, &phdr, &phnum))
		for (unsigned i = 0; i < phnum && elf_view_get(&v, phdr + i * sizeof(ph), &ph, sizeof(ph));
		     i++) {
			if (ph.p_type == PT_LOAD && !have_load) {
				load = ph;
				have_load = 1;
			}
			if (ph.p_type == PT_DYNAMIC)
				dyn = ph;
		}
	/* the file's bytes at link address x: map + x - (first segment's vaddr -
	 * offset), right for the first segment, where the tables lie */
	struct elf_symtab s;
	uintptr_t bias = m - (uintptr_t)(load.p_vaddr - load.p_offset), lo;
	const char *name;
	if (have_load && dyn.p_filesz && dyn.p_offset < len &&
	    elf_symtab_init(&s, &v, m + dyn.p_offset, dyn.p_filesz, bias) == 0 &&
	    elf_sym_name(&s, bias + off, &lo, &name))
		snprintf(out, n, "%.100s+%#" PRIxPTR, name, bias + off - lo);
	munmap(map, len);
}

static void find_caller(pid_t pid, uint64_t a, struct caller *c)
{
	uint64_t base;
	c->module[0] = c->symbol[0] = 0;
	c->offset = 0;
	if (!a || find_mapping(pid, a, c->module, sizeof(c->module), &base) < 0)
		return;
	if (!c->module[0]) {
		uint64_t site = through_trampoline(pid, a);
		if (!site || find_mapping(pid, site, c->module, sizeof(c->module), &base) < 0 ||
		    !c->module[0])
			return;
		a = site;
	}
	/* ET_EXEC is linked where it runs: its offsets are its addresses */
	Elf64_Ehdr eh;
	int fd = open(c->module, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int exec = fd >= 0 && pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
		   eh.e_type == ET_EXEC;
	if (fd >= 0)
		close(fd);
	c->offset = exec ? a : a - base;
	symbol_of(c->module, c->offset, c->symbol, sizeof(c->symbol));
}

/* ---- the line ---- */

static const char *reason_of(const struct denial *d, char *buf, size_t n)
{
	if (d->deny) {
		snprintf(buf, n, "path deny %s", d->deny);
		return buf;
	}
	if (d->why)
		return d->why;
	if (!d->pa)
		return d->rule >= 0 ? "argument rule" : "";
	return d->access == PA_NEVER ? "never allowed"
	       : d->access == PA_WRITE ? "no write grant"
				       : "no read grant";
}

static void put_json_str(FILE *f, const char *key, const char *v, int comma)
{
	fprintf(f, "%s\"%s\":", comma ? "," : "", key);
	put_quoted(f, v);
}

static void write_line(const struct trusted_process_config *cfg, const struct denial *d,
		       const char *name, const char *call, const struct policy_why *w,
		       const struct caller *c, const char *allow)
{
	const char *err = strerrorname_np((int)-d->result);
	const char *base = strrchr(c->module, '/');
	char rbuf[PATH_MAX + 16], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	if (cfg->log_json) {
		fprintf(f, "{\"sandpit\":\"%s\",\"pid\":%d", d->killed ? "killed" : "denied",
			(int)d->pid);
		put_json_str(f, "call", name, 1);
		fprintf(f, ",\"nr\":%d,\"args\":[", d->nr);
		for (int i = 0, n = nargs(d); i < n; i++) {
			char *a = NULL;
			size_t al = 0;
			FILE *af = open_memstream(&a, &al);
			if (af) {
				put_arg(af, d, i);
				fclose(af);
			}
			if (i)
				fputc(',', f);
			put_quoted(f, a ? a : "");
			free(a);
		}
		fprintf(f, "],\"result\":%ld", d->result);
		put_json_str(f, "errno", err ? err : "", 1);
		put_json_str(f, "decided", w->decided, 1);
		put_json_str(f, "builtin", w->builtin, 1);
		fprintf(f, ",\"rule\":%d", d->rule);
		put_json_str(f, "reason", reason_of(d, rbuf, sizeof(rbuf)), 1);
		put_json_str(f, "path", d->resolved ? d->resolved : "", 1);
		put_json_str(f, "module", c->module, 1);
		fprintf(f, ",\"offset\":\"%#" PRIx64 "\"", c->offset);
		put_json_str(f, "symbol", c->symbol, 1);
		put_json_str(f, "allow", allow, 1);
		fputs("}\n", f);
	} else {
		const char *reason = reason_of(d, rbuf, sizeof(rbuf));
		if (d->killed)
			fprintf(f, "sandpit: killed %s, system call %d; by %s", call, d->nr, w->decided);
		else
			fprintf(f, "sandpit: denied %s = -%s; by %s", call, err ? err : "?",
				w->decided);
		if (w->builtin[0])
			fprintf(f, " (%s)", w->builtin);
		/* a reason may hold the program's bytes (an AF_UNIX name) */
		if (*reason && strncmp(w->decided, "guard:", 6)) {
			fputs(": ", f);
			put_escaped(f, reason);
		}
		if (c->module[0]) {
			fprintf(f, "; from %s+%#" PRIx64, base ? base + 1 : c->module, c->offset);
			if (c->symbol[0])
				fprintf(f, " (%s)", c->symbol);
		}
		if (*allow) {
			fputs("; allow with ", f);
			put_escaped(f, allow);
		}
		fputc('\n', f);
	}
	fclose(f);
	ssize_t wr = buf ? write(2, buf, len) : 0;
	(void)wr;
	free(buf);
}

void denial_note(const struct trusted_process_config *cfg, const struct denial *d)
{
	if (!cfg->log && cfg->report_fd < 0 && !d->killed)
		return;
	struct policy_why w;
	policy_explain(cfg->policy, d->nr, d->rule, &w);
	const struct policy_call *pc = policy_call(cfg->policy, d->nr);
	if (d->killed && !pc->mentioned && pc->file) /* which default */
		snprintf(w.decided, sizeof(w.decided), "not in the policy: default (%s:%d)",
			 pc->file, pc->line);
	char allow[sizeof(report.last.allow)] = "";
	/* a deny wins over every grant; what B refused for its own reason
	 * (why), no grant would allow */
	if (d->pa && d->resolved && !d->deny && !d->why)
		policy_grant_hint(d->resolved, d->access, allow, sizeof(allow));
	else if (d->allow)
		snprintf(allow, sizeof(allow), "%s", d->allow);
	else if (d->nr == SYS_socket && d->result == -EAFNOSUPPORT &&
		 (d->args[0] == AF_INET || d->args[0] == AF_INET6))
		snprintf(allow, sizeof(allow), "--allow-connect=ADDR:PORT"); /* no network */

	char *sys = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, d->nr);
	char name[64], call[sizeof(report.last.call)];
	if (sys)
		snprintf(name, sizeof(name), "%s", sys);
	else
		snprintf(name, sizeof(name), "syscall_%d", d->nr);
	free(sys);
	char *cb = NULL;
	size_t cl = 0;
	FILE *f = open_memstream(&cb, &cl);
	if (f) {
		fprintf(f, "%s(", name);
		for (int i = 0, n = nargs(d); i < n; i++) {
			if (i)
				fputs(", ", f);
			put_arg(f, d, i);
		}
		fputc(')', f);
		fclose(f);
	}
	snprintf(call, sizeof(call), "%s", cb ? cb : "?");
	free(cb);

	if (cfg->report_fd >= 0) {
		pthread_mutex_lock(&report_lock);
		report.magic = DENIAL_REPORT_MAGIC;
		report.size = sizeof(report);
		struct denial_entry *e = &report.last;
		const char *err = strerrorname_np((int)-d->result);
		if (d->killed)
			snprintf(e->call, sizeof(e->call), "%.400s: killed", call);
		else
			snprintf(e->call, sizeof(e->call), "%.400s = -%s", call, err ? err : "?");
		snprintf(e->decided, sizeof(e->decided), "%s", w.decided);
		snprintf(e->builtin, sizeof(e->builtin), "%s", w.builtin);
		/* fmemopen's "w" leaves the buffer as it was when nothing is
		 * written: without this, a refusal no grant allows kept the hint
		 * of the refusal before it */
		e->allow[0] = 0;
		FILE *af = fmemopen(e->allow, sizeof(e->allow), "w");
		if (af) {
			put_escaped(af, allow); /* the command shows it as it is */
			fclose(af);
		}
		if (!report.count++)
			report.first = *e;
		pthread_mutex_unlock(&report_lock);
	}
	if (cfg->log || d->killed) {
		struct caller c;
		find_caller(d->pid, d->caller, &c);
		write_line(cfg, d, name, call, &w, &c, allow);
	}
}

/* What a slot's entry counted without asking B (U's word: it can only
 * leave out refusals its own entry reported, never one B made) */
static uint64_t unreported(const struct mailbox *mb)
{
	const struct u_state *st = (const struct u_state *)mb->u_state;
	uint64_t n = __atomic_load_n(&st->unreported, __ATOMIC_RELAXED);
	return n < (1ULL << 40) ? n : 0;
}

void denial_slot_reused(const struct trusted_process_config *cfg, const struct mailbox *mb)
{
	if (cfg->report_fd < 0)
		return;
	pthread_mutex_lock(&report_lock);
	report.count += unreported(mb);
	pthread_mutex_unlock(&report_lock);
}

void denial_final(const struct trusted_process_config *cfg, const struct mailbox *mb,
		  int (*ever_ran)(int slot))
{
	static int done; /* B ends from the thread that first sees P end */
	if (cfg->report_fd < 0)
		return;
	pthread_mutex_lock(&report_lock);
	if (done++) {
		pthread_mutex_unlock(&report_lock);
		return;
	}
	for (int s = 0; s < SM_NSLOTS; s++)
		if (ever_ran(s))
			report.count += unreported(&mb[s]);
	if (report.count) {
		report.magic = DENIAL_REPORT_MAGIC;
		report.size = sizeof(report);
		const char *p = (const char *)&report;
		for (size_t done = 0; done < sizeof(report);) {
			ssize_t w = write(cfg->report_fd, p + done, sizeof(report) - done);
			if (w <= 0)
				break;
			done += (size_t)w;
		}
	}
	close(cfg->report_fd);
	pthread_mutex_unlock(&report_lock);
}
