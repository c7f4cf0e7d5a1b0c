/*
 * The process heap of a command that reads profiles, asked for in transparent huge pages
 * (hugeheap.c). For the CLI only: never called inside a profiled program.
 */
#ifndef HS_HUGEHEAP_H
#define HS_HUGEHEAP_H

#include <stdbool.h>
#include <stddef.h>

/* Grows malloc's heap (glibc's main arena, through brk) by at least bytes at once and
 * advises the new part MADV_HUGEPAGE, as glibc's own tunable glibc.malloc.hugetlb=1 does
 * with each growth; blocks of any size come from that heap while it has room (not from
 * mmaps of their own), and it is no longer trimmed. A profile model and a report fault the
 * memory they touch in 2 MiB at a time: on a virtual machine, where a 4 KiB page fault
 * costs 12-16 us of CPU, `heapsift top` on a 14.6 MB file took 8,055 faults before and
 * about 1,700 after. Set through the process's own malloc options, not the environment:
 * a program that the CLI starts afterwards (`heapsift run`) is not touched. Keeps no
 * state: the caller calls it once per process. bytes is rounded up to 2 MiB and capped at
 * 1 GiB. Returns whether the heap grew and was advised (false also when malloc
 * is not glibc's or the kernel refuses: the heap stays as it was, in ordinary pages). */
bool hs_heap_huge(size_t bytes);

#endif
