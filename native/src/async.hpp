// Runs a job on its own native thread (which then drives the addon's pool) and settles a JS Promise
// through a thread-safe function, so neither the event loop nor libuv's pool is ever blocked.
#pragma once
#include <napi.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace zk {

template <class R>
Napi::Promise runAsync(Napi::Env env, std::function<R()> work, std::function<Napi::Value(Napi::Env, R&)> toJs) {
  struct Ctx {
    Napi::Promise::Deferred deferred;
    std::function<R()> work;
    std::function<Napi::Value(Napi::Env, R&)> toJs;
    std::unique_ptr<R> result;
    std::string error;
    Napi::ThreadSafeFunction tsfn;
  };
  auto ctx = std::make_shared<Ctx>(Ctx{Napi::Promise::Deferred::New(env), std::move(work), std::move(toJs), nullptr, "", {}});
  ctx->tsfn = Napi::ThreadSafeFunction::New(env, Napi::Function::New(env, [](const Napi::CallbackInfo&) {}), "zkprover", 0, 1);
  std::thread([ctx] {
    try {
      ctx->result = std::make_unique<R>(ctx->work());
    } catch (const std::exception& e) {
      ctx->error = e.what();
    } catch (...) {
      ctx->error = "unknown native error";
    }
    ctx->tsfn.BlockingCall([ctx](Napi::Env env, Napi::Function) {
      if (!ctx->error.empty()) {
        ctx->deferred.Reject(Napi::Error::New(env, ctx->error).Value());
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
