/*
 * heapsift's threads after the program's are gone (orphan.c): a program whose main thread
 * called pthread_exit ends when its last thread does, and heapsift's must not keep it.
 */
#ifndef HS_ORPHAN_H
#define HS_ORPHAN_H

#include <stdbool.h>

/* Called by each of heapsift's own threads when it starts (at most 8 at once). */
void hs_orphan_register(void);
/* The same for a thread heapsift started without glibc (iothread.c), and its removal. */
void hs_orphan_register_tid(int tid);
void hs_orphan_forget(int tid);
/* How many of heapsift's registered threads are alive in this process. */
int hs_orphan_own_alive(void);
/* In a forked child, before its own threads start: the parent's threads are not there,
 * and their slots would leave none for the child's (nor a grandchild's). */
void hs_orphan_after_fork(void);
/* True when the main thread has ended (pthread_exit) and no thread of the program's is
 * left but heapsift's own: they should end too, and the last one's end exits. */
bool hs_orphan_program_gone(void);

#endif
