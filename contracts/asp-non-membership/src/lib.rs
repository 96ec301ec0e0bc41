//! ASP non-membership (blocklist): a sparse Merkle tree of (note public key → value) kept node by node in
//! contract storage, in circomlib's canonical form with Poseidon2: leaf = hash([key, value], 1) (t = 3),
//! node = compress(left, right), empty = 0, key bits least significant first, each leaf at the shallowest depth
//! where its key's prefix is unique (so the tree is a function of its key set, and a delete collapses a leaf
//! left alone in its subtree up to where its prefix becomes unique again). The empty tree's root is 0.
//!
//! Storage (persistent): `Root`, and one `Node(position)` per non-empty node, where position = 2^depth + the
//! key's low `depth` bits (a heap numbering: 1 is the root, 2p and 2p + 1 … are its children by bit). A node is
//! `Leaf(key, value)` or `Branch(left hash, right hash)`; empty nodes are absent. A lookup reads the nodes on
//! the key's path (about log2(n) of them); an insert or delete rewrites that path.
#![no_std]

use pool_common::field::{bit, is_canonical, u256_bytes};
use pool_common::ttl::{extend_instance, extend_persistent};
use pool_common::Poseidon2;
use soroban_sdk::{
    contract, contracterror, contractevent, contractimpl, contracttype, Address, Env, Vec, U256,
};

/// NotAuthorized is kept for the code's sake (a missing authorisation fails in the host). Each case's doc is
/// its name, as in the sandbox's published spec (typed clients report an error by it).
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// NotAuthorized
    NotAuthorized = 1,
    /// KeyExists
    KeyExists = 2,
    /// KeyNotFound
    KeyNotFound = 3,
    /// NonCanonical
    NonCanonical = 13,
}

/// Instance: Admin. Persistent: Root, Node(position).
#[contracttype]
#[derive(Clone)]
pub enum DataKey {
    Admin,
    Root,
    Node(U256),
}

/// A stored tree node.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum SmtNode {
    /// (key, value); its hash is hash([key, value], 1).
    Leaf(U256, U256),
    /// (left child's hash, right child's hash), 0 for an empty child; its hash is compress(left, right).
    Branch(U256, U256),
}

/// What `find_key` answers (the fields of src/crypto/sparse-merkle-tree.ts's SmtFindResult).
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct FindResult {
    pub found: bool,
    pub found_value: U256,
    /// Not found, and the key's path ends on an empty node (rather than on another key's leaf).
    pub is_old0: bool,
    /// Not found: the leaf on the key's path (key, value), or (key, 0) when it ends on an empty node.
    pub not_found_key: U256,
    pub not_found_value: U256,
    /// Siblings from the root down, as long as the path to the node that answers.
    pub siblings: Vec<U256>,
}

#[contractevent(topics = ["LeafInserted"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct LeafInserted {
    pub key: U256,
    pub root: U256,
    pub value: U256,
}

#[contractevent(topics = ["LeafDeleted"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct LeafDeleted {
    pub key: U256,
    pub root: U256,
}

/// Leaf domain of the tree's hash.
const LEAF_DOMAIN: u32 = 1;

/// The storage key of the node at `depth` on the path of the key whose big-endian bytes are `key`.
fn node_key(env: &Env, key: &[u8; 32], depth: u32) -> DataKey {
    debug_assert!(depth < 256);
    let mut p = [0u8; 32];
    let full = (depth / 8) as usize;
    let rest = depth % 8;
    p[32 - full..].copy_from_slice(&key[32 - full..]);
    let byte = 31 - full;
    p[byte] = (key[byte] & ((1u8 << rest) - 1)) | (1u8 << rest);
    let limb = |i: usize| u64::from_be_bytes(p[i * 8..i * 8 + 8].try_into().unwrap());
    DataKey::Node(U256::from_parts(env, limb(0), limb(1), limb(2), limb(3)))
}

/// The node at the same depth on the other side of the last branch (key bit `depth − 1` flipped).
fn sibling_node_key(env: &Env, key: &[u8; 32], depth: u32) -> DataKey {
    let mut other = *key;
    let b = depth - 1;
    other[31 - (b / 8) as usize] ^= 1 << (b % 8);
    node_key(env, &other, depth)
}

/// Where a key's path ends.
enum End {
    Empty,
    Leaf(U256, U256),
}

/// The key's path from the root: the siblings passed and the node that ends it, at depth `siblings.len()`.
struct Path {
    siblings: Vec<U256>,
    end: End,
}

impl Path {
    fn depth(&self) -> u32 {
        self.siblings.len()
    }
}

fn walk(env: &Env, key: &[u8; 32]) -> Path {
    let store = env.storage().persistent();
    let mut siblings = Vec::new(env);
    loop {
        match store.get::<_, SmtNode>(&node_key(env, key, siblings.len())) {
            None => return Path { siblings, end: End::Empty },
            Some(SmtNode::Leaf(k, v)) => return Path { siblings, end: End::Leaf(k, v) },
            Some(SmtNode::Branch(left, right)) => {
                siblings.push_back(if bit(key, siblings.len()) { left } else { right });
            }
        }
    }
}

