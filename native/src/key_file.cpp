// Mapped zkeys and their prepared files (key_file.hpp): the file identity, the prepared file's header and
// layout, reuse, and the atomic write.
#include "key_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

#include "errors.hpp"
#include "msm_avx512.hpp"

namespace zk {

namespace {

// A whole file mapped read-only; unmapped when the last key using it goes.
class MappedFile {
 public:
  MappedFile(const std::string& path, struct stat& st) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw ProverError(ErrorCode::FileUnreadable, "cannot open " + path + ": " + std::strerror(errno));
    if (::fstat(fd, &st) != 0) {
      int e = errno;
      ::close(fd);
      throw ProverError(ErrorCode::FileUnreadable, "cannot stat " + path + ": " + std::strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw ProverError(ErrorCode::FileUnreadable, path + " is not a regular file");
    }
    size_ = (size_t)st.st_size;
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        int e = errno;
        ::close(fd);
        throw ProverError(ErrorCode::FileUnreadable, "cannot map " + path + ": " + std::strerror(e));
      }
      data_ = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// What identifies one version of a file: any write, replacement or metadata change alters it (the
// status-change time cannot be set back by a user, unlike the modification time).
struct FileIdentity {
  uint64_t dev, ino, size;
  int64_t mtimeSec, mtimeNsec, ctimeSec, ctimeNsec;
};

FileIdentity identityOf(const struct stat& st) {
#if defined(__APPLE__)
  return FileIdentity{(uint64_t)st.st_dev,          (uint64_t)st.st_ino,          (uint64_t)st.st_size,
                      (int64_t)st.st_mtimespec.tv_sec, (int64_t)st.st_mtimespec.tv_nsec,
                      (int64_t)st.st_ctimespec.tv_sec, (int64_t)st.st_ctimespec.tv_nsec};
#else
  return FileIdentity{(uint64_t)st.st_dev,     (uint64_t)st.st_ino,      (uint64_t)st.st_size,
                      (int64_t)st.st_mtim.tv_sec, (int64_t)st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec,
                      (int64_t)st.st_ctim.tv_nsec};
#endif
}

constexpr char kMagic[8] = {'z', 'k', 'p', 'r', 'e', 'p', 0, 0};
constexpr uint32_t kVersion = 2;
constexpr uint32_t kHas52 = 1;
constexpr size_t kDataStart = 4096, kAlign = 64;
enum { kA, kB1, kB2, kC, kH, kA52, kB1_52, kB2_52, kC52, kH52, kParts };

// The prepared file: this header, then the parts at 64-byte aligned offsets.
struct PrepHeader {
  char magic[8];
  uint32_t version, flags;
  FileIdentity key;
  uint32_t nVars, nPublic, domainSize, nCoefs;
  uint64_t fileSize;
  uint64_t off[kParts], len[kParts];  // bytes; len 0 = absent
  uint64_t check;                     // FNV-1a of the bytes above
};
static_assert(sizeof(PrepHeader) < kDataStart, "prepared header too large");

uint64_t fnv1a(const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

bool sameIdentity(const FileIdentity& a, const FileIdentity& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class T>
Span<T> partOf(const MappedFile& m, const PrepHeader& h, int part, size_t count) {
  return Span<T>{reinterpret_cast<const T*>(m.data() + h.off[part]), count};
}

// Uses the prepared file if it belongs to exactly this version of the key; false if it does not.
bool reusePrepared(const std::string& prepPath, const FileIdentity& keyId, ZKey& z, bool wantVector) {
  struct stat st;
  std::shared_ptr<MappedFile> m;
  try {
    m = std::make_shared<MappedFile>(prepPath, st);
  } catch (const std::exception&) {
    return false;
  }
  if (m->size() < kDataStart) return false;
  PrepHeader h;
  std::memcpy(&h, m->data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
      h.check != fnv1a(&h, offsetof(PrepHeader, check)) || h.fileSize != m->size() ||
      !sameIdentity(h.key, keyId) || h.nVars != z.nVars || h.nPublic != z.nPublic ||
      h.domainSize != z.domainSize || h.nCoefs != z.nCoefs)
    return false;
  const bool has52 = (h.flags & kHas52) != 0;
  if (wantVector && !has52) return false;
  const size_t nC = (size_t)z.nVars - z.nPublic - 1;
  const size_t counts[kParts] = {z.nVars, z.nVars, z.nVars, nC, z.domainSize,
                                 z.nVars, z.nVars, z.nVars, nC, z.domainSize};
  for (int p = 0; p < kParts; p++) {
    const bool is52 = p >= kA52;
    if (is52 && !has52) continue;
    const size_t perPoint = (p == kB2 || p == kB2_52) ? 128 : 64;  // both forms: 32 bytes per Fq
    if (h.len[p] != counts[p] * perPoint || h.off[p] % kAlign != 0 || h.off[p] < kDataStart ||
        h.off[p] > m->size() || h.len[p] > m->size() - h.off[p])
      return false;
  }
  z.A = partOf<G1A>(*m, h, kA, counts[kA]);
  z.B1 = partOf<G1A>(*m, h, kB1, counts[kB1]);
  z.B2 = partOf<G2A>(*m, h, kB2, counts[kB2]);
  z.C = partOf<G1A>(*m, h, kC, counts[kC]);
  z.H = partOf<G1A>(*m, h, kH, counts[kH]);
  if (wantVector) {
    z.A52 = partOf<uint64_t>(*m, h, kA52, h.len[kA52] / 8);
    z.B1_52 = partOf<uint64_t>(*m, h, kB1_52, h.len[kB1_52] / 8);
    z.B2_52 = partOf<uint64_t>(*m, h, kB2_52, h.len[kB2_52] / 8);
    z.C52 = partOf<uint64_t>(*m, h, kC52, h.len[kC52] / 8);
    z.H52 = partOf<uint64_t>(*m, h, kH52, h.len[kH52] / 8);
  }
  z.storage.push_back(m);
  return true;
}

bool writeAll(int fd, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    b += w;
    n -= (size_t)w;
  }
  return true;
}

// Writes the prepared file for a validated key (z's parts are its owned copies) through a temporary
// name, synced before the rename. The 52-bit parts are written whenever this CPU could use them, so
// processes with and without ZKPROVER_NO_AVX512 share one file. Returns false if it could not.
bool writePrepared(const std::string& prepPath, const FileIdentity& keyId, const ZKey& z) {
  std::vector<uint64_t> a52, b1_52, b2_52, c52, h52;
  const bool with52 = avx512MsmSupported();
  if (with52) {
    auto conv = [](const auto& have, const auto& pts, std::vector<uint64_t>& out) {
      if (!have.empty())
        out.assign(have.data(), have.data() + have.size());
      else
        out = toBases52(pts.data(), pts.size());
    };
    conv(z.A52, z.A, a52);
    conv(z.B1_52, z.B1, b1_52);
    conv(z.B2_52, z.B2, b2_52);
    conv(z.C52, z.C, c52);
    conv(z.H52, z.H, h52);
  }
  const void* parts[kParts] = {z.A.data(), z.B1.data(), z.B2.data(), z.C.data(), z.H.data(),
                               a52.data(), b1_52.data(), b2_52.data(), c52.data(), h52.data()};
  PrepHeader h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.flags = with52 ? kHas52 : 0;
  h.key = keyId;
  h.nVars = z.nVars;
  h.nPublic = z.nPublic;
  h.domainSize = z.domainSize;
  h.nCoefs = z.nCoefs;
  h.len[kA] = z.A.size() * sizeof(G1A);
  h.len[kB1] = z.B1.size() * sizeof(G1A);
  h.len[kB2] = z.B2.size() * sizeof(G2A);
  h.len[kC] = z.C.size() * sizeof(G1A);
  h.len[kH] = z.H.size() * sizeof(G1A);
  h.len[kA52] = a52.size() * 8;
  h.len[kB1_52] = b1_52.size() * 8;
  h.len[kB2_52] = b2_52.size() * 8;
  h.len[kC52] = c52.size() * 8;
  h.len[kH52] = h52.size() * 8;
  uint64_t pos = kDataStart;
  for (int p = 0; p < kParts; p++) {
    h.off[p] = h.len[p] ? pos : 0;
    pos = (pos + h.len[p] + kAlign - 1) / kAlign * kAlign;
  }
  h.fileSize = pos;
  h.check = fnv1a(&h, offsetof(PrepHeader, check));

  std::random_device rd;
  const std::string tmp = prepPath + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = true;
  std::vector<uint8_t> pad(kDataStart, 0);
  std::vector<uint8_t> head(kDataStart, 0);
  std::memcpy(head.data(), &h, sizeof h);
  ok = writeAll(fd, head.data(), head.size());
  uint64_t at = kDataStart;
  for (int p = 0; ok && p < kParts; p++) {
    if (h.len[p] == 0) continue;
    ok = writeAll(fd, pad.data(), h.off[p] - at) && writeAll(fd, parts[p], h.len[p]);
    at = h.off[p] + h.len[p];
  }
  ok = ok && writeAll(fd, pad.data(), h.fileSize - at) && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (ok) ok = ::rename(tmp.c_str(), prepPath.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

}  // namespace

std::string preparedPathOf(const std::string& zkeyPath) { return zkeyPath + ".prep"; }

const char* prepStatusName(PrepStatus s) {
  switch (s) {
    case PrepStatus::Reused:
      return "reused";
    case PrepStatus::Written:
      return "written";
    default:
      return "unsaved";
  }
}

LoadedKey loadZKeyFile(const std::string& path) {
  struct stat st;
  auto file = std::make_shared<MappedFile>(path, st);
  const FileIdentity id = identityOf(st);
  ZKeyLayout layout = readZKeyLayout(file->data(), file->size());
  ZKey& z = *layout.key;
  z.storage.push_back(file);  // the coefficients are used in place
  const bool vec = avx512MsmEnabled();
  LoadedKey out{nullptr, PrepStatus::Reused, preparedPathOf(path)};
  if (!reusePrepared(out.prepPath, id, z, vec)) {
    validateZKeyBody(layout, vec);
    out.status = writePrepared(out.prepPath, id, z) ? PrepStatus::Written : PrepStatus::Unsaved;
    if (out.status == PrepStatus::Written) {
      // Serve this load from the file just written too (its pages are shared with the page cache),
      // and let the validated copies go.
      auto fresh = std::make_unique<ZKey>();
      ZKey& f = *fresh;
      f.nVars = z.nVars, f.nPublic = z.nPublic, f.domainSize = z.domainSize, f.log2Domain = z.log2Domain;
      f.alpha1 = z.alpha1, f.beta1 = z.beta1, f.delta1 = z.delta1;
      f.beta2 = z.beta2, f.gamma2 = z.gamma2, f.delta2 = z.delta2;
      f.IC = z.IC;
      f.coefs = z.coefs, f.nCoefs = z.nCoefs;
      f.storage.push_back(file);
      if (reusePrepared(out.prepPath, id, f, vec)) layout.key = std::move(fresh);
    }
  }
  out.key = std::move(layout.key);
  return out;
}

}  // namespace zk
