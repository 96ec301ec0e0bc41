// SPP note keys and spend binding: publicKey = H(sk, 0; 3), signature = H(sk, commitment, pathIndex; 4).
pragma circom 2.2.0;

include "poseidon2.circom";

template NotePublicKey() {
  signal input secretKey;
  signal output publicKey;
  component h = Poseidon2Hash(2, 3);
  h.in[0] <== secretKey;
  h.in[1] <== 0;
  publicKey <== h.out;
}

template NoteSignature() {
  signal input secretKey;
  signal input commitment;
  signal input pathIndex;
  signal output out;
  component h = Poseidon2Hash(3, 4);
  h.in[0] <== secretKey;
  h.in[1] <== commitment;
  h.in[2] <== pathIndex;
  out <== h.out;
}
