// Groth16 prover over a parsed zkey and witness: the algorithm of snarkjs's src/groth16_prove.js and of
// rapidsnark (H evaluated on the odd coset of the domain, then five MSMs).
#pragma once
#include "formats.hpp"

namespace zk {

struct Proof {
  G1A A;
  G2A B;
  G1A C;
};

// Validates that the witness belongs to this key, then proves. Throws ProverError (WitnessMismatch,
// KeyChanged) on bad input. Its scratch memory comes from the current arena (withWorkingMemory), else
// from the heap.
Proof prove(const ZKey& key, const Witness& w);

// Readies a loaded key for proving so that its first proof runs as fast as the later ones: gives it its
// working memory (key.work: arenas pre-faulted to the size a proof of this key is estimated to need, on
// transparent huge pages where offered), builds the FFT tables of its domain, and maps and reads once the
// parts of the key that the proof reads (they are in the page cache: no disk read, only the page table
// entries and first reads a first proof would otherwise pay for).
void prepareProver(ZKey& key);

// The working memory prepareProver sets up: what one proof of this key is expected to take.
size_t workingMemoryEstimate(const ZKey& key);

// Runs fn() with one of the key's arenas as the current arena (so the witness parsed and the proof
// computed inside it use the kept working memory), or on the heap when the key has none.
template <class Fn>
auto withWorkingMemory(const ZKey& key, Fn&& fn) -> decltype(fn()) {
  if (!key.work) return fn();
  ArenaPool::Lease lease = key.work->acquire();
  ArenaScope scope(lease.get());
  return fn();
}

}  // namespace zk
