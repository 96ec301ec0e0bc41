// N-API surface of the prover: loadKey, checkKey, prove, verify, devSetup (all asynchronous) and testOps (field/curve/FFT
// primitives exported only so tests can compare them with @noble/curves, and a failure hook for error delivery).
// Every rejection and argument error carries a `code` (errors.hpp, async.hpp).
#include <napi.h>

#include <functional>
#include <memory>
#include <string>

#include "bigint.hpp"
#include "async.hpp"
#include "formats.hpp"
#include "key_file.hpp"
#include "prover.hpp"
#include "setup.hpp"
#include "test_ops.hpp"
#include "verifier.hpp"

namespace zk {
namespace {

std::vector<uint8_t> copyBytes(const Napi::Value& v, const char* name) {
  if (!v.IsTypedArray()) throw badArgument(v.Env(), std::string(name) + " must be a Uint8Array");
  Napi::Uint8Array a = v.As<Napi::Uint8Array>();
  return std::vector<uint8_t>(a.Data(), a.Data() + a.ByteLength());
}

std::string fqDecimal(const Fq& x) { return limbsToDecimal(Fq::fromMont(x).v); }

Napi::Array g1Json(Napi::Env env, const G1A& p) {
  Napi::Array r = Napi::Array::New(env, 2);
  r.Set(0u, fqDecimal(p.x));
  r.Set(1u, fqDecimal(p.y));
  return r;
}
Napi::Array g2Json(Napi::Env env, const G2A& p) {
  Napi::Array x = Napi::Array::New(env, 2), y = Napi::Array::New(env, 2), r = Napi::Array::New(env, 2);
  x.Set(0u, fqDecimal(p.x.c0));
  x.Set(1u, fqDecimal(p.x.c1));
  y.Set(0u, fqDecimal(p.y.c0));
  y.Set(1u, fqDecimal(p.y.c1));
  r.Set(0u, x);
  r.Set(1u, y);
  return r;
}

// loadKey(path | bytes) -> Promise<{handle, nVars, nPublic, domainSize, vk, prepared, workingMemory}>. A path
// is mapped and used in place with its prepared file (key_file.hpp); bytes are validated in full and copied.
// `prepared` says which: "reused", "written", "unsaved" (path), or "none" (bytes). The key is then readied
// for proving (prepareProver: working memory pre-faulted, `workingMemory` bytes of it; tables; key pages).
Napi::Value loadKey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct Loaded {
    std::shared_ptr<ZKey> key;
    std::string prepared;
  };
  std::function<Loaded()> work;
  if (info[0].IsString()) {
    std::string path = info[0].As<Napi::String>().Utf8Value();
    work = [path] {
      LoadedKey k = loadZKeyFile(path);
      prepareProver(*k.key);
      return Loaded{std::shared_ptr<ZKey>(std::move(k.key)), prepStatusName(k.status)};
    };
  } else {
    auto bytes = std::make_shared<std::vector<uint8_t>>(copyBytes(info[0], "zkey"));
    work = [bytes] {
      std::shared_ptr<ZKey> key = parseZKey(bytes->data(), bytes->size());
      bytes->clear();
      bytes->shrink_to_fit();
      prepareProver(*key);
      return Loaded{key, "none"};
    };
  }
  return runAsync<Loaded>(env, work, [](Napi::Env env, Loaded& loaded) -> Napi::Value {
    const std::shared_ptr<ZKey>& key = loaded.key;
    auto* holder = new std::shared_ptr<ZKey>(key);
    Napi::Object o = Napi::Object::New(env);
    o.Set("handle", Napi::External<std::shared_ptr<ZKey>>::New(
                        env, holder, [](Napi::Env, std::shared_ptr<ZKey>* h) { delete h; }));
    o.Set("nVars", key->nVars);
    o.Set("nPublic", key->nPublic);
    o.Set("domainSize", key->domainSize);
    o.Set("prepared", loaded.prepared);
    o.Set("workingMemory", (double)key->work->expectBytes());
    Napi::Object vk = Napi::Object::New(env);
    vk.Set("alpha1", g1Json(env, key->alpha1));
    vk.Set("beta2", g2Json(env, key->beta2));
    vk.Set("gamma2", g2Json(env, key->gamma2));
    vk.Set("delta2", g2Json(env, key->delta2));
    Napi::Array ic = Napi::Array::New(env, key->IC.size());
    for (size_t i = 0; i < key->IC.size(); i++) ic.Set((uint32_t)i, g1Json(env, key->IC[i]));
    vk.Set("IC", ic);
    o.Set("vk", vk);
    return o;
  });
}

// checkKey(handle) -> Promise<number>: every G2 point of a loaded key in the prime-order subgroup
// (checkKeySubgroups); resolves to the number of points checked, rejects naming the first bad one.
Napi::Value checkKey(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsExternal()) throw badArgument(env, "checkKey: first argument must be a key handle");
  std::shared_ptr<ZKey> key = *info[0].As<Napi::External<std::shared_ptr<ZKey>>>().Data();
  return runAsync<double>(
      env,
      [key] {
        checkKeySubgroups(*key);
        return (double)(key->B2.size() + 3);
      },
      [](Napi::Env env, double& n) -> Napi::Value { return Napi::Number::New(env, n); });
}

