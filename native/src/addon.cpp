// N-API surface of the prover: loadKey, prove, devSetup (all asynchronous) and testOps (synchronous
// field/curve/FFT primitives exported only so tests can compare them with @noble/curves).
#include <napi.h>

#include <memory>

#include "bigint.hpp"
#include "async.hpp"
#include "formats.hpp"
#include "prover.hpp"
#include "setup.hpp"
#include "test_ops.hpp"

namespace zk {
namespace {

std::vector<uint8_t> copyBytes(const Napi::Value& v, const char* name) {
  if (!v.IsTypedArray()) throw Napi::TypeError::New(v.Env(), std::string(name) + " must be a Uint8Array");
  Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(a.Data(), a.Data() + a.ByteLength());
}

std::string fqDecimal(const Fq& x) { return limbsToDecimal(Fq::fromMont(x).v); }

Napi::Value loadKey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto bytes = std::make_shared<std::vector<uint8_t>>(copyBytes(info[0], "zkey"));
  return runAsync<std::shared_ptr<ZKey>>(
      env,
      [bytes] {
        std::shared_ptr<ZKey> key = parseZKey(bytes->data(), bytes->size());
        bytes->clear();
        bytes->shrink_to_fit();
        return key;
      },
      [](Napi::Env env, std::shared_ptr<ZKey>& key) -> Napi::Value {
        auto* holder = new std::shared_ptr<ZKey>(key);
        Napi::Object o = Napi::Object::New(env);
        o.Set("handle", Napi::External<std::shared_ptr<ZKey>>::New(
                            env, holder, [](Napi::Env, std::shared_ptr<ZKey>* h) { delete h; }));
        o.Set("nVars", key->nVars);
        o.Set("nPublic", key->nPublic);
        o.Set("domainSize", key->domainSize);
        return o;
      });
}

Napi::Value prove(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsExternal()) throw Napi::TypeError::New(env, "prove: first argument must be a key handle");
  std::shared_ptr<ZKey> key = *info[0].As<Napi::External<std::shared_ptr<ZKey>>>().Data();
  auto wtns = std::make_shared<std::vector<uint8_t>>(copyBytes(info[1], "wtns"));
  struct Out {
    Proof proof;
    std::vector<std::string> publics;
  };
  return runAsync<Out>(
      env,
      [key, wtns] {
        Witness w = parseWtns(wtns->data(), wtns->size());
        Out out{prove(*key, w), {}};
        for (uint32_t i = 1; i <= key->nPublic; i++) out.publics.push_back(limbsToDecimal(w.at(i)));
        return out;
      },
      [](Napi::Env env, Out& out) -> Napi::Value {
        auto pair = [&env](const Fq& a, const Fq& b) {
          Napi::Array r = Napi::Array::New(env, 2);
          r.Set(0u, fqDecimal(a));
          r.Set(1u, fqDecimal(b));
          return r;
        };
        Napi::Object o = Napi::Object::New(env);
        o.Set("a", pair(out.proof.A.x, out.proof.A.y));
        Napi::Array b = Napi::Array::New(env, 2);
        b.Set(0u, pair(out.proof.B.x.c0, out.proof.B.x.c1));
        b.Set(1u, pair(out.proof.B.y.c0, out.proof.B.y.c1));
        o.Set("b", b);
        o.Set("c", pair(out.proof.C.x, out.proof.C.y));
        Napi::Array pub = Napi::Array::New(env, out.publics.size());
        for (size_t i = 0; i < out.publics.size(); i++) pub.Set((uint32_t)i, out.publics[i]);
        o.Set("publicSignals", pub);
        return o;
      });
}

Napi::Value devSetupJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto r1cs = std::make_shared<std::vector<uint8_t>>(copyBytes(info[0], "r1cs"));
  return runAsync<std::vector<uint8_t>>(
      env, [r1cs] { return devSetup(parseR1cs(r1cs->data(), r1cs->size())); },
      [](Napi::Env env, std::vector<uint8_t>& zkey) -> Napi::Value {
        return Napi::Buffer<uint8_t>::Copy(env, zkey.data(), zkey.size());
      });
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("loadKey", Napi::Function::New(env, loadKey));
  exports.Set("prove", Napi::Function::New(env, prove));
  exports.Set("devSetup", Napi::Function::New(env, devSetupJs));
  exports.Set("devKeyName", Napi::String::New(env, DEV_KEY_NAME));
  exports.Set("testOps", createTestOps(env));
  return exports;
}

}  // namespace
}  // namespace zk

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return zk::init(env, exports); }

NODE_API_MODULE(zkprover, InitModule)
