// SPDX-License-Identifier: MIT
// A header-only C++17 wrapper over <rpcd/plugin.h>: handlers as std::function that may throw
// (every exception becomes an error status at the noexcept trampoline, never an unwind into
// rpcd's C frames), an RAII deferred call that is always completed, and threads that the
// plugin's shutdown joins before rpcd unloads the code they run.
#ifndef RPCD_PLUGIN_HPP
#define RPCD_PLUGIN_HPP

#include <rpcd/plugin.h>

#if RPCD_ABI_MAJOR != 1 || RPCD_ABI_MINOR < 7
#error "the C++ binding needs <rpcd/plugin.h> 1.7 or later (RPCD_METHOD_TASK)"
#endif

#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace rpcd
{

// The host table and the plugin handle, set by the init trampoline; valid until shutdown.
inline const rpcd_host_api *host = nullptr;
inline rpcd_plugin *self = nullptr;

// An error with an rpcd status (RPCD_ERR_*), thrown from a handler: the call fails with it.
class error : public std::runtime_error
{
  public:
    error(int status, const std::string &message) : std::runtime_error(message), status_(status)
    {
    }
    int status() const noexcept
    {
        return status_;
    }

  private:
    int status_;
};

// Writes one line to rpcd's log (log_text: no format, control bytes escaped).
inline void log(int level, const std::string &text) noexcept
{
    if (host && RPCD_HOST_HAS(host, log_text))
        host->log_text(self, level, text.c_str());
}

// Tells an MCP client subscribed to uri that the resource changed and may be read again
// (nothing is sent when none is). Any thread, after init and until shutdown. Throws
// rpcd::error when refused (RPCD_ERR_UNSUPPORTED from a daemon older than 1.5, or during init).
inline void resource_updated(const std::string &uri)
{
    int status = host && RPCD_HOST_HAS(host, resource_updated)
                     ? host->resource_updated(self, uri.c_str())
                     : RPCD_ERR_UNSUPPORTED;
    if (status != RPCD_OK)
        throw error(status, "resource_updated refused: " + uri);
}

// A call's context. A copyable handle: once the call has ended every function returns
// RPCD_ERR_STALE, so a copy kept too long is harmless.
class call
{
  public:
    explicit call(rpcd_call *handle) noexcept : handle_(handle)
    {
    }
    rpcd_call *handle() const noexcept
    {
        return handle_;
    }

    // Sets the result to JSON text (any JSON value). Throws rpcd::error when refused.
    void result(std::string_view json) const
    {
        check(host->call_result(handle_, json.data(), json.size()));
    }
    // Sets a complete MCP tool result (content blocks, isError, structuredContent, _meta).
    // Throws rpcd::error when refused, or RPCD_ERR_UNSUPPORTED from a daemon older than 1.4.
    void tool_result(std::string_view json) const
    {
        if (!RPCD_HOST_HAS(host, call_tool_result))
            throw error(RPCD_ERR_UNSUPPORTED, "call_tool_result needs rpcd 1.4");
        check(host->call_tool_result(handle_, json.data(), json.size()));
    }
    // The request's params._meta (name nullptr) or one of its members, as JSON text; empty when
    // the client sent none (or the daemon is older than 1.4).
    std::string meta(const char *name = nullptr) const
    {
        size_t length = 0;
        if (!RPCD_HOST_HAS(host, call_meta) ||
            host->call_meta(handle_, name, nullptr, 0, &length) == RPCD_ERR_STALE || length == 0)
            return std::string();
        std::string text(length + 1, '\0');
        check(host->call_meta(handle_, name, text.data(), text.size(), &length));
        text.resize(length);
        return text;
    }
    // Reports progress (sent only when the client gave a progressToken); total < 0: unknown.
    void progress(double done, double total, const std::string &message) const
    {
        check(host->call_progress(handle_, done, total, message.c_str()));
    }
    bool cancelled() const noexcept
    {
        return host->call_is_cancelled(handle_) != 0;
    }
    // Records an error with the plugin's own JSON-RPC code, message and data (JSON text, or
    // empty for none); returns the status, for `return call.fail_code(...)`. In tools/call it
    // is a tool error, except a code in -32099..-32000 (1.6), sent as that JSON-RPC error:
    // -32021 with {"requiredCapabilities":{...}} names the client capability the tool needs.
    int fail_code(int64_t code, const std::string &message,
                  std::string_view data = std::string_view()) const noexcept
    {
        return host->call_fail_code(handle_, code, message.c_str(),
                                    data.empty() ? nullptr : data.data(), data.size());
    }

    // (1.6) Asks the client a question, which the next round of the call reads with
    // input(key): method is "elicitation/create", "sampling/createMessage" or "roots/list",
    // params the JSON text of its params object (empty for none). The handler then returns
    // RPCD_INPUT_REQUIRED and runs again, from the top, with the answers. Returns false when
    // the client cannot be asked this (it did not declare the capability the method needs, the
    // call did not come from an MCP client that can be asked, or rpcd is older than 1.6): fail
    // with fail_code(-32021, ...) when the tool needs it. Throws rpcd::error when refused.
    bool ask(const std::string &key, const std::string &method,
             std::string_view params = std::string_view()) const
    {
        if (!RPCD_HOST_HAS(host, call_ask))
            return false;
        int status = host->call_ask(handle_, key.c_str(), method.c_str(),
                                    params.empty() ? nullptr : params.data(), params.size());
        if (status == RPCD_ERR_UNSUPPORTED)
            return false;
        check(status);
        return true;
    }
    // (1.6) The client's answer to the question key of the previous round, as JSON text (an
    // ElicitResult such as {"action":"accept","content":{...}}); nothing in the first round,
    // when the client did not answer that question, or from rpcd older than 1.6.
    std::optional<std::string> input(const std::string &key) const
    {
        if (!RPCD_HOST_HAS(host, call_input))
            return std::nullopt;
        return copy_out([&](char *out, size_t size, size_t *length) {
            return host->call_input(handle_, key.c_str(), out, size, length);
        });
    }
    // (1.6) Keeps bytes (at most 16 KiB) for the next round, which reads them with state();
    // rpcd keeps them, the client never sees them; empty drops them. Throws rpcd::error when
    // refused (RPCD_ERR_UNSUPPORTED from rpcd older than 1.6).
    void set_state(std::string_view bytes) const
    {
        if (!RPCD_HOST_HAS(host, call_set_state))
            throw error(RPCD_ERR_UNSUPPORTED, "call_set_state needs rpcd 1.6");
        check(host->call_set_state(handle_, bytes.empty() ? nullptr : bytes.data(), bytes.size()));
    }
    // (1.6) The bytes the previous round kept with set_state; nothing when it kept none (the
    // first round) or rpcd is older than 1.6.
    std::optional<std::string> state() const
    {
        if (!RPCD_HOST_HAS(host, call_state))
            return std::nullopt;
        return copy_out([&](char *out, size_t size, size_t *length) {
            return host->call_state(handle_, out, size, length);
        });
    }

  private:
    // What a host function that copies out (call_input, call_state) has: its length first,
    // then the bytes and their NUL.
    template <typename F> static std::optional<std::string> copy_out(F copy)
    {
        size_t length = 0;
        if (copy(nullptr, 0, &length) == RPCD_ERR_STALE || length == 0)
            return std::nullopt;
        std::string text(length + 1, '\0');
        check(copy(text.data(), text.size(), &length));
        text.resize(length);
        return text;
    }
    static void check(int status)
    {
        if (status != RPCD_OK && status != RPCD_ERR_STALE)
            throw error(status, "rpcd refused the call's data");
    }
    rpcd_call *handle_;
};

// A deferred call: the handler returns RPCD_DEFERRED after creating one, and whoever holds it
// completes it, from any thread. Destroyed without complete() (an exception, a lost thread),
// it fails the call with RPCD_ERR_INTERNAL: a deferred call always gets its response.
class deferred
{
  public:
    explicit deferred(const call &c) noexcept : handle_(c.handle())
    {
    }
    deferred(deferred &&other) noexcept : handle_(std::exchange(other.handle_, nullptr))
    {
    }
    deferred &operator=(deferred &&other) noexcept
    {
        if (this != &other) {
            abandon();
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }
    deferred(const deferred &) = delete;
    deferred &operator=(const deferred &) = delete;
    ~deferred()
    {
        abandon();
    }

    // Ends the call with a result (JSON text). Returns the status of call_complete.
    int complete(std::string_view json) noexcept
    {
        rpcd_call *c = std::exchange(handle_, nullptr);
        if (!c)
            return RPCD_ERR_STALE;
        int status = host->call_result(c, json.data(), json.size());
        return host->call_complete(c, status == RPCD_OK ? RPCD_OK : RPCD_ERR_INTERNAL);
    }
    // Ends the call with an error status and a message.
    int fail(int status, const char *message) noexcept
    {
        rpcd_call *c = std::exchange(handle_, nullptr);
        if (!c)
            return RPCD_ERR_STALE;
        return host->call_complete(c, host->call_fail(c, status, message, nullptr, 0));
    }
    // (1.6) Ends the round: the questions asked with call::ask go to the client, which retries
    // the call with the answers.
    int input_required() noexcept
    {
        rpcd_call *c = std::exchange(handle_, nullptr);
        if (!c)
            return RPCD_ERR_STALE;
        return host->call_complete(c, RPCD_INPUT_REQUIRED);
    }
    rpcd::call call() const noexcept
    {
        return rpcd::call(handle_);
    }

  private:
    void abandon() noexcept
    {
        if (handle_)
            fail(RPCD_ERR_INTERNAL, "the plugin dropped a deferred call");
    }
    rpcd_call *handle_;
};

// A handler: returns RPCD_OK after call::result, RPCD_DEFERRED after handing a deferred on,
// RPCD_INPUT_REQUIRED after call::ask (1.6), or an error status; may throw rpcd::error,
// std::bad_alloc or anything else.
using handler = std::function<int(call, std::string_view params)>;

namespace detail
{

// Threads started with rpcd::spawn, joined at shutdown; finished ones are joined on the way.
struct thread_list {
    std::mutex lock;
    std::vector<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> threads;
};
inline thread_list threads;

inline int fail_with(rpcd_call *c, int status, const char *message) noexcept
{
    return host->call_fail(c, status, message, nullptr, 0);
}

// The one place where an exception stops: rpcd's frames are C and must never be unwound.
inline int run_handler(rpcd_call *c, const char *params, size_t length, void *data) noexcept
{
    try {
        const handler &h = *static_cast<const handler *>(data);
        return h(call(c), params ? std::string_view(params, length) : std::string_view());
    } catch (const error &failure) {
        return fail_with(c, failure.status(), failure.what());
    } catch (const std::bad_alloc &) {
        return RPCD_ERR_NO_MEMORY;
    } catch (const std::exception &failure) {
        return fail_with(c, RPCD_ERR_INTERNAL, failure.what());
    } catch (...) {
        return fail_with(c, RPCD_ERR_INTERNAL, "an unknown exception");
    }
}

inline void free_handler(void *data) noexcept
{
    delete static_cast<handler *>(data);
}

} // namespace detail

// Starts a thread running f; the plugin's shutdown joins it. f must not throw (an exception
// that leaves a std::thread terminates the process): catch inside, or hold a deferred.
template <typename F> void spawn(F &&f)
{
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread thread([done, f = std::forward<F>(f)]() mutable noexcept {
        f();
        done->store(true);
    });
    std::lock_guard<std::mutex> guard(detail::threads.lock);
    auto &list = detail::threads.threads;
    for (auto it = list.begin(); it != list.end();) {
        if (it->second->load()) {
            it->first.join();
            it = list.erase(it);
        } else {
            ++it;
        }
    }
    list.emplace_back(std::move(thread), std::move(done));
}

// What MCP shows of a tool beyond its name (ABI 1.4; see rpcd_method): each may be nullptr.
struct tool_info {
    const char *title = nullptr;
    const char *annotations = nullptr;   // JSON text of MCP's ToolAnnotations
    const char *output_schema = nullptr; // JSON Schema text, "type": "object"
    const char *icons = nullptr;         // JSON text of MCP's icons array
};

// What a method is to an MCP client (ABI 1.5; see rpcd_method.mcp_role): a tool unless set.
struct mcp_info {
    uint32_t role = RPCD_MCP_TOOL;    // RPCD_MCP_RESOURCE, _PROMPT, _COMPLETION or _HIDDEN
    const char *descriptor = nullptr; // JSON text, required for a resource, prompt, completion
};

// Registers a method during init, declaring every member of the 1.5 descriptor: flags are the
// header's RPCD_METHOD_* or'ed together (SERIALIZED, QUICK, VALIDATES_ITSELF; TASK and
// TASK_REQUIRED from 1.7, a tool that may or must run as an MCP task), params_schema is JSON
// Schema text of the params (a tool's inputSchema), tool and mcp the rest; nullptr declares
// nothing. The descriptor comes from rpcd_method_new, with the size of the header
// the plugin is built with. Throws rpcd::error when rpcd refuses it (the reason in its log).
inline void add_method(const char *name, handler h, uint32_t flags = 0,
                       const char *description = nullptr, const char *params_schema = nullptr,
                       const tool_info &tool = tool_info(), const mcp_info &mcp = mcp_info())
{
    auto owned = std::make_unique<handler>(std::move(h));
    rpcd_method method = rpcd_method_new(name, detail::run_handler);
    method.user_data = owned.get();
    method.free_user_data = detail::free_handler;
    method.flags = flags;
    method.description = description;
    method.params_schema = params_schema;
    method.title = tool.title;
    method.annotations = tool.annotations;
    method.output_schema = tool.output_schema;
    method.icons = tool.icons;
    method.mcp_role = mcp.role;
    method.mcp_descriptor = mcp.descriptor;
    int status = host->register_method(self, &method);
    if (status != RPCD_OK)
        throw error(status, std::string("cannot register ") + name);
    owned.release(); // rpcd owns it now, and frees it with free_handler
}

namespace detail
{

inline int init(rpcd_plugin *plugin, const rpcd_host_api *api, char *message, size_t size,
                void (*setup)()) noexcept
{
    host = api;
    self = plugin;
    try {
        setup();
        return RPCD_OK;
    } catch (const error &failure) {
        std::snprintf(message, size, "%s", failure.what());
        return failure.status();
    } catch (const std::exception &failure) {
        std::snprintf(message, size, "%s", failure.what());
        return RPCD_ERR_INTERNAL;
    } catch (...) {
        std::snprintf(message, size, "an unknown exception");
        return RPCD_ERR_INTERNAL;
    }
}

// Joins every thread spawn started (their code must not outlive the plugin), then teardown.
inline void shutdown(void (*teardown)() noexcept) noexcept
{
    std::vector<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> list;
    {
        std::lock_guard<std::mutex> guard(threads.lock);
        list.swap(threads.threads);
    }
    for (auto &entry : list)
        entry.first.join();
    if (teardown)
        teardown();
}

} // namespace detail
} // namespace rpcd

// Defines the entry point: setup (void(), may throw) registers the methods with
// rpcd::add_method; teardown (void() noexcept, or nullptr) runs after the spawned threads are
// joined.
#define RPCD_CPP_PLUGIN(name_, version_, setup_, teardown_)                                        \
    namespace                                                                                      \
    {                                                                                              \
    int rpcd_cpp_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **, char *error,         \
                      size_t error_size) noexcept                                                  \
    {                                                                                              \
        return rpcd::detail::init(plugin, api, error, error_size, setup_);                         \
    }                                                                                              \
    void rpcd_cpp_shutdown(void *) noexcept                                                        \
    {                                                                                              \
        rpcd::detail::shutdown(teardown_);                                                         \
    }                                                                                              \
    }                                                                                              \
    RPCD_PLUGIN_DEFINE(name_, version_, rpcd_cpp_init, rpcd_cpp_shutdown)

#endif
