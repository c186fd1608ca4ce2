// SPDX-License-Identifier: MIT
// The same checks as plugin_header.c, compiled as C++: the header must work from both.
#include "plugin_header.c"
