// Reader for the iden3 binary container shared by .zkey, .wtns and .r1cs: a 4-byte magic, a u32
// version and a table of (u32 id, u64 size) sections. Sections are looked up by id, never by
// position, and every read is bounds-checked so truncated or corrupt files give a clear error.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "errors.hpp"

namespace zk {

// A malformed or invalid input file: code ZkeyInvalid, WtnsInvalid or R1csInvalid.
struct FormatError : ProverError {
  FormatError(ErrorCode code, const std::string& m, std::string section = "", int64_t index = -1)
      : ProverError(code, m, std::move(section), index) {}
};

// The error code for a file of this container magic ("zkey", "wtns", "r1cs").
inline ErrorCode formatErrorCode(const char* magic) {
  if (std::strcmp(magic, "wtns") == 0) return ErrorCode::WtnsInvalid;
  if (std::strcmp(magic, "r1cs") == 0) return ErrorCode::R1csInvalid;
  return ErrorCode::ZkeyInvalid;
}

class ByteReader {
 public:
  ByteReader(const uint8_t* p, size_t n, std::string what, ErrorCode code)
      : p_(p), n_(n), what_(std::move(what)), code_(code) {}
  void need(size_t k) const {
    if (k > n_ - pos_) throw FormatError(code_, what_ + ": unexpected end of data (truncated or corrupt)");
  }
  uint32_t u32() {
    need(4);
    uint32_t v;
    std::memcpy(&v, p_ + pos_, 4);
    pos_ += 4;
    return v;
  }
  uint64_t u64() {
    need(8);
    uint64_t v;
    std::memcpy(&v, p_ + pos_, 8);
    pos_ += 8;
    return v;
  }
  const uint8_t* bytes(size_t k) {
    need(k);
    const uint8_t* r = p_ + pos_;
    pos_ += k;
    return r;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return n_ - pos_; }
  ErrorCode code() const { return code_; }

 private:
  const uint8_t* p_;
  size_t n_, pos_ = 0;
  std::string what_;
  ErrorCode code_;
};

struct Section {
  const uint8_t* data;
  size_t size;
};

class BinFile {
 public:
  BinFile(const uint8_t* data, size_t size, const char* magic, uint32_t maxVersion, const std::string& what)
      : what_(what), code_(formatErrorCode(magic)) {
    ByteReader r(data, size, what, code_);
    if (size < 12 || std::memcmp(data, magic, 4) != 0)
      throw FormatError(code_, what + ": not a ." + std::string(magic) + " file (bad magic)", "magic");
    r.bytes(4);
    version_ = r.u32();
    if (version_ == 0 || version_ > maxVersion)
      throw FormatError(code_, what + ": unsupported version " + std::to_string(version_), "version");
    uint32_t nSections = r.u32();
    for (uint32_t i = 0; i < nSections; i++) {
      uint32_t id = r.u32();
      uint64_t len = r.u64();
      if (len > r.remaining())
        throw FormatError(code_, what + ": section " + std::to_string(id) + " is truncated", "section " + std::to_string(id));
      sections_[id].push_back(Section{r.bytes((size_t)len), (size_t)len});
    }
  }
  bool has(uint32_t id) const { return sections_.count(id) != 0; }
  Section section(uint32_t id) const {
    auto it = sections_.find(id);
    if (it == sections_.end())
      throw FormatError(code_, what_ + ": missing section " + std::to_string(id), "section " + std::to_string(id));
    if (it->second.size() != 1)
      throw FormatError(code_, what_ + ": duplicated section " + std::to_string(id), "section " + std::to_string(id));
    return it->second[0];
  }
  ByteReader reader(uint32_t id) const {
    Section s = section(id);
    return ByteReader(s.data, s.size, what_ + " section " + std::to_string(id), code_);
  }
  uint32_t version() const { return version_; }

 private:
  std::string what_;
  ErrorCode code_;
  uint32_t version_ = 0;
  std::map<uint32_t, std::vector<Section>> sections_;
};

// Appends sections to a growing buffer in the same container format.
class BinWriter {
 public:
  BinWriter(const char* magic, uint32_t version, uint32_t nSections) {
    buf_.insert(buf_.end(), magic, magic + 4);
    u32(version);
    u32(nSections);
  }
  void startSection(uint32_t id) {
    u32(id);
    sizePos_ = buf_.size();
    u64(0);
  }
  void endSection() {
    uint64_t len = buf_.size() - sizePos_ - 8;
    std::memcpy(buf_.data() + sizePos_, &len, 8);
  }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void raw(const void* p, size_t n) {
    const uint8_t* b = (const uint8_t*)p;
    buf_.insert(buf_.end(), b, b + n);
  }
  std::vector<uint8_t>& buffer() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
  size_t sizePos_ = 0;
};

}  // namespace zk