struct Tree<'a> {
    env: &'a Env,
    hasher: Poseidon2,
}

impl Tree<'_> {
    fn set(&self, key: DataKey, node: &SmtNode) {
        self.env.storage().persistent().set(&key, node);
        extend_persistent(self.env, &key);
    }

    fn remove(&self, key: DataKey) {
        self.env.storage().persistent().remove(&key);
    }

    fn leaf_hash(&self, key: &U256, value: &U256) -> U256 {
        self.hasher.hash2(key, value, LEAF_DOMAIN)
    }

    /// Writes the branch at `depth` on the path whose child on the path hashes to `node` (the other child is
    /// `sibling`) and returns the branch's hash.
    fn branch(&self, key: &[u8; 32], depth: u32, node: U256, sibling: U256) -> U256 {
        let (left, right) = if bit(key, depth) { (sibling, node) } else { (node, sibling) };
        let hash = self.hasher.compress(&left, &right);
        self.set(node_key(self.env, key, depth), &SmtNode::Branch(left, right));
        hash
    }

    /// Rewrites the branches from `depth − 1` up to the root with the path's siblings; returns the new root.
    fn rehash_up(&self, key: &[u8; 32], siblings: &Vec<U256>, depth: u32, mut node: U256) -> U256 {
        for d in (0..depth).rev() {
            node = self.branch(key, d, node, siblings.get_unchecked(d));
        }
        node
    }

    fn insert(&self, key: &U256, value: &U256) -> Result<U256, Error> {
        let env = self.env;
        let kb = u256_bytes(key);
        let path = walk(env, &kb);
        let depth = path.depth();
        let node = match &path.end {
            End::Empty => {
                self.set(node_key(env, &kb, depth), &SmtNode::Leaf(key.clone(), value.clone()));
                self.leaf_hash(key, value)
            }
            End::Leaf(old_key, _) if old_key == key => return Err(Error::KeyExists),
            End::Leaf(old_key, old_value) => {
                // both leaves go below the first bit where the keys differ; single-child branches above it
                let ob = u256_bytes(old_key);
                let mut split = depth;
                while bit(&kb, split) == bit(&ob, split) {
                    split += 1;
                }
                self.set(node_key(env, &kb, split + 1), &SmtNode::Leaf(key.clone(), value.clone()));
                self.set(node_key(env, &ob, split + 1), &SmtNode::Leaf(old_key.clone(), old_value.clone()));
                let new_leaf = self.leaf_hash(key, value);
                let old_leaf = self.leaf_hash(old_key, old_value);
                let mut node = self.branch(&kb, split, new_leaf, old_leaf);
                for d in (depth..split).rev() {
                    node = self.branch(&kb, d, node, U256::from_u32(env, 0));
                }
                node
            }
        };
        Ok(self.rehash_up(&kb, &path.siblings, depth, node))
    }

    fn delete(&self, key: &U256) -> Result<U256, Error> {
        let env = self.env;
        let kb = u256_bytes(key);
        let path = walk(env, &kb);
        match &path.end {
            End::Leaf(k, _) if k == key => {}
            _ => return Err(Error::KeyNotFound),
        }
        let depth = path.depth();
        self.remove(node_key(env, &kb, depth));
        if depth == 0 {
            return Ok(U256::from_u32(env, 0));
        }
        let sibling_key = sibling_node_key(env, &kb, depth);
        let sibling = env.storage().persistent().get::<_, SmtNode>(&sibling_key);
        let (top, node) = match sibling {
            Some(SmtNode::Leaf(other_key, other_value)) => {
                // the sibling leaf is now alone in its subtree: it rises past the empty siblings above it
                let zero = U256::from_u32(env, 0);
                let mut top = depth - 1;
                while top > 0 && path.siblings.get_unchecked(top - 1) == zero {
                    top -= 1;
                }
                self.remove(sibling_key);
                for d in top + 1..depth {
                    self.remove(node_key(env, &kb, d));
                }
                let hash = self.leaf_hash(&other_key, &other_value);
                self.set(node_key(env, &kb, top), &SmtNode::Leaf(other_key, other_value));
                (top, hash)
            }
            // a subtree of two or more leaves stays where it is; the deleted leaf's place becomes empty
            _ => (depth, U256::from_u32(env, 0)),
        };
        Ok(self.rehash_up(&kb, &path.siblings, top, node))
    }
}

fn admin(env: &Env) -> Address {
    env.storage().instance().get(&DataKey::Admin).unwrap()
}

fn root(env: &Env) -> U256 {
    env.storage().persistent().get(&DataKey::Root).unwrap()
}

fn set_root(env: &Env, root: &U256) {
    env.storage().persistent().set(&DataKey::Root, root);
    extend_persistent(env, &DataKey::Root);
}

fn field(hasher: &Poseidon2, x: &U256) -> Result<(), Error> {
    if is_canonical(x, hasher.modulus()) {
        Ok(())
    } else {
        Err(Error::NonCanonical)
    }
}

