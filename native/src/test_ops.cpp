#include "test_ops.hpp"

#include <atomic>
#include <stdexcept>

#include "async.hpp"
#include "bigint.hpp"
#include "curve.hpp"
#include "fft.hpp"
#include "msm.hpp"
#include "thread_pool.hpp"

namespace zk {
namespace {

U256 parseInt(const Napi::Value& v) {
  if (!v.IsString()) throw Napi::TypeError::New(v.Env(), "expected a decimal string");
  std::string s = v.As<Napi::String>().Utf8Value();
  if (s.empty() || s.size() > 78 || s.find_first_not_of("0123456789") != std::string::npos)
    throw Napi::TypeError::New(v.Env(), "expected a decimal string");
  return decimalToLimbs(s.c_str());
}

template <class F>
F parseField(const Napi::Value& v) {
  U256 x = parseInt(v);
  F out;
  if (!F::fromNormalChecked(x.v, out)) throw Napi::RangeError::New(v.Env(), "field element out of range");
  return out;
}

template <class F>
std::string show(const F& x) {
  return limbsToDecimal(F::fromMont(x).v);
}

// (a + b)^3 through the unreduced forms (addLazy, then mulLazy twice, each fed the last): every
// unreduced value must stay below 2P, the bound that makes them safe operands.
template <class F>
F lazyCube(Napi::Env env, const F& a, const F& b) {
  uint64_t twoP[4];
  u128 c = 0;
  for (int i = 0; i < 4; i++) {
    c = ((u128)F::modulus()[i] << 1) + (uint64_t)c;
    twoP[i] = (uint64_t)c;
    c >>= 64;
  }
  auto check = [&](const F& x) {
    if (limbsGeq(x.v, twoP)) throw Napi::RangeError::New(env, "unreduced value not below 2P");
    return x;
  };
  const F s = check(F::addLazy(a, b));
  return check(F::mulLazy(check(F::mulLazy(s, s)), s));
}

template <class F>
Napi::Value fieldOp(const Napi::CallbackInfo& info) {
  std::string op = info[0].As<Napi::String>().Utf8Value();
  F a = parseField<F>(info[1]);
  F r;
  if (op == "neg") r = F::neg(a);
  else if (op == "sqr") r = F::sqr(a);
  else if (op == "inv") r = F::inv(a);
  else if (op == "invVartime") r = F::invVartime(a);
  else {
    F b = parseField<F>(info[2]);
    if (op == "add") r = F::add(a, b);
    else if (op == "sub") r = F::sub(a, b);
    else if (op == "mul") r = F::mul(a, b);
    else if (op == "lazy") r = lazyCube(info.Env(), a, b);
    else throw Napi::Error::New(info.Env(), "unknown op " + op);
  }
  return Napi::String::New(info.Env(), show(r));
}

// G1 points travel as [x, y] and G2 points as [[x0, x1], [y0, y1]]; [0, 0] is infinity.
Fq coordG1(const Napi::Value& v) { return parseField<Fq>(v); }
Fq2 coordG2(const Napi::Value& v) {
  Napi::Array a = v.As<Napi::Array>();
  return Fq2{parseField<Fq>(a.Get(0u)), parseField<Fq>(a.Get(1u))};
}
Napi::Value outCoord(Napi::Env env, const Fq& x) { return Napi::String::New(env, show(x)); }
Napi::Value outCoord(Napi::Env env, const Fq2& x) {
  Napi::Array a = Napi::Array::New(env, 2);
  a.Set(0u, show(x.c0));
  a.Set(1u, show(x.c1));
  return a;
}

template <class F, F (*coord)(const Napi::Value&), bool (*onCurve)(const Affine<F>&)>
struct PointIO {
  static Affine<F> in(const Napi::Value& v) {
    Napi::Array a = v.As<Napi::Array>();
    Affine<F> p{coord(a.Get(0u)), coord(a.Get(1u))};
    if (!onCurve(p)) throw Napi::RangeError::New(v.Env(), "point not on curve");
    return p;
  }
  static Napi::Value out(Napi::Env env, const XYZZ<F>& p) {
    Affine<F> a = p.toAffine();
    Napi::Array r = Napi::Array::New(env, 2);
    r.Set(0u, outCoord(env, a.x));
    r.Set(1u, outCoord(env, a.y));
    return r;
  }
};

typedef PointIO<Fq, coordG1, g1OnCurve> G1IO;
typedef PointIO<Fq2, coordG2, g2OnCurve> G2IO;

template <class F, class IO>
Napi::Value curveOp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string op = info[0].As<Napi::String>().Utf8Value();
  Affine<F> p = IO::in(info[1]);
  XYZZ<F> P = XYZZ<F>::fromAffine(p);
  if (op == "dbl") return IO::out(env, XYZZ<F>::dbl(P));
  if (op == "neg") return IO::out(env, P.negate());
  if (op == "mul") return IO::out(env, XYZZ<F>::mulScalar(P, parseInt(info[2]).v));
  Affine<F> q = IO::in(info[2]);
  if (op == "madd") {  // XYZZ + affine
    P.addAffine(q);
    return IO::out(env, P);
  }
  if (op == "add") {  // XYZZ + XYZZ, with the right operand made non-normalised by a round trip
    XYZZ<F> Q = XYZZ<F>::dbl(XYZZ<F>::fromAffine(q));
    Q.add(XYZZ<F>::fromAffine(q).negate());
    P.add(Q);
    return IO::out(env, P);
  }
  throw Napi::Error::New(env, "unknown op " + op);
}

template <class F, class IO>
Napi::Value msmOp(const Napi::CallbackInfo& info) {
  Napi::Array pts = info[0].As<Napi::Array>(), sc = info[1].As<Napi::Array>();
  if (pts.Length() != sc.Length()) throw Napi::Error::New(info.Env(), "length mismatch");
  std::vector<Affine<F>> bases(pts.Length());
  std::vector<uint64_t> scalars(4 * pts.Length());
  for (uint32_t i = 0; i < pts.Length(); i++) {
    bases[i] = IO::in(pts.Get(i));
    U256 k = parseInt(sc.Get(i));
    if (limbsGeq(k.v, FrParams::P)) throw Napi::RangeError::New(info.Env(), "scalar out of range");
    std::memcpy(&scalars[4 * i], k.v, 32);
  }
  // Optional third argument: "scalar" or "vector" picks the bucket path (default: the prover's choice).
  if (info.Length() > 2 && !info[2].IsString()) throw Napi::TypeError::New(info.Env(), "MSM path must be a string");
  std::string path = info.Length() > 2 ? info[2].As<Napi::String>().Utf8Value() : "auto";
  std::vector<uint64_t> bases52;
  if (path == "vector") {
    if (!avx512MsmEnabled()) throw Napi::Error::New(info.Env(), "the AVX-512 IFMA path is not available here");
    bases52 = toBases52(bases.data(), bases.size());
  } else if (path == "auto") {
    if (avx512MsmEnabled()) bases52 = toBases52(bases.data(), bases.size());
  } else if (path != "scalar") {
    throw Napi::Error::New(info.Env(), "unknown MSM path " + path);
  }
  ScalarView view{scalars.data(), bases.size()};
  return IO::out(info.Env(), msm(bases.data(), view, bases52.empty() ? nullptr : bases52.data()));
}

// Forward (or unscaled inverse) NTT of a power-of-two vector of Fr values.
Napi::Value fftOp(const Napi::CallbackInfo& info) {
  Napi::Array in = info[0].As<Napi::Array>();
  bool inverse = info[1].ToBoolean();
  size_t n = in.Length();
  if (n == 0 || (n & (n - 1))) throw Napi::Error::New(info.Env(), "length must be a power of two");
  std::vector<Fr> v(n);
  for (uint32_t i = 0; i < n; i++) v[i] = parseField<Fr>(in.Get(i));
  Domain d(__builtin_ctzll(n));
  if (inverse) d.ifftUnscaled(v.data());
  else d.fft(v.data());
  Napi::Array out = Napi::Array::New(info.Env(), n);
  for (uint32_t i = 0; i < n; i++) out.Set(i, show(v[i]));
  return out;
}

Napi::Value rootOp(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), show(rootOfUnity(info[0].As<Napi::Number>().Int32Value())));
}

