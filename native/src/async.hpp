// Runs a job on its own native thread (which then drives the addon's pool) and settles a JS Promise
// through a thread-safe function, so neither the event loop nor libuv's pool is ever blocked. A job that
// throws rejects the Promise with an Error carrying `code` (errors.hpp: the ProverError's code,
// out_of_memory for std::bad_alloc, internal for anything else) and, when the error names them,
// `section` and `index`.
#pragma once
#include <napi.h>

#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "errors.hpp"

namespace zk {

// A JS Error with the code (and section, index) of a native failure.
inline Napi::Error jsError(Napi::Env env, ErrorCode code, const std::string& message, const std::string& section = "",
                           int64_t index = -1) {
  Napi::Error e = code == ErrorCode::BadArgument ? Napi::TypeError::New(env, message) : Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, errorCodeName(code)));
  if (!section.empty()) e.Set("section", Napi::String::New(env, section));
  if (index >= 0) e.Set("index", Napi::Number::New(env, (double)index));
  return e;
}

// A TypeError with code bad_argument, for arguments checked before any work starts.
inline Napi::Error badArgument(Napi::Env env, const std::string& message) {
  return jsError(env, ErrorCode::BadArgument, message);
}

template <class R>
Napi::Promise runAsync(Napi::Env env, std::function<R()> work, std::function<Napi::Value(Napi::Env, R&)> toJs) {
  struct Failure {
    ErrorCode code;
    std::string message, section;
    int64_t index;
  };
  struct Ctx {
    Napi::Promise::Deferred deferred;
    std::function<R()> work;
    std::function<Napi::Value(Napi::Env, R&)> toJs;
    std::unique_ptr<R> result;
    std::unique_ptr<Failure> failure;
    Napi::ThreadSafeFunction tsfn;
  };
  auto ctx = std::make_shared<Ctx>(Ctx{Napi::Promise::Deferred::New(env), std::move(work), std::move(toJs), nullptr, nullptr, {}});
  ctx->tsfn = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "zkprover", 0, 1);
  std::thread([ctx] {
    try {
      ctx->result = std::make_unique<R>(ctx->work());
    } catch (const ProverError& e) {
      ctx->failure.reset(new Failure{e.code(), e.what(), e.section(), e.index()});
    } catch (const std::bad_alloc&) {
      ctx->failure.reset(new Failure{ErrorCode::OutOfMemory, "out of memory", "", -1});
    } catch (const std::exception& e) {
      ctx->failure.reset(new Failure{ErrorCode::Internal, e.what(), "", -1});
    } catch (...) {
      ctx->failure.reset(new Failure{ErrorCode::Internal, "unknown native error", "", -1});
    }
    ctx->tsfn.BlockingCall([ctx](Napi::Env env, Napi::Function) {
      if (ctx->failure) {
        const Failure& f = *ctx->failure;
        ctx->deferred.Reject(jsError(env, f.code, f.message, f.section, f.index).Value());
        return;
      }
      try {
        ctx->deferred.Resolve(ctx->toJs(env, *ctx->result));
      } catch (const Napi::Error& e) {
        ctx->deferred.Reject(e.Value());
      }
    });
    ctx->tsfn.Release();
  }).detach();
  return ctx->deferred.Promise();
}

}  // namespace zk
