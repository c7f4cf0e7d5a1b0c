/*
 * Whole files (fileio.c): read one, write one atomically, write all of a buffer, and
 * whether a path pattern's directory takes new files.
 */
#ifndef HS_FILEIO_H
#define HS_FILEIO_H

#include "buf.h"

#include <stddef.h>
#include <sys/types.h>

/* Reads a whole file into out. 0 or -errno. */
int hs_read_file(const char *path, hs_buf_t *out);
/* A small file (a /proc file such as /proc/PID/task/TID/stat or /proc/PID/environ), at
 * most cap - 1 bytes of it, into buf, NUL-terminated (hs_fd_read_file): its length, or
 * -1 when it cannot be opened or reads nothing. */
ssize_t hs_read_text(const char *path, char *buf, size_t cap);
/* A whole regular, non-empty file read into fresh memory of its own, asked for in
 * transparent huge pages (release it with hs_unmap_file(*data, *len)): read into ordinary
 * fresh memory, a 14 MB profile faults in 3,600 pages, about 50 ms of CPU on a virtual
 * machine; in huge pages, 7. Not a mapping of the file: a file truncated by another
 * process while mapped would end this one with SIGBUS. 0, or -errno (anything else than a
 * regular file: -EINVAL; a file that grew while read: -EAGAIN), when the caller reads it
 * the ordinary way instead. */
int hs_map_file(const char *path, const uint8_t **data, size_t *len);
void hs_unmap_file(const uint8_t *data, size_t len);
/* Writes data to path.tmp.<pid> then renames it over path (a path that exists and is not
 * a regular file, such as /dev/null or a FIFO, is written in place). 0 or -errno.
 * Atomic for readers: path holds the old bytes or all the new ones, never a part. Not
 * synced: a machine that crashes right after may lose the file, but a process that ends,
 * killed or not, loses nothing (the bytes are in the page cache). An fsync made the
 * exiting program wait 0.4 ms on this project's test machines, and can take tens of ms
 * on a busy disk; no profile is worth that to the program that writes it. */
int hs_write_file_atomic(const char *path, const void *data, size_t len);
/* Writes all len bytes of data to fd with wr, in chunks of at most 1 MiB, retrying on
 * EINTR: hs_fd_write (fdio.h) for a file of heapsift's own, write(2) for a descriptor the
 * caller owns (heapsift_dump_fd's). 0 or -errno (-EIO when wr writes nothing). */
int hs_write_all(int fd, const void *data, size_t len,
                 ssize_t (*wr)(int fd, const void *buf, size_t n));
/* The directory of a path pattern (HEAPSIFT_OUT's syntax: what precedes its last '/', "."
 * without one) in dir, and whether this process may make files there: 0, an errno
 * (ENOENT, ENOTDIR, EACCES, EROFS...), or -1 when it cannot be told (an escape such as %p
 * in the directory, or a directory longer than cap). Used by `heapsift run` before it
 * starts the program, and by the library at an attach, with the target's own ids. */
int hs_pattern_dir_check(const char *pattern, char *dir, size_t cap);

#endif
