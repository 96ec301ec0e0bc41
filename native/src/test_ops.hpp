// Synchronous wrappers of the field, curve, MSM and FFT primitives, exported as `testOps` solely so
// the test suite can check them against an independent implementation (@noble/curves).
#pragma once
#include <napi.h>

namespace zk {
Napi::Object createTestOps(Napi::Env env);
}
