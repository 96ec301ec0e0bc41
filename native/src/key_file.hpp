// Loading a zkey from its file without copying or re-checking it on every start: the zkey is mapped
// read-only and its coefficients are used where they lie; its query points, once validated, are
// kept in a prepared file beside it (`<zkey>.prep`: the points 64-byte aligned, in the prover's forms)
// that later loads map as well. The prepared file records the zkey's identity (device, inode, size,
// modification and status-change times in ns), so a key that was rewritten, replaced or touched in any
// way no longer matches it and is validated again in full. Writes go through a temporary name and a
// rename, so a reader never sees half a file; an unwritable directory only costs the cache.
#pragma once
#include <memory>
#include <string>

#include "formats.hpp"

namespace zk {

enum class PrepStatus {
  Reused,   // the prepared file matched the key: nothing but the header was checked
  Written,  // the key was validated in full and a prepared file written for the next load
  Unsaved,  // the key was validated in full; the prepared file could not be written (the key is used from memory)
};

struct LoadedKey {
  std::unique_ptr<ZKey> key;
  PrepStatus status;
  std::string prepPath;
};

// Maps and loads the zkey at path. Throws FormatError (ZkeyInvalid) for an invalid key, ProverError
// (FileUnreadable) when the file cannot be opened, examined or mapped.
LoadedKey loadZKeyFile(const std::string& path);

// The prepared file's name for a key.
std::string preparedPathOf(const std::string& zkeyPath);

const char* prepStatusName(PrepStatus s);

}  // namespace zk