Napi::Value prove(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsExternal()) throw badArgument(env, "prove: first argument must be a key handle");
  std::shared_ptr<ZKey> key = *info[0].As<Napi::External<std::shared_ptr<ZKey>>>().Data();
  auto wtns = std::make_shared<std::vector<uint8_t>>(copyBytes(info[1], "wtns"));
  struct Out {
    Proof proof;
    std::vector<std::string> publics;
  };
  return runAsync<Out>(
      env,
      [key, wtns] {
        // The witness and the proof's scratch live in the key's kept working memory; nothing of it is
        // returned (the proof and the public signals are copied out).
        return withWorkingMemory(*key, [&] {
          Witness w = parseWtns(wtns->data(), wtns->size());
          Out out{prove(*key, w), {}};
          // Self-check: a witness that does not satisfy the circuit still yields a "proof"; never return one.
          std::vector<U256> publics(key->nPublic);
          for (uint32_t i = 1; i <= key->nPublic; i++) std::memcpy(publics[i - 1].v, w.at(i), 32);
          if (!verifyGroth16(verifyingKeyOf(*key), out.proof, publics))
            throw ProverError(ErrorCode::WitnessUnsatisfied,
                              "witness does not satisfy the circuit: the proof failed verification and was discarded");
          for (uint32_t i = 1; i <= key->nPublic; i++) out.publics.push_back(limbsToDecimal(w.at(i)));
          return out;
        });
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

// Parsing of verification inputs: decimal strings (checked < q), [x, y] for G1, [[x0, x1], [y0, y1]] for G2.
Fq fqArg(const Napi::Value& v) {
  if (!v.IsString()) throw std::runtime_error("coordinate must be a decimal string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.empty() || s.size() > 78 || s.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("coordinate must be a decimal string");
  U256 x = decimalToLimbs(s.c_str());
  Fq out;
  if (!Fq::fromNormalChecked(x.v, out)) throw std::runtime_error("coordinate out of range");
  return out;
}
Napi::Array arrayArg(const Napi::Value& v, uint32_t minLen) {
  if (!v.IsArray() || v.As<Napi::Array>().Length() < minLen) throw std::runtime_error("malformed point");
  return v.As<Napi::Array>();
}
G1A g1Arg(const Napi::Value& v) {
  Napi::Array a = arrayArg(v, 2);
  G1A p{fqArg(a.Get(0u)), fqArg(a.Get(1u))};
  if (!g1OnCurve(p)) throw std::runtime_error("G1 point not on the curve");
  return p;
}
G2A g2Arg(const Napi::Value& v) {
  Napi::Array a = arrayArg(v, 2);
  Napi::Array x = arrayArg(a.Get(0u), 2), y = arrayArg(a.Get(1u), 2);
  G2A p{Fq2{fqArg(x.Get(0u)), fqArg(x.Get(1u))}, Fq2{fqArg(y.Get(0u)), fqArg(y.Get(1u))}};
  if (!g2OnCurve(p)) throw std::runtime_error("G2 point not on the curve");
  return p;
}

// verify(vk {alpha1, beta2, gamma2, delta2, IC}, proof {a, b, c}, publicSignals) -> Promise<boolean>.
// Malformed input resolves to false; the pairing check runs off the event loop.
Napi::Value verifyJs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  struct Input {
    bool ok = false;
    VerifyingKey vk;
    Proof proof;
    std::vector<U256> publics;
  };
  auto in = std::make_shared<Input>();
  try {
    if (!info[0].IsObject() || !info[1].IsObject() || !info[2].IsArray()) throw std::runtime_error("bad arguments");
    Napi::Object vk = info[0].As<Napi::Object>(), pr = info[1].As<Napi::Object>();
    in->vk.alpha1 = g1Arg(vk.Get("alpha1"));
    in->vk.beta2 = g2Arg(vk.Get("beta2"));
    in->vk.gamma2 = g2Arg(vk.Get("gamma2"));
    in->vk.delta2 = g2Arg(vk.Get("delta2"));
    Napi::Array ic = arrayArg(vk.Get("IC"), 1);
    for (uint32_t i = 0; i < ic.Length(); i++) in->vk.IC.push_back(g1Arg(ic.Get(i)));
    in->proof = Proof{g1Arg(pr.Get("a")), g2Arg(pr.Get("b")), g1Arg(pr.Get("c"))};
    Napi::Array sig = info[2].As<Napi::Array>();
    for (uint32_t i = 0; i < sig.Length(); i++) {
      Napi::Value s = sig.Get(i);
      if (!s.IsString()) throw std::runtime_error("signal must be a decimal string");
      std::string str = s.As<Napi::String>().Utf8Value();
      if (str.empty() || str.size() > 78 || str.find_first_not_of("0123456789") != std::string::npos)
        throw std::runtime_error("signal must be a decimal string");
      in->publics.push_back(decimalToLimbs(str.c_str()));
      if (limbsGeq(in->publics.back().v, FrParams::P)) throw std::runtime_error("signal out of range");
    }
    in->ok = true;
  } catch (const std::exception&) {
    in->ok = false;
  }
  return runAsync<bool>(
      env, [in] { return in->ok && verifyGroth16(in->vk, in->proof, in->publics); },
      [](Napi::Env env, bool& ok) -> Napi::Value { return Napi::Boolean::New(env, ok); });
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
  exports.Set("checkKey", Napi::Function::New(env, checkKey));
  exports.Set("devSetup", Napi::Function::New(env, devSetupJs));
  exports.Set("verify", Napi::Function::New(env, verifyJs));
  exports.Set("devKeyName", Napi::String::New(env, DEV_KEY_NAME));
  exports.Set("testOps", createTestOps(env));
  return exports;
}

}  // namespace
}  // namespace zk

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return zk::init(env, exports); }

NODE_API_MODULE(zkprover, InitModule)
