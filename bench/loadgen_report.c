/* SPDX-License-Identifier: MIT */
/*
 * loadgen's reports and statistics: the JSON object a scenario prints on stdout, the server's
 * usage in it, and the sorting and percentiles its figures are taken with.
 */
#include "loadgen.h"

#include <stdio.h>

json_t *report_new(const char *scenario)
{
    json_t *command = json_array();
    for (char **arg = opt.command; *arg; arg++)
        json_array_append_new(command, json_string(*arg));
    return json_pack("{s:s, s:s, s:o}", "scenario", scenario, "server", opt.label, "command",
                     command);
}

void report_usage(json_t *report, const server_usage *usage, long requests)
{
    json_object_set_new(report, "server_max_rss_kib", json_integer(usage->max_rss_kib));
    json_object_set_new(report, "server_cpu_us", json_integer(usage->cpu_us));
    json_object_set_new(report, "server_cpu_us_per_request",
                        json_real(requests > 0 ? (double)usage->cpu_us / (double)requests : 0));
}

int report_print(json_t *report)
{
    int status = json_dumpf(report, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(report);
    if (status != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        fail_note("writing the report failed");
        return -1;
    }
    return 0;
}

int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
double percentile(const double *sorted, size_t count, double fraction)
{
    size_t rank = (size_t)(fraction * (double)count + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > count)
        rank = count;
    return sorted[rank - 1];
}
