/* SPDX-License-Identifier: MIT */
/*
 * A plugin is loaded from a private, sealed copy of the file that was checked: a file written
 * over in place while rpcd runs its code then changes nothing under it, and a new version at the
 * same path is a new object for the dynamic loader.
 */
#ifndef RPCD_PLUGIN_COPY_H
#define RPCD_PLUGIN_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/*
 * Copies the regular file open on fd (from its start) into a new memfd named after label
 * (borrowed), sealed against every change, and hashes what it copied. The file's size and
 * modification time are compared before and after: a file that changed while it was copied is
 * refused (written in place mid-copy), as is one whose size differs from what fstat said.
 * Returns 0, *copy (new descriptor, O_CLOEXEC), *hash and *info (the fstat of fd before the
 * copy), or -1 with a one-line reason.
 */
int pcopy_sealed(int fd, const char *label, int *copy, uint64_t *hash, struct stat *info,
                 char *reason, size_t reason_size);

/* Hashes the whole file open on fd (from its start), as pcopy_sealed does. Returns 0 or -1. */
int pcopy_hash(int fd, uint64_t *hash);

#endif
