/* libFuzzer target for what B parses from the untrusted side: a path as U
 * wrote it, normalised, resolved against a cwd, checked against the grants.
 *     make fuzz            (clang, -fsanitize=fuzzer,address,undefined) */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "policy/policy.h"

static struct policy *pol;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[4200], out[4200], res[4200], fast[4200];
	char err[256];
	if (!pol && policy_new_default(&pol, NULL, NULL, err, sizeof(err)) < 0)
		abort();
	if (size >= sizeof(path))
		size = sizeof(path) - 1;
	memcpy(path, data, size);
	path[size] = 0;
	if (path_normalise(path, out, sizeof(out)) == 0) {
		policy_check_path(pol, getpid(), out, PA_READ);
		policy_check_path(pol, getpid(), out, PA_WRITE);
	}
	/* resolution reads the real filesystem: only under a scratch cwd; the
	 * walk and openat2's shortcut must agree */
	int how = (size & 1 ? PATH_NOFOLLOW : 0) | (size & 2 ? PATH_OWN_EXE : 0);
	int r = path_resolve(getpid(), "/tmp", path, how, res, sizeof(res));
	if (path_resolve(getpid(), "/tmp", path, how | PATH_OPENAT2, fast, sizeof(fast)) != r ||
	    (r == 0 && strcmp(res, fast)))
		abort();
	if (r == 0)
		policy_check_path(pol, getpid(), res, PA_READ);
	/* from the directory object, as B resolves a name relative to a
	 * descriptor: where one openat2 beneath /tmp decides, the walk's text */
	if (path_name_beneath(path)) {
		int dir = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int b = dir >= 0 ? path_open_beneath(dir, path, how | PATH_OPENAT2) : -EAGAIN;
		char joined[4200];
		if (dir >= 0)
			close(dir);
		if (b >= 0)
			close(b);
		if (b != -EAGAIN &&
		    (r != 0 || path_join_beneath("/tmp", path, joined, sizeof(joined)) ||
		     strcmp(joined, res)))
			abort();
	} else if (path_join_beneath("/tmp", path, fast, sizeof(fast)) != -EINVAL) {
		abort();
	}
	/* the copy U sends with a request (MB_PATH: 368 bytes and a length):
	 * taken only as exactly the string its length says */
	if (size >= 4) {
		char bytes[368], taken[4200];
		uint32_t len;
		size_t nb = size - 4 < sizeof(bytes) ? size - 4 : sizeof(bytes);
		memcpy(&len, data, 4);
		memset(bytes, 'x', sizeof(bytes));
		memcpy(bytes, data + 4, nb);
		long n = path_from_copy(bytes, sizeof(bytes), len, taken, (size & 2) ? 64 : sizeof(taken));
		if (n >= 0 && (n != (long)len || strlen(taken) != len || memcmp(taken, bytes, len)))
			abort();
		if (n < 0 && len < sizeof(bytes) && len < ((size & 2) ? 64u : sizeof(taken)) &&
		    strnlen(bytes, sizeof(bytes)) == len)
			abort();
	}
	return 0;
}