Napi::Value generators(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("g1", G1IO::out(info.Env(), G1P::fromAffine(g1Generator())));
  o.Set("g2", G2IO::out(info.Env(), G2P::fromAffine(g2Generator())));
  return o;
}

}  // namespace

// failInPool(kind) -> Promise<number>: 8 pool tasks that each run 8 nested ones (parallelFor); with kind
// "coded", "plain" or "alloc" nested task 37 throws a ProverError (code test_fault, section "task", index
// 37), a std::runtime_error or a std::bad_alloc, which must come back as a rejection with a code while
// the process and the pool live on; "none" resolves to the number of nested tasks run (64).
Napi::Value failInPool(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw badArgument(env, "failInPool: kind must be a string");
  const std::string kind = info[0].As<Napi::String>().Utf8Value();
  if (kind != "none" && kind != "coded" && kind != "plain" && kind != "alloc")
    throw badArgument(env, "failInPool: unknown kind " + kind);
  return runAsync<double>(
      env,
      [kind] {
        std::atomic<int> ran{0};
        TaskGroup group;
        for (int outer = 0; outer < 8; outer++) {
          group.run([&, outer] {
            ThreadPool::instance().parallelFor(8, [&, outer](size_t inner) {
              const int id = outer * 8 + (int)inner;
              Fr x = Fr::fromU64((uint64_t)id + 2);
              for (int k = 0; k < 2000; k++) x = Fr::mul(x, x);  // some work, so tasks overlap
              if (id == 37 && !x.isZero()) {
                if (kind == "coded") throw ProverError(ErrorCode::TestFault, "task 37 failed on purpose", "task", 37);
                if (kind == "plain") throw std::runtime_error("task 37 failed on purpose");
                if (kind == "alloc") throw std::bad_alloc();
              }
              ran++;
            });
          });
        }
        group.wait();
        return (double)ran.load();
      },
      [](Napi::Env env, double& n) -> Napi::Value { return Napi::Number::New(env, n); });
}

Napi::Object createTestOps(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("fq", Napi::Function::New(env, fieldOp<Fq>));
  o.Set("fr", Napi::Function::New(env, fieldOp<Fr>));
  o.Set("g1", Napi::Function::New(env, curveOp<Fq, G1IO>));
  o.Set("g2", Napi::Function::New(env, curveOp<Fq2, G2IO>));
  o.Set("g1Msm", Napi::Function::New(env, msmOp<Fq, G1IO>));
  o.Set("g2Msm", Napi::Function::New(env, msmOp<Fq2, G2IO>));
  o.Set("avx512", Napi::Boolean::New(env, avx512MsmEnabled()));
  o.Set("fft", Napi::Function::New(env, fftOp));
  o.Set("rootOfUnity", Napi::Function::New(env, rootOp));
  o.Set("generators", Napi::Function::New(env, generators));
  o.Set("failInPool", Napi::Function::New(env, failInPool));
  return o;
}

}  // namespace zk
