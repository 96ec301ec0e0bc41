// The prover's errors: every failure the addon reports carries a code (what kind of failure, for the
// caller to act on) and, where one part of an input is at fault, the section and index of that part
// (e.g. section "B2", index 17 for the 18th point of a zkey's B2 query). The addon turns them into JS
// errors with `code`, `section` and `index` properties (errorCodeName gives the code's string); callers
// map codes, never message text.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace zk {

enum class ErrorCode {
  ZkeyInvalid,         // a zkey that is malformed, or fails validation (sizes, ranges, curve, subgroup)
  WtnsInvalid,         // a .wtns that is malformed or holds a value not below the field modulus
  R1csInvalid,         // a .r1cs that is malformed
  FileUnreadable,      // a key file that cannot be opened, examined or mapped
  WitnessMismatch,     // a well-formed witness that does not belong to the key (count, constant 1)
  WitnessUnsatisfied,  // the witness does not satisfy the circuit: its proof failed the self-check
  KeyChanged,          // the key file was rewritten in place under a loaded key
  SetupFailed,         // the development setup could not complete
  BadArgument,         // a call with arguments of the wrong type
  OutOfMemory,         // an allocation failed
  Internal,            // anything else: a fault of the prover itself
  TestFault,           // raised on purpose by testOps.failInPool (tests of error delivery only)
};

// The code as JS sees it (src/prover/native-error.ts lists the same names).
inline const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::ZkeyInvalid: return "zkey_invalid";
    case ErrorCode::WtnsInvalid: return "wtns_invalid";
    case ErrorCode::R1csInvalid: return "r1cs_invalid";
    case ErrorCode::FileUnreadable: return "file_unreadable";
    case ErrorCode::WitnessMismatch: return "witness_mismatch";
    case ErrorCode::WitnessUnsatisfied: return "witness_unsatisfied";
    case ErrorCode::KeyChanged: return "key_changed";
    case ErrorCode::SetupFailed: return "setup_failed";
    case ErrorCode::BadArgument: return "bad_argument";
    case ErrorCode::OutOfMemory: return "out_of_memory";
    case ErrorCode::TestFault: return "test_fault";
    case ErrorCode::Internal: break;
  }
  return "internal";
}

class ProverError : public std::runtime_error {
 public:
  ProverError(ErrorCode code, const std::string& message, std::string section = "", int64_t index = -1)
      : std::runtime_error(message), code_(code), section_(std::move(section)), index_(index) {}
  ErrorCode code() const { return code_; }
  const std::string& section() const { return section_; }  // empty when no part is named
  int64_t index() const { return index_; }                 // -1 when no element is named

 private:
  ErrorCode code_;
  std::string section_;
  int64_t index_;
};

}  // namespace zk
