/* SPDX-License-Identifier: MIT */
/*
 * Fixture: the code an attacker would like rpcd to load. Its constructor runs at dlopen, before
 * any check of the plugin could refuse it, and leaves a mark: a file named by
 * RPCD_FOREIGN_MARKER, and a line on stderr. A test that finds the mark caught a load of code
 * rpcd never checked.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void foreign_loaded(void)
{
    static const char line[] = "foreign code loaded\n";
    const char *marker = getenv("RPCD_FOREIGN_MARKER");
    if (marker) {
        int fd = open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            (void)!write(fd, line, strlen(line));
            close(fd);
        }
    }
    (void)!write(STDERR_FILENO, line, strlen(line));
}

/* Not a plugin: no entry point is needed for the constructor to have run. */
int foreign_symbol(void);
int foreign_symbol(void)
{
    return 42;
}