fn insert(env: Env, key: U256, value: U256) -> Result<(), Error> {
    let tree = Tree { env: &env, hasher: Poseidon2::new(&env) };
    field(&tree.hasher, &key)?;
    field(&tree.hasher, &value)?;
    admin(&env).require_auth();
    extend_instance(&env);
    let root = tree.insert(&key, &value)?;
    set_root(&env, &root);
    LeafInserted { key, root, value }.publish(&env);
    Ok(())
}

fn delete(env: Env, key: U256) -> Result<(), Error> {
    let tree = Tree { env: &env, hasher: Poseidon2::new(&env) };
    field(&tree.hasher, &key)?;
    admin(&env).require_auth();
    extend_instance(&env);
    let root = tree.delete(&key)?;
    set_root(&env, &root);
    LeafDeleted { key, root }.publish(&env);
    Ok(())
}

#[contract]
pub struct AspNonMembership;

#[contractimpl]
impl AspNonMembership {
    pub fn __constructor(env: Env, admin: Address) {
        env.storage().instance().set(&DataKey::Admin, &admin);
        extend_instance(&env);
        set_root(&env, &U256::from_u32(&env, 0));
    }

    /// The live root. The pool reads it on every transaction, so it keeps this contract's instance and root
    /// entry live.
    pub fn get_root(env: Env) -> U256 {
        extend_instance(&env);
        extend_persistent(&env, &DataKey::Root);
        root(&env)
    }

    pub fn get_admin(env: Env) -> Address {
        admin(&env)
    }

    /// Admin: adds `key` (KeyExists if present) with `value`; both field elements (NonCanonical).
    pub fn insert_leaf(env: Env, key: U256, value: U256) -> Result<(), Error> {
        insert(env, key, value)
    }

    /// The same as `insert_leaf`.
    pub fn insert(env: Env, key: U256, value: U256) -> Result<(), Error> {
        insert(env, key, value)
    }

    /// Admin: removes `key` (KeyNotFound if absent), collapsing the tree to its canonical form.
    pub fn delete_leaf(env: Env, key: U256) -> Result<(), Error> {
        delete(env, key)
    }

    /// The same as `delete_leaf`.
    pub fn delete(env: Env, key: U256) -> Result<(), Error> {
        delete(env, key)
    }

    /// The key's path in the current tree: found with its value, or the leaf or empty node where it would be.
    pub fn find_key(env: Env, key: U256) -> Result<FindResult, Error> {
        field(&Poseidon2::new(&env), &key)?;
        let path = walk(&env, &u256_bytes(&key));
        let zero = U256::from_u32(&env, 0);
        Ok(match path.end {
            End::Empty => FindResult {
                found: false,
                found_value: zero.clone(),
                is_old0: true,
                not_found_key: key,
                not_found_value: zero,
                siblings: path.siblings,
            },
            End::Leaf(k, v) if k == key => FindResult {
                found: true,
                found_value: v,
                is_old0: false,
                not_found_key: zero.clone(),
                not_found_value: zero,
                siblings: path.siblings,
            },
            End::Leaf(k, v) => FindResult {
                found: false,
                found_value: zero,
                is_old0: false,
                not_found_key: k,
                not_found_value: v,
                siblings: path.siblings,
            },
        })
    }

    /// Checks a non-membership proof of `key` against the current root, as the circuit does: the path ends on
    /// an empty node (reported as not_found_key = key, as `find_key` does, or as (0, 0), as circuit inputs
    /// are) or on another key's leaf sharing the key's bits down to it. Trailing zero siblings are padding.
    pub fn verify_non_membership(
        env: Env,
        key: U256,
        siblings: Vec<U256>,
        not_found_key: U256,
        not_found_value: U256,
    ) -> Result<bool, Error> {
        let hasher = Poseidon2::new(&env);
        field(&hasher, &key)?;
        for s in siblings.iter() {
            field(&hasher, &s)?;
        }
        field(&hasher, &not_found_key)?;
        field(&hasher, &not_found_value)?;
        let zero = U256::from_u32(&env, 0);
        let is_old0 = not_found_key == key || (not_found_key == zero && not_found_value == zero);
        let mut depth = siblings.len();
        while depth > 0 && siblings.get_unchecked(depth - 1) == zero {
            depth -= 1;
        }
        let kb = u256_bytes(&key);
        let mut node = if is_old0 {
            zero
        } else {
            let ob = u256_bytes(&not_found_key);
            if (0..depth).any(|d| bit(&ob, d) != bit(&kb, d)) {
                return Ok(false);
            }
            hasher.hash2(&not_found_key, &not_found_value, LEAF_DOMAIN)
        };
        for d in (0..depth).rev() {
            let s = siblings.get_unchecked(d);
            node = if bit(&kb, d) { hasher.compress(&s, &node) } else { hasher.compress(&node, &s) };
        }
        Ok(node == root(&env))
    }
}

#[cfg(test)]
mod test;
