/*
 * heapsift attach and detach (attach.c): profile a running process by injecting the
 * library with ptrace, then detach it. argv[0] is the verb name; each returns the process
 * exit status.
 */
#ifndef HS_ATTACH_H
#define HS_ATTACH_H

int hs_cmd_attach(int argc, char **argv);
int hs_cmd_detach(int argc, char **argv);

#endif
