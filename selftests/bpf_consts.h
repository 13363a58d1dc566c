/* What the bpf_*_test binaries compile their filters with: the fake block
 * of sandpit descriptors the filter protects, and the call numbers of the
 * other ABIs. */
#ifndef SANDPIT_SELFTEST_BPF_CONSTS_H
#define SANDPIT_SELFTEST_BPF_CONSTS_H

/* the fake block of sandpit descriptors the filter protects */
#define FD_LO 1000
#define FD_HI 1003

#define X32_BIT 0x40000000u

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a SECCOMP_RET_TRAP SIGSYS */
#endif
#define I386_GETPID 20
#endif
