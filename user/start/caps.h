/* Root is not root inside: sandpit_start drops every capability of the
 * process before it forks B and clones T (user/start/caps.c, internal). */
#ifndef SANDPIT_CAPS_H
#define SANDPIT_CAPS_H

#include <stddef.h>

/* Sets no_new_privs, then empties the ambient, bounding (when the thread
 * holds CAP_SETPCAP, the only way to change it), inheritable, permitted and
 * effective sets of the calling thread, and reads them back.  0, or a
 * negative errno with the step that failed in `what`. */
int caps_drop_all(char *what, size_t whatlen);

#endif
