/* SPDX-License-Identifier: MIT */
/*
 * One client's MCP session: what its messages showed (an MCP client, an initialize answered,
 * the capabilities it declared), and the stores of its calls' rounds that ask it for input.
 */
#include "mcp/mcp.h"

#include "mcp/mcp_requests.h"
#include "mcp/mcp_revision.h"
#include "mcp/mcp_rounds.h"
#include "mcp/mcp_tasks.h"

int mcp_session_open(mcp_session *session, output *out)
{
    if (mcp_rounds_new(&session->rounds) != 0)
        return -1;
    if (mcp_requests_new(out, MCP_REQUESTS_LIMITS, &session->requests) != 0 ||
        mcp_tasks_new(out, session->rounds, &session->tasks) != 0) {
        mcp_session_close(session);
        return -1;
    }
    return 0;
}

void mcp_session_close(mcp_session *session)
{
    mcp_tasks_free(session->tasks);
    session->tasks = NULL;
    mcp_requests_free(session->requests);
    session->requests = NULL;
    mcp_rounds_free(session->rounds);
    session->rounds = NULL;
}

void mcp_session_note(mcp_session *session, const mcp_route *route, bool answered)
{
    if (route->starts_session)
        session->started = true;
    /* From now on the client hears of a changed tool list (srv_list_changed), and may be asked
     * what it declared. */
    if (route->initializes && answered && route->kind == MCP_ANSWERED) {
        atomic_store(&session->initialized, true);
        session->ask_capabilities = mcp_ask_capabilities_of(route->client_capabilities);
    }
}
