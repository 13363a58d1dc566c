/* sandpit — run untrusted native code on Linux under seccomp.
 *
 * The only public header.  Link with `pkg-config --cflags --libs sandpit`
 * (libsandpit.a: --static; it needs -lseccomp -lZydis -lZycore -lpthread). */
#ifndef SANDPIT_H
#define SANDPIT_H

#ifdef __cplusplus
extern "C" {
#endif

/* libsandpit.so is built with hidden visibility: what is marked here is
 * all it exports (include/libsandpit.map names the same). */
#if defined(__GNUC__)
#define SANDPIT_API __attribute__((visibility("default")))
#else
#define SANDPIT_API
#endif

enum sandpit_mode {
	SANDPIT_MODE_AUTO,   /* filter if the kernel has seccomp-bpf, else strict */
	SANDPIT_MODE_STRICT, /* seccomp strict mode + trusted thread + trusted process */
	SANDPIT_MODE_FILTER, /* seccomp-bpf filter + trusted process for memory arguments */
	SANDPIT_MODE_NONE,   /* what sandpit_mode() says before a successful start */
};

struct sandpit_options {
	enum sandpit_mode mode;         /* overridden by $SANDPIT_MODE */
	const char *policy_file;        /* NULL: the built-in default policy */
	const char *const *allow_read;  /* NULL-terminated: extra read-only path grants */
	const char *const *allow_write; /* NULL-terminated: read-write(-create) grants */
	unsigned flags;                 /* SANDPIT_OPT_*, or 0 */
	/* read only when flags has SANDPIT_OPT_CONNECT (a caller built
	 * before this field was added passes a struct without it) */
	const char *const *allow_connect; /* NULL-terminated: "ADDR:PORT", "[ADDR6]:PORT",
					   * "localhost:PORT": connect grants (TCP, UDP) */
};

/* opts->allow_connect is there and is to be read */
#define SANDPIT_OPT_CONNECT 1u

/* 1 if this kernel and CPU can run the sandbox, 0 if not. */
SANDPIT_API int sandpit_supported(void);

/* Enter the sandbox.  opts == NULL means the defaults.  Returns 0, or a
 * negative errno with a message in sandpit_error().  On success the calling
 * thread runs under seccomp from here on; it can never leave.  Fails with
 * -EBUSY on a second call and when other threads exist.  A failure after
 * the point of no return kills the process rather than run it unsandboxed.
 * Before it forks its trusted process it drops every capability of the
 * process and sets no_new_privs (a failure after that leaves them so):
 * root keeps its uid, nothing more.  A failure before the point of no
 * return gives back the descriptors, memory and processes it made; once
 * it has patched, the program's code stays patched (its calls still made
 * as they are, through sandpit's entry).  The policy's `path deny` lines
 * win over allow_read and allow_write. */
SANDPIT_API int sandpit_start(const struct sandpit_options *opts);

/* The mode in force (SANDPIT_MODE_NONE before a successful sandpit_start). */
SANDPIT_API enum sandpit_mode sandpit_mode(void);

/* The message for the last failure of sandpit_start, "" if none. */
SANDPIT_API const char *sandpit_error(void);

#ifdef __cplusplus
}
#endif
#endif
